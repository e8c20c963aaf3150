#!/usr/bin/env bash
# The device tier at the commit in .calib/commit, then 40 repeats of the test
# that failed once at d65aa6b (CFMMalloc, Sec. 6 patterns); from the repository root.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cmake -S . -B build-gpu -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DDYNASOAR_VIEWER_SDL2=OFF > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
cmake --build build-gpu -j16 -- -k 0 > $OUT/build.log 2>&1 || { echo "BUILD ERRORS:"; grep -m8 -B2 -A12 "error" $OUT/build.log | cut -c1-300; }
echo "built all in $((SECONDS - t0)) s"
mkdir -p build-gpu/all
cp build-gpu/test/*_test build-gpu/example/bitmap_demo build-gpu/example/readme_example_* build-gpu/example/learn_* build-gpu/all/ 2>/dev/null
for e in wator nbody gol kdtree barnes_hut; do cp build-gpu/example/${e}_* build-gpu/all/ 2>/dev/null; done
s=$SECONDS
GIT_COMMIT=$(cat .calib/commit) TEST_TIMEOUT=100 timeout $((580 - SECONDS)) scripts/gpu-check.sh build-gpu/all $OUT/tier tests > /dev/null 2>&1
echo "tier: exit $?, $((SECONDS - s)) s: $(grep -E '^device tier' $OUT/tier/summary.txt)"
grep -E "(FAIL|TIMED|exit [1-9])" $OUT/tier/summary.txt | head -30
echo "golden runs exit 0: $(grep -c 'golden run .*exit 0' $OUT/tier/summary.txt), not 0: $(grep 'golden run' $OUT/tier/summary.txt | grep -vc 'exit 0')"
cp $OUT/tier/summary.txt $OUT/tier-summary.txt
rm -f $OUT/tier/*.xml; tar -C $OUT -czf $OUT/tier-logs.tgz tier; rm -rf $OUT/tier
gzip -f $OUT/build.log
echo "total $((SECONDS - t0)) s"
echo "--- repeats of the Sec. 6 test"
s=$SECONDS
timeout 150 build-gpu/test/cmalloc_test --gtest_filter='CMallocConformance/CFMMalloc.AllocDeallocPatternsOfSection6' \
  --gtest_repeat=40 > $OUT/repeat.log 2>&1
echo "repeat exit $? in $((SECONDS - s)) s: ok $(grep -c '^\[       OK \]' $OUT/repeat.log), failed $(grep -c '^\[  FAILED  \].*ms)' $OUT/repeat.log)"
grep -m5 -A3 "Which is: [1-9]" $OUT/repeat.log
gzip -f $OUT/repeat.log
