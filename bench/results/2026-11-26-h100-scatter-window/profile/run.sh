#!/usr/bin/env bash
# Nsight Compute on ScatterAlloc's 16 B one-per-warp malloc (working tree, -lineinfo).
set -uo pipefail
D=$PWD/.gpu-deps
export PATH=/usr/local/cuda/bin:$PATH
if [[ ! -f build-prof/build.ninja ]]; then
  cmake -S . -B build-prof -G Ninja -DCMAKE_BUILD_TYPE=Release -DDYNASOAR_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF -DCMAKE_CUDA_FLAGS=-lineinfo \
    -DCMAKE_PREFIX_PATH="$D" -DGTEST_ROOT="$D" >/dev/null 2>&1 || exit 1
fi
cmake --build build-prof -j 16 --target cmalloc_bench 2>&1 | tail -1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
mkdir -p $OUT/p
timeout 240 $NCU --kernel-name regex:alloc_kernel --launch-skip 2 --launch-count 1 --set full --import-source yes -o $OUT/p/w16 build-prof/bench/cmalloc_bench --quick --only survey --allocator ScatterAlloc --case 16B_per_warp > $OUT/p/ncu.log 2>&1; echo "ncu: exit $?"; tail -2 $OUT/p/ncu.log
$NCU -i $OUT/p/w16.ncu-rep --page details > $OUT/p/details.txt 2>&1
$NCU -i $OUT/p/w16.ncu-rep --page source --csv --print-source sass > $OUT/p/source-sass.csv 2>&1
$NCU -i $OUT/p/w16.ncu-rep --page source --csv --print-source cuda > $OUT/p/source-cuda.csv 2>&1
grep -E "Duration|Warp Cycles Per Issued|Achieved Occupancy|Issue Slots Busy|Registers Per|Executed Instructions  " $OUT/p/details.txt | head -12
python3 .calib/hot_spots.py $OUT/p/source-sass.csv 40 > $OUT/p/hot-spots.txt 2>&1; cat $OUT/p/hot-spots.txt | cut -c1-170
rm -f $OUT/p/w16.ncu-rep; tar -C $OUT -czf $OUT/prof.tgz p; rm -rf $OUT/p
