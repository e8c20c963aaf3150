#!/usr/bin/env bash
# A/B: XMalloc's default queues, 1024 x 64 slots (A = 569e486) against 8192 x 16 (B = working tree).
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
F="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
cmake -S . -B build-gpu $F > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
cmake -S .calib/src-A -B build-A $F > $OUT/configure-A.log 2>&1 || { tail -20 $OUT/configure-A.log; exit 1; }
cmake --build build-A -j5 --target cmalloc_bench > $OUT/build-A.log 2>&1 &
cmake --build build-gpu -j11 --target cmalloc_test cmalloc_bench backend_test > $OUT/build.log 2>&1 || { grep -m8 -A12 error $OUT/build.log | cut -c1-300; exit 1; }
wait || true
[ -x build-A/bench/cmalloc_bench ] || { grep -m8 -A12 error $OUT/build-A.log | cut -c1-300; exit 1; }
echo "built in $((SECONDS - t0)) s"
AL="--allocator CudaMalloc --allocator XMallocOnCudaMalloc --allocator ScatterAlloc --allocator XMalloc"
for r in 1 2; do
  for v in A B; do
    b=build-gpu; [ $v = A ] && b=build-A
    s=$SECONDS
    timeout 100 $b/bench/cmalloc_bench --only survey --case 16B_per_thread --case 16B_per_warp --case 1KiB_per_thread $AL --csv $OUT/survey-$v-$r.csv 2>/dev/null
    [ $r = 1 ] && timeout 60 $b/bench/cmalloc_bench --only magnify $AL --csv $OUT/magnify-$v-$r.csv 2>/dev/null
    echo "round $r $v: $((SECONDS - s)) s"
  done
done
for f in $OUT/survey-*-1.csv $OUT/survey-*-2.csv; do echo "== $(basename $f)"; grep -E "^survey_(malloc|free),(CudaMalloc|XMallocOnCudaMalloc|ScatterAlloc|XMalloc)," $f | cut -d, -f1,2,3,5 | sed 's/survey_//' | cut -c1-80 | paste -sd' ' | fold -w 400; done
for f in $OUT/magnify-*-1.csv; do echo "== $(basename $f)"; grep -E "^magnify,(CudaMalloc|XMallocOnCudaMalloc|XMalloc)," $f | cut -d, -f2,3,5 | cut -c1-90 | paste -sd' '; done
s=$SECONDS
timeout 150 build-gpu/test/cmalloc_test --gtest_filter='*XMalloc*:*CudaMalloc*' > $OUT/test.log 2>&1; echo "cmalloc_test exit $? $((SECONDS - s)) s: $(grep -E '^\[  (PASSED|FAILED) ' $OUT/test.log | tr '\n' ' ')"
timeout 100 build-gpu/test/backend_test --gtest_filter='*XMalloc*' > $OUT/backend.log 2>&1; echo "backend_test exit $?: $(grep -E '^\[  (PASSED|FAILED) ' $OUT/backend.log | tr '\n' ' ')"
gzip -f $OUT/build.log $OUT/build-A.log
echo "total $((SECONDS - t0)) s"
