#!/usr/bin/env bash
# Call E: ScatterAlloc's batched walk (.calib/src-batch, loads unrolled, tries
# one loop) against main (working tree: main plus soa_bench's two diagnostic
# rows of the empty parallel_do): survey of ScatterAlloc and XMalloc
# interleaved, three rounds; the branch's ScatterAlloc/XMalloc tests,
# racecheck and memcheck; main's soa_bench --only empty, twice.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
( cmake -S . -B build-gpu $cfg > $OUT/b/main-configure.log 2>&1 && timeout 280 cmake --build build-gpu -j6 --target cmalloc_bench soa_bench > $OUT/b/main-build.log 2>&1; echo "main build exit $? at $((SECONDS - t0)) s" ) &
cmake -S .calib/src-batch -B build-batch $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
timeout 280 cmake --build build-batch -j10 --target cmalloc_bench cmalloc_test backend_test > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS or timeout:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "batch built at $((SECONDS - t0)) s"
wait
grep -m5 -B2 -A10 "error" $OUT/b/main-build.log | cut -c1-300
timeout 100 build-batch/test/cmalloc_test --gtest_filter='*Scatter*:*XMalloc*' > $OUT/b/cmalloc_test.txt 2>&1; echo "cmalloc_test: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/cmalloc_test.txt | tr '\n' ' ')"
timeout 100 build-batch/test/backend_test --gtest_filter='*Scatter*:*XMalloc*' > $OUT/b/backend_test.txt 2>&1; echo "backend_test: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/backend_test.txt | tr '\n' ' ')"
for tool in racecheck memcheck; do
  timeout 60 compute-sanitizer --tool $tool build-batch/test/cmalloc_test --gtest_filter='CMallocConformance/ScatterAlloc.*' > $OUT/b/san-$tool.txt 2>&1; echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/b/san-$tool.txt)"
done
for round in 1 2 3; do
  for b in gpu batch; do
    timeout 40 build-$b/bench/cmalloc_bench --only survey --allocator ScatterAlloc --allocator XMalloc --csv $OUT/b/survey-$b-$round.csv > /dev/null 2>&1; echo "survey $b $round: exit $?"
  done
done
for f in $OUT/b/survey-*.csv; do echo "== ${f##*/}"; grep -E "^survey_malloc,(ScatterAlloc|XMalloc)," $f | cut -d, -f3,5 | tr '\n' ' '; echo; done
for b in gpu batch; do cuobjdump -res-usage build-$b/bench/cmalloc_bench 2>/dev/null | grep -A1 "alloc_kernel.*ScatterAlloc" | grep -oE "REG:[0-9]+" | sort | uniq -c | tr '\n' ' '; echo " <- $b regs"; done
for round in 1 2; do timeout 60 build-gpu/bench/soa_bench --only empty --csv $OUT/b/empty-$round.csv > /dev/null 2>&1; echo "empty $round: exit $?"; done
grep -hE "^empty_parallel_do" $OUT/b/empty-*.csv | cut -d, -f2,3,5
tar -C $OUT -czf $OUT/d10.tgz b; rm -rf $OUT/b
echo "total $((SECONDS - t0)) s"
