#!/usr/bin/env bash
# The survey half of xm4.sh (its runs were cut by the timeout): A = 569e486, B = working tree.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
[ -x build-A/bench/cmalloc_bench ] || { echo "no build-A"; exit 1; }
cmake --build build-A -j5 --target cmalloc_bench > /dev/null 2>&1 &
cmake --build build-gpu -j11 --target cmalloc_bench > /dev/null 2>&1; wait
echo "built in $((SECONDS - t0)) s"
mkdir -p $OUT/s
AL="--allocator XMallocOnCudaMalloc --allocator XMalloc --allocator ScatterAlloc"
for r in 1 2; do
  for v in A B; do
    b=build-gpu; [ $v = A ] && b=build-A
    s=$SECONDS
    timeout 60 $b/bench/cmalloc_bench --only survey --case 16B_per_thread --case 16B_per_warp $AL --csv $OUT/s/survey-$v-$r.csv > /dev/null 2>&1
    timeout 30 $b/bench/cmalloc_bench --only survey --case 16B_per_thread --allocator CudaMalloc --csv $OUT/s/cuda-$v-$r.csv > /dev/null 2>&1
    echo "round $r $v: $((SECONDS - s)) s"
  done
done
for f in $OUT/s/*.csv; do echo "== $(basename $f)"; grep -E "^survey_(malloc|free)," $f | cut -d, -f1,2,3,5 | sed 's/survey_//' | paste -sd' '; done
tar -C $OUT -czf $OUT/survey.tgz s && rm -rf $OUT/s
echo "total $((SECONDS - t0)) s"
