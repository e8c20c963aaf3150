#!/usr/bin/env bash
# A/B: XMalloc's queues with one attempt (A = ff7676e) and with retries on contention (B = HEAD).
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
F="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
cmake -S . -B build-gpu $F > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
cmake -S .calib/src-A -B build-A $F > $OUT/configure-A.log 2>&1 || { tail -20 $OUT/configure-A.log; exit 1; }
cmake --build build-A -j8 --target cmalloc_bench > $OUT/build-A.log 2>&1 &
cmake --build build-gpu -j8 --target cmalloc_test cmalloc_bench > $OUT/build.log 2>&1 || { grep -m8 -A12 error $OUT/build.log | cut -c1-300; exit 1; }
wait || true
[ -x build-A/bench/cmalloc_bench ] || { grep -m8 -A12 error $OUT/build-A.log | cut -c1-300; exit 1; }
echo "built in $((SECONDS - t0)) s"
AL="--allocator CudaMalloc --allocator XMallocOnCudaMalloc --allocator ScatterAlloc --allocator XMalloc"
for r in 1 2; do
  for v in A B; do
    b=build-gpu; [ $v = A ] && b=build-A
    s=$SECONDS
    $b/bench/cmalloc_bench --only survey --case 16B_per_thread --case 16B_per_warp $AL --csv $OUT/survey-$v-$r.csv 2>/dev/null
    $b/bench/cmalloc_bench --only magnify $AL --csv $OUT/magnify-$v-$r.csv 2>/dev/null
    echo "round $r $v: $((SECONDS - s)) s"
  done
done
for f in $OUT/survey-*-1.csv $OUT/survey-*-2.csv; do echo "== $(basename $f)"; grep -E "^survey_malloc,(CudaMalloc|XMallocOnCudaMalloc|XMalloc)," $f | cut -d, -f2,3,5,9 | cut -c1-110; done
for f in $OUT/magnify-*-1.csv $OUT/magnify-*-2.csv; do echo "== $(basename $f)"; grep -E "^magnify,(CudaMalloc|XMallocOnCudaMalloc|XMalloc)," $f | cut -d, -f2,3,5,9 | cut -c1-90; done
build-gpu/test/cmalloc_test --gtest_filter='*XMalloc*:*CudaMalloc*' > $OUT/test.log 2>&1; echo "tests exit $?: $(grep -E '^\[  (PASSED|FAILED) ' $OUT/test.log | tr '\n' ' ')"
B=build-gpu
for tool in memcheck racecheck; do
  s=$SECONDS
  extra=""; [ $tool = memcheck ] && extra="--leak-check full"
  timeout 100 compute-sanitizer --tool $tool $extra $B/test/cmalloc_test --gtest_filter='*XMallocOnCudaMalloc*:CMallocConformance/CudaMalloc.*' > $OUT/sanitizer-$tool.log 2>&1
  echo "$tool exit $? $((SECONDS - s)) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|PASSED|FAILED' $OUT/sanitizer-$tool.log | tr '\n' ' ')"
done
gzip -f $OUT/build.log $OUT/build-A.log
echo "total $((SECONDS - t0)) s"
