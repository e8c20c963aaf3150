#!/usr/bin/env bash
# Call 8: the device tier at the final commit (every target, every test, golden runs).
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
cmake -S . -B build-gpu $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
timeout 330 cmake --build build-gpu -j18 -- -k 0 > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS or timeout:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "built in $((SECONDS - t0)) s"
mkdir -p build-gpu/all
cp build-gpu/test/*_test build-gpu/example/bitmap_demo build-gpu/example/readme_example_* build-gpu/example/learn_* build-gpu/all/ 2>/dev/null
for e in wator nbody gol kdtree barnes_hut; do cp build-gpu/example/${e}_* build-gpu/all/ 2>/dev/null; done
s=$SECONDS
GIT_COMMIT=$(cat .calib/commit) TEST_TIMEOUT=100 timeout $((580 - SECONDS)) scripts/gpu-check.sh build-gpu/all $OUT/tier tests > /dev/null 2>&1
echo "tier: exit $?, $((SECONDS - s)) s: $(grep -E '^device tier' $OUT/tier/summary.txt)"
grep -E "(FAIL|TIMED|exit [1-9])" $OUT/tier/summary.txt | head -30
echo "golden runs exit 0: $(grep -c 'golden run .*exit 0' $OUT/tier/summary.txt), not 0: $(grep 'golden run' $OUT/tier/summary.txt | grep -vc 'exit 0')"
cp $OUT/tier/summary.txt $OUT/tier-summary.txt 2>/dev/null
rm -f $OUT/tier/*.xml; tar -C $OUT -czf $OUT/c8.tgz tier; rm -rf $OUT/b $OUT/tier
echo "total $((SECONDS - t0)) s"
