#!/usr/bin/env bash
# Call 2: branch do-all-one-launch (.calib/src-fused) against main 422e7be
# (.calib/src-main) on one H100. soa_bench has both forms of the do-all in one
# process; the examples run interleaved on both builds.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
ex="wator_dynasoar gol_dynasoar nbody_dynasoar"
( cmake -S .calib/src-main -B build-main $cfg > $OUT/b/main-configure.log 2>&1 && timeout 300 cmake --build build-main -j5 --target $ex > $OUT/b/main-build.log 2>&1; echo "main build exit $? at $((SECONDS - t0)) s" ) &
cmake -S .calib/src-fused -B build-fused $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
timeout 300 cmake --build build-fused -j12 --target soa_bench soa_test api_test errors_test soa_stress_test $ex wator_baseline gol_baseline nbody_baseline > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS or timeout:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "fused built at $((SECONDS - t0)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F=build-fused
$F/bench/soa_bench --only empty --only do_all --only registers --csv $OUT/b/soa-1.csv > $OUT/b/soa-1.txt 2>&1; echo "soa_bench 1: exit $? at $((SECONDS - t0)) s"
for t in soa_test api_test errors_test soa_stress_test; do
  timeout 120 $F/test/$t > $OUT/b/$t.txt 2>&1; echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/$t.txt | tr '\n' ' ')"
done
wait
echo "both built at $((SECONDS - t0)) s"
for round in 1 2 3; do
  for b in main fused; do
    ((SECONDS < 480)) || break
    build-$b/example/wator_dynasoar --width 2048 --height 2560 --steps 500 --json > $OUT/b/wator-$b-$round.json 2>/dev/null; echo "wator $b $round: $?"
    build-$b/example/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --json > $OUT/b/gol-$b-$round.json 2>/dev/null; echo "gol $b $round: $?"
    build-$b/example/nbody_dynasoar --bodies 20000 --steps 1000 --json > $OUT/b/nbody-$b-$round.json 2>/dev/null; echo "nbody $b $round: $?"
  done
  $F/example/wator_baseline --width 2048 --height 2560 --steps 500 --json > $OUT/b/wator-baseline-$round.json 2>/dev/null
  $F/example/gol_baseline --width 2048 --height 2048 --steps 300 --density 0.3 --json > $OUT/b/gol-baseline-$round.json 2>/dev/null
  $F/example/nbody_baseline --bodies 20000 --steps 1000 --json > $OUT/b/nbody-baseline-$round.json 2>/dev/null
done
for f in $OUT/b/*.json; do echo "${f##*/}: $(grep -oE '"(total_ms|checksum)": *[^,}]*' $f | tr '\n' ' ')"; done
for tool in racecheck synccheck memcheck; do
  ((SECONDS < 560)) || break
  timeout 40 compute-sanitizer --tool $tool $F/test/soa_test --gtest_filter='*Forms*10000*' > $OUT/b/san-$tool.txt 2>&1; echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/b/san-$tool.txt)"
done
grep -E "^(empty_parallel_do|do_all|registers)" $OUT/b/soa-1.csv | cut -d, -f1-9,11 
tar -C $OUT -czf $OUT/c2.tgz b; rm -rf $OUT/b
echo "total $((SECONDS - t0)) s"
