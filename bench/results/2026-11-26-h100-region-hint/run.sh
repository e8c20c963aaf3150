#!/usr/bin/env bash
# Call A of the round: every target of main (the working tree) built for the
# tier (run in call B); ScatterAlloc with the region hint (.calib/src-hint):
# its ScatterAlloc/XMalloc tests, racecheck and memcheck, and the survey of
# ScatterAlloc and XMalloc interleaved with main, three rounds.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
( cmake -S .calib/src-hint -B build-hint $cfg > $OUT/b/hint-configure.log 2>&1 && cmake --build build-hint -j4 --target cmalloc_bench cmalloc_test backend_test > $OUT/b/hint-build.log 2>&1; echo "hint build exit $? at $((SECONDS - t0)) s" ) &
cmake -S . -B build-gpu $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
cmake --build build-gpu -j12 -- -k 0 > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "built all of main at $((SECONDS - t0)) s"
wait
mkdir -p build-gpu/all
cp build-gpu/test/*_test build-gpu/example/bitmap_demo build-gpu/example/readme_example_* build-gpu/example/learn_* build-gpu/all/ 2>/dev/null
for e in wator nbody gol kdtree barnes_hut; do cp build-gpu/example/${e}_* build-gpu/all/ 2>/dev/null; done
timeout 150 build-hint/test/cmalloc_test --gtest_filter='*Scatter*:*XMalloc*' > $OUT/b/cmalloc_test.txt 2>&1; echo "hint cmalloc_test: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/cmalloc_test.txt | tr '\n' ' ')"
timeout 150 build-hint/test/backend_test --gtest_filter='*Scatter*:*XMalloc*' > $OUT/b/backend_test.txt 2>&1; echo "hint backend_test: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/backend_test.txt | tr '\n' ' ')"
for tool in racecheck memcheck; do
  timeout 90 compute-sanitizer --tool $tool build-hint/test/cmalloc_test --gtest_filter='CMallocConformance/ScatterAlloc.*' > $OUT/b/san-$tool.txt 2>&1; echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/b/san-$tool.txt)"
done
for round in 1 2 3; do
  for b in gpu hint; do
    timeout 60 build-$b/bench/cmalloc_bench --only survey --allocator ScatterAlloc --allocator XMalloc --csv $OUT/b/survey-$b-$round.csv > /dev/null 2>&1; echo "survey $b $round: exit $?"
  done
done
for f in $OUT/b/survey-*.csv; do echo "== ${f##*/}"; grep -E "^survey_malloc" $f | cut -d, -f2-5 | tr '\n' ' '; echo; done
tar -C $OUT -czf $OUT/d7.tgz b; rm -rf $OUT/b
echo "total $((SECONDS - t0)) s"
