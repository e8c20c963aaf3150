#!/usr/bin/env bash
# XMalloc in front of CUDA's malloc: tests, sanitizers, magnification and survey.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cmake -S . -B build-gpu -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DDYNASOAR_VIEWER_SDL2=OFF > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
cmake --build build-gpu -j16 --target cmalloc_test cmalloc_bench > $OUT/build.log 2>&1 || { grep -m8 -A12 error $OUT/build.log | cut -c1-300; exit 1; }
echo "built in $((SECONDS - t0)) s"
B=build-gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$B/test/cmalloc_test --gtest_filter='*XMalloc*:*CudaMalloc*' > $OUT/test.log 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED  \]" $OUT/test.log | head -20
A="--allocator CudaMalloc --allocator XMallocOnCudaMalloc --allocator ScatterAlloc --allocator XMalloc"
for r in 1 2; do
  s=$SECONDS
  $B/bench/cmalloc_bench --only magnify $A --csv $OUT/magnify-$r.csv 2>/dev/null; echo "magnify $r exit $? $((SECONDS - s)) s"
  s=$SECONDS
  $B/bench/cmalloc_bench --only survey --case 16B_per_thread --case 16B_per_warp $A --csv $OUT/survey-$r.csv 2>/dev/null; echo "survey $r exit $? $((SECONDS - s)) s"
done
grep -E "^(magnify|survey_malloc)," $OUT/magnify-1.csv $OUT/survey-1.csv | cut -d, -f1-7,9 | sed 's/.*csv://' | cut -c1-160
s=$SECONDS
timeout 120 $B/bench/cmalloc_bench --only survey --case 1KiB_per_thread --case 1KiB_per_warp --allocator XMallocOnCudaMalloc --csv $OUT/survey-1k.csv 2>/dev/null; echo "survey 1k exit $? $((SECONDS - s)) s"
grep -E "^survey" $OUT/survey-1k.csv | cut -c1-160
for tool in memcheck racecheck; do
  s=$SECONDS
  extra=""; [ $tool = memcheck ] && extra="--leak-check full"
  timeout 100 compute-sanitizer --tool $tool $extra $B/test/cmalloc_test --gtest_filter='*XMallocOnCudaMalloc*' > $OUT/sanitizer-$tool.log 2>&1
  echo "$tool exit $? $((SECONDS - s)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $OUT/sanitizer-$tool.log | tr '\n' ' ')"
done
gzip -f $OUT/build.log
echo "total $((SECONDS - t0)) s"
