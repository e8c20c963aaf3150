#!/usr/bin/env bash
# The walk's step-back count: survey of the circular allocators, A = f921a11^ (old count) vs
# B = f921a11 (build-gpu, already built); R = f921a11's tests with the old walk, to show that
# CMallocWalk.* fails there.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
F="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
cmake -S . -B build-gpu $F > /dev/null 2>&1
cmake -S .calib/src-A -B build-A $F > $OUT/configure-A.log 2>&1 || { tail -20 $OUT/configure-A.log; exit 1; }
cmake -S .calib/src-R -B build-R $F > $OUT/configure-R.log 2>&1 || { tail -20 $OUT/configure-R.log; exit 1; }
cmake --build build-A -j6 --target cmalloc_bench > $OUT/build-A.log 2>&1 &
cmake --build build-R -j8 --target cmalloc_test > $OUT/build-R.log 2>&1 &
cmake --build build-gpu -j2 --target cmalloc_bench > $OUT/build.log 2>&1
wait
for b in build-A/bench/cmalloc_bench build-R/test/cmalloc_test build-gpu/bench/cmalloc_bench; do [ -x $b ] || { echo "missing $b"; exit 1; }; done
echo "built in $((SECONDS - t0)) s"
mkdir -p $OUT/s
AL="--allocator CFMMalloc --allocator CMMalloc --allocator CFMalloc"
for r in 1 2; do
  for v in A B; do
    b=build-gpu; [ $v = A ] && b=build-A
    s=$SECONDS
    timeout 70 $b/bench/cmalloc_bench --quick --only survey --case 16B_per_thread --case 16B_per_warp --case 1KiB_per_thread $AL --csv $OUT/s/survey-$v-$r.csv > /dev/null 2>&1
    echo "round $r $v: exit $? $((SECONDS - s)) s"
  done
done
for f in $OUT/s/*.csv; do echo "== $(basename $f)"; grep -E "^survey_malloc," $f | cut -d, -f2,3,5 | paste -sd' '; done
s=$SECONDS
timeout 80 build-R/test/cmalloc_test --gtest_filter='CMallocWalk.*' --gtest_repeat=4 > $OUT/s/old-walk-test.log 2>&1
echo "old walk, CMallocWalk.* x4: exit $? $((SECONDS - s)) s: $(grep -cE '^\[       OK \] CMallocWalk' $OUT/s/old-walk-test.log) passed, $(grep -cE '^\[  FAILED  \] CMallocWalk.*ms\)' $OUT/s/old-walk-test.log) failed"
grep -m3 -B2 -A6 "Which is: [1-9]" $OUT/s/old-walk-test.log | head -30
tar -C $OUT -czf $OUT/cw1.tgz s && rm -rf $OUT/s
echo "total $((SECONDS - t0)) s"
