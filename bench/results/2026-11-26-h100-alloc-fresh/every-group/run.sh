#!/usr/bin/env bash
# Call J: heap allocation that takes a fresh block after one lost claim
# (working tree = branch alloc-fresh-after-loss) against main (.calib/src-main):
# soa_bench scalability, utilisation, ablation interleaved, two rounds; five
# examples interleaved, two rounds; the branch's heap tests and racecheck/
# memcheck on soa_test.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
ex="wator_dynasoar gol_dynasoar nbody_dynasoar barnes_hut_dynasoar soa_bench"
( cmake -S .calib/src-main -B build-main $cfg > $OUT/b/main-configure.log 2>&1 && timeout 300 cmake --build build-main -j6 --target $ex > $OUT/b/main-build.log 2>&1; echo "main build exit $? at $((SECONDS - t0)) s" ) &
cmake -S . -B build-new $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
timeout 300 cmake --build build-new -j10 --target $ex soa_test api_test soa_stress_test backend_test errors_test > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS or timeout:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "new built at $((SECONDS - t0)) s"
wait
L=build-new
for t in soa_test api_test soa_stress_test backend_test errors_test; do
  timeout 100 $L/test/$t > $OUT/b/$t.txt 2>&1; echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/$t.txt | tr '\n' ' ')"
done
for round in 1 2; do
  for b in main new; do
    timeout 100 build-$b/bench/soa_bench --quick --only scalability --only utilisation --only ablation --csv $OUT/b/soa-$b-$round.csv > /dev/null 2>&1; echo "soa_bench $b $round: exit $?"
  done
done
for f in $OUT/b/soa-*.csv; do echo "== ${f##*/}"; grep -E "^(alloc|free),dynasoar" $f | cut -d, -f1,3,4,5 | tr '\n' ' '; echo; grep -E "^(utilisation|ablation)" $f | cut -d, -f1-5,8 | tr '\n' ' '; echo; done
for round in 1 2; do
  for b in main new; do
    build-$b/example/wator_dynasoar --width 2048 --height 2560 --steps 500 --json > $OUT/b/wator-$b-$round.json 2>/dev/null; echo -n "wator $b $round: $? "
    build-$b/example/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --json > $OUT/b/gol-$b-$round.json 2>/dev/null; echo -n "gol $?, "
    build-$b/example/nbody_dynasoar --bodies 20000 --steps 1000 --json > $OUT/b/nbody-$b-$round.json 2>/dev/null; echo -n "nbody $?, "
    build-$b/example/gol_dynasoar --pattern example/gol/patterns/acorn.cells --width 12699 --height 12652 --steps 300 --json > $OUT/b/acorn-$b-$round.json 2>/dev/null; echo -n "acorn $?, "
    build-$b/example/barnes_hut_dynasoar --bodies 300000 --steps 10 --json > $OUT/b/bh-$b-$round.json 2>/dev/null; echo "bh $?"
  done
done
for f in $OUT/b/*.json; do echo "${f##*/}: $(grep -oE '"(total_ms|checksum)": *[^,}]*' $f | tr '\n' ' ')"; done
for tool in racecheck memcheck; do
  timeout 60 compute-sanitizer --tool $tool $L/test/soa_test > $OUT/b/san-$tool.txt 2>&1; echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/b/san-$tool.txt)"
done
tar -C $OUT -czf $OUT/d15.tgz b; rm -rf $OUT/b
echo "total $((SECONDS - t0)) s"
