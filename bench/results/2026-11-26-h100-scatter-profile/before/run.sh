#!/usr/bin/env bash
# Call 9: (a) the blocking calls wait once (working tree) against main HEAD
# (.calib/src-main): soa_bench --only empty, three rounds interleaved; tests.
# (b) Nsight Compute on ScatterAlloc's 16 B one-per-thread malloc (-lineinfo).
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
( cmake -S .calib/src-main -B build-main $cfg > $OUT/b/main-configure.log 2>&1 && timeout 300 cmake --build build-main -j4 --target soa_bench > $OUT/b/main-build.log 2>&1; echo "main build exit $? at $((SECONDS - t0)) s" ) &
( cmake -S . -B build-prof $cfg -DCMAKE_CUDA_FLAGS=-lineinfo > $OUT/b/prof-configure.log 2>&1 && timeout 300 cmake --build build-prof -j4 --target cmalloc_bench > $OUT/b/prof-build.log 2>&1; echo "prof build exit $? at $((SECONDS - t0)) s" ) &
cmake -S . -B build-gpu $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
timeout 300 cmake --build build-gpu -j8 --target soa_bench soa_test api_test errors_test backend_test > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS or timeout:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "built at $((SECONDS - t0)) s"
for t in soa_test api_test errors_test backend_test; do
  timeout 150 build-gpu/test/$t > $OUT/b/$t.txt 2>&1; echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/$t.txt | tr '\n' ' ')"
done
wait
for round in 1 2 3; do
  for b in main gpu; do
    build-$b/bench/soa_bench --only empty --csv $OUT/b/empty-$b-$round.csv > /dev/null 2>&1; echo "empty $b $round: exit $?"
  done
done
for f in $OUT/b/empty-*.csv; do echo "== ${f##*/}"; grep -E "^empty_parallel_do" $f | cut -d, -f2,3,5 | tr '\n' ' '; echo; done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
timeout 200 $NCU --kernel-name regex:alloc_kernel --launch-skip 2 --launch-count 1 --set full --import-source yes -o $OUT/b/scatter16 build-prof/bench/cmalloc_bench --quick --only survey --allocator ScatterAlloc > $OUT/b/ncu.log 2>&1; echo "ncu: exit $?"; tail -3 $OUT/b/ncu.log
$NCU -i $OUT/b/scatter16.ncu-rep --page details > $OUT/b/details.txt 2>&1; echo "details: $?"
$NCU -i $OUT/b/scatter16.ncu-rep --page source --csv --print-source cuda > $OUT/b/source-cuda.csv 2>&1; echo "source: $? $(wc -l < $OUT/b/source-cuda.csv) lines"
$NCU -i $OUT/b/scatter16.ncu-rep --page source --csv --print-source sass > $OUT/b/source-sass.csv 2>&1; echo "sass: $? $(wc -l < $OUT/b/source-sass.csv) lines"
grep -E "Duration|Warp Cycles Per Issued|Achieved Occupancy|Issue Slots Busy|Stall" $OUT/b/details.txt | head -30
tar -C $OUT -czf $OUT/c9.tgz b; rm -rf $OUT/b
echo "total $((SECONDS - t0)) s"
