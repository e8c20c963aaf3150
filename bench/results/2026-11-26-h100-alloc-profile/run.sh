#!/usr/bin/env bash
# Call I: Nsight Compute on the heap's allocation kernel, 2^20 threads each
# allocating one 64-byte object in a 1 GiB heap (soa_bench --quick --only
# scalability: the 31st heap_alloc launch is a timed run of that case).
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
mkdir -p $OUT/p
cmake -S . -B build-prof -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DDYNASOAR_VIEWER_SDL2=OFF -DCMAKE_CUDA_FLAGS=-lineinfo > $OUT/p/configure.log 2>&1 || { tail -20 $OUT/p/configure.log; exit 1; }
cmake --build build-prof -j16 --target soa_bench > $OUT/p/build.log 2>&1 || { grep -m5 -A10 error $OUT/p/build.log; exit 1; }
echo "built at $((SECONDS - t0)) s"
build-prof/bench/soa_bench --quick --only scalability --csv $OUT/p/scalability.csv > /dev/null 2>&1; echo "scalability: exit $?"
grep -E "^(alloc|free)," $OUT/p/scalability.csv | cut -d, -f1-5
NCU=/usr/local/cuda/bin/ncu
timeout 300 $NCU --kernel-name heap_alloc --launch-skip 30 --launch-count 1 --set full --import-source yes -o $OUT/p/alloc \
  build-prof/bench/soa_bench --quick --only scalability > $OUT/p/ncu.log 2>&1; echo "ncu: exit $?"
$NCU -i $OUT/p/alloc.ncu-rep --page details > $OUT/p/details.txt 2>&1
$NCU -i $OUT/p/alloc.ncu-rep --page source --csv --print-source sass > $OUT/p/source-sass.csv 2>&1
$NCU -i $OUT/p/alloc.ncu-rep --page source --csv --print-source cuda > $OUT/p/source-cuda.csv 2>&1
grep -E "Grid Size|Block Size|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Memory Throughput|Compute \(SM\) Throughput" $OUT/p/details.txt | head -12
python3 .calib/prof/hot_spots.py $OUT/p/source-sass.csv 25 > $OUT/p/hot-spots.txt 2>&1; head -28 $OUT/p/hot-spots.txt | cut -c1-160
rm -f $OUT/p/alloc.ncu-rep
gzip -f $OUT/p/source-sass.csv $OUT/p/source-cuda.csv
tar -C $OUT -czf $OUT/d14.tgz p; rm -rf $OUT/p
echo "total $((SECONDS - t0)) s"
