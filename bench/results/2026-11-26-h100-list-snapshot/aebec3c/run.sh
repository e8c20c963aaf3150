#!/usr/bin/env bash
# Call 6: list-and-snapshot, a place per container (.calib/src-list = aebec3c), against main (working tree):
# soa_bench empty/do_all interleaved, tests, three examples interleaved.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
ex="wator_dynasoar gol_dynasoar nbody_dynasoar"
( cmake -S . -B build-gpu $cfg > $OUT/b/main-configure.log 2>&1 && timeout 300 cmake --build build-gpu -j6 --target $ex soa_bench > $OUT/b/main-build.log 2>&1; echo "main build exit $? at $((SECONDS - t0)) s" ) &
cmake -S .calib/src-list -B build-list $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
timeout 300 cmake --build build-list -j10 --target soa_bench soa_test api_test soa_stress_test backend_test errors_test $ex > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS or timeout:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "list built at $((SECONDS - t0)) s"
L=build-list
for t in soa_test api_test soa_stress_test backend_test errors_test; do
  timeout 120 $L/test/$t > $OUT/b/$t.txt 2>&1; echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/$t.txt | tr '\n' ' ')"
done
wait
echo "both built at $((SECONDS - t0)) s"
for round in 1 2; do
  for b in gpu list; do
    build-$b/bench/soa_bench --only empty --only do_all --csv $OUT/b/soa-$b-$round.csv > /dev/null 2>&1; echo "soa_bench $b $round: exit $?"
  done
done
for round in 1 2; do
  for b in gpu list; do
    build-$b/example/wator_dynasoar --width 2048 --height 2560 --steps 500 --json > $OUT/b/wator-$b-$round.json 2>/dev/null; echo "wator $b $round: $?"
    build-$b/example/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --json > $OUT/b/gol-$b-$round.json 2>/dev/null; echo "gol $b $round: $?"
    build-$b/example/nbody_dynasoar --bodies 20000 --steps 1000 --json > $OUT/b/nbody-$b-$round.json 2>/dev/null; echo "nbody $b $round: $?"
  done
done
for f in $OUT/b/*.json; do echo "${f##*/}: $(grep -oE '"(total_ms|checksum)": *[^,}]*' $f | tr '\n' ' ')"; done
for tool in racecheck synccheck memcheck; do
  timeout 60 compute-sanitizer --tool $tool $L/test/soa_test > $OUT/b/san-$tool.txt 2>&1; echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/b/san-$tool.txt)"
done
for f in $OUT/b/soa-*.csv; do echo "== ${f##*/}"; grep -E "^(empty_parallel_do|do_all,dynasoar)" $f | cut -d, -f2,3,5,10 | tr '\n' ' '; echo; done
tar -C $OUT -czf $OUT/c6.tgz b; rm -rf $OUT/b
echo "total $((SECONDS - t0)) s"
