#!/usr/bin/env bash
# Call 3: do-all-one-launch with groups spread over the blocks (.calib/src-fused)
# against main (working tree); XMalloc against its underlying allocator.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
ex="wator_dynasoar gol_dynasoar nbody_dynasoar"
( cmake -S . -B build-gpu $cfg > $OUT/b/main-configure.log 2>&1 && timeout 300 cmake --build build-gpu -j6 --target $ex cmalloc_bench > $OUT/b/main-build.log 2>&1; echo "main build exit $? at $((SECONDS - t0)) s" ) &
cmake -S .calib/src-fused -B build-fused $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
timeout 300 cmake --build build-fused -j10 --target soa_bench soa_test $ex > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS or timeout:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "fused built at $((SECONDS - t0)) s"
F=build-fused
$F/bench/soa_bench --only empty --only do_all --csv $OUT/b/soa-2.csv > $OUT/b/soa-2.txt 2>&1; echo "soa_bench: exit $? at $((SECONDS - t0)) s"
timeout 120 $F/test/soa_test > $OUT/b/soa_test.txt 2>&1; echo "soa_test: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/soa_test.txt | tr '\n' ' ')"
wait
echo "both built at $((SECONDS - t0)) s"
for round in 1 2; do
  for b in gpu fused; do
    build-$b/example/wator_dynasoar --width 2048 --height 2560 --steps 500 --json > $OUT/b/wator-$b-$round.json 2>/dev/null; echo "wator $b $round: $?"
    build-$b/example/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --json > $OUT/b/gol-$b-$round.json 2>/dev/null; echo "gol $b $round: $?"
    build-$b/example/nbody_dynasoar --bodies 20000 --steps 1000 --json > $OUT/b/nbody-$b-$round.json 2>/dev/null; echo "nbody $b $round: $?"
  done
done
for f in $OUT/b/*.json; do echo "${f##*/}: $(grep -oE '"(total_ms|checksum)": *[^,}]*' $f | tr '\n' ' ')"; done
for round in 1 2; do
  timeout 60 build-gpu/bench/cmalloc_bench --only survey --allocator ScatterAlloc --allocator XMalloc --csv $OUT/b/survey-$round.csv > /dev/null 2>&1; echo "survey $round: exit $?"
  grep -E "^survey_malloc" $OUT/b/survey-$round.csv | cut -d, -f2-5
done
grep -E "^(empty_parallel_do|do_all)" $OUT/b/soa-2.csv | cut -d, -f1-7,10,11
tar -C $OUT -czf $OUT/c3.tgz b; rm -rf $OUT/b
echo "total $((SECONDS - t0)) s"
