#!/usr/bin/env bash
# Fill to exhaustion with the old and new step-back count (A = 7c14b28, B = f921a11), interleaved.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
F="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
t0=$SECONDS
cmake -S . -B build-gpu $F > /dev/null 2>&1; cmake -S .calib/src-A -B build-A $F > /dev/null 2>&1
cmake --build build-A -j8 --target cmalloc_bench > /dev/null 2>&1 &
cmake --build build-gpu -j8 --target cmalloc_bench > /dev/null 2>&1; wait
echo "built in $((SECONDS - t0)) s"
for b in build-A/bench/cmalloc_bench build-gpu/bench/cmalloc_bench; do [ -x $b ] || { echo "missing $b"; exit 1; }; done
mkdir -p $OUT/f
for r in 1 2; do
  for v in A B; do
    b=build-gpu; [ $v = A ] && b=build-A
    s=$SECONDS
    timeout 100 $b/bench/cmalloc_bench --only fill --fill-mib 4 --fill-mib 16 --allocator CFMMalloc --allocator CMMalloc --allocator CFMalloc --csv $OUT/f/fill-$v-$r.csv > /dev/null 2>&1
    echo "round $r $v: exit $? $((SECONDS - s)) s"
  done
done
for f in $OUT/f/*.csv; do echo "== $(basename $f)"; grep -E "^fill" $f | cut -d, -f2,3,5,9 | paste -sd' '; done
