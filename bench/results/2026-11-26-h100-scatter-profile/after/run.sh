#!/usr/bin/env bash
# Call 10: ScatterAlloc without the two divisions of its search (working tree)
# against HEAD (.calib/src-main): the survey of ScatterAlloc and XMalloc,
# interleaved, three rounds; ScatterAlloc's and XMalloc's tests and sanitizers;
# Nsight Compute on the 16 B one-per-thread malloc of the new build.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
( cmake -S .calib/src-main -B build-main $cfg > $OUT/b/main-configure.log 2>&1 && timeout 300 cmake --build build-main -j4 --target cmalloc_bench > $OUT/b/main-build.log 2>&1; echo "main build exit $? at $((SECONDS - t0)) s" ) &
( cmake -S . -B build-prof $cfg -DCMAKE_CUDA_FLAGS=-lineinfo > $OUT/b/prof-configure.log 2>&1 && timeout 300 cmake --build build-prof -j4 --target cmalloc_bench > $OUT/b/prof-build.log 2>&1; echo "prof build exit $? at $((SECONDS - t0)) s" ) &
cmake -S . -B build-gpu $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
timeout 300 cmake --build build-gpu -j8 --target cmalloc_bench cmalloc_test backend_test > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS or timeout:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "built at $((SECONDS - t0)) s"
timeout 150 build-gpu/test/cmalloc_test --gtest_filter='*Scatter*:*XMalloc*' > $OUT/b/cmalloc_test.txt 2>&1; echo "cmalloc_test: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/cmalloc_test.txt | tr '\n' ' ')"
timeout 150 build-gpu/test/backend_test --gtest_filter='*Scatter*:*XMalloc*' > $OUT/b/backend_test.txt 2>&1; echo "backend_test: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/backend_test.txt | tr '\n' ' ')"
for tool in racecheck memcheck; do
  timeout 90 compute-sanitizer --tool $tool build-gpu/test/cmalloc_test --gtest_filter='CMallocConformance/ScatterAlloc.*' > $OUT/b/san-$tool.txt 2>&1; echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/b/san-$tool.txt)"
done
wait
for round in 1 2 3; do
  for b in main gpu; do
    timeout 60 build-$b/bench/cmalloc_bench --only survey --allocator ScatterAlloc --allocator XMalloc --csv $OUT/b/survey-$b-$round.csv > /dev/null 2>&1; echo "survey $b $round: exit $?"
  done
done
for f in $OUT/b/survey-*.csv; do echo "== ${f##*/}"; grep -E "^survey_malloc" $f | cut -d, -f2-5 | tr '\n' ' '; echo; done
NCU=/usr/local/cuda/bin/ncu
timeout 150 $NCU --kernel-name regex:alloc_kernel --launch-skip 2 --launch-count 1 --set full --import-source yes -o $OUT/b/scatter16 build-prof/bench/cmalloc_bench --quick --only survey --allocator ScatterAlloc > $OUT/b/ncu.log 2>&1; echo "ncu: exit $?"
$NCU -i $OUT/b/scatter16.ncu-rep --page details > $OUT/b/details.txt 2>&1
$NCU -i $OUT/b/scatter16.ncu-rep --page source --csv --print-source sass > $OUT/b/source-sass.csv 2>&1
grep -E "Duration|Warp Cycles Per Issued|Achieved Occupancy|Registers Per" $OUT/b/details.txt | head
rm -f $OUT/b/scatter16.ncu-rep
tar -C $OUT -czf $OUT/c10.tgz b; rm -rf $OUT/b
echo "total $((SECONDS - t0)) s"
