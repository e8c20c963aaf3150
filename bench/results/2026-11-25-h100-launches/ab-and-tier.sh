#!/usr/bin/env bash
# Issue 21, second round: soa_bench A/B at 8b244d8 (memset + three kernels),
# a71d55d (snapshot fused into the enumeration) and the working tree (no
# memset, separate snapshot, snapshot and do-all launched early), twice,
# interleaved; then every target of the working tree, and one device-tier run
# with the golden runs of every example on every back end.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
conf() { # dir src
  cmake -S $2 -B $1 -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DDYNASOAR_VIEWER_SDL2=OFF -DDYNASOAR_BUILD_BENCH=ON -DDYNASOAR_BUILD_EXAMPLES=OFF -DDYNASOAR_BUILD_TESTS=OFF \
    > $OUT/conf-$(basename $1).log 2>&1 && cmake --build $1 --target soa_bench > $OUT/build-$(basename $1).log 2>&1 \
    || { echo "build $1 failed"; grep -m3 -A10 error $OUT/build-$(basename $1).log; }
}
conf build-ab/old .calib/src-8b244d8 &
conf build-ab/fused .calib/src-a71d55d &
conf build-ab/new . &
wait
echo "soa_bench built in $((SECONDS - t0)) s"
for round in 1 2; do
  for v in old fused new; do
    build-ab/$v/bench/soa_bench --only empty --only do_all --only registers --csv $OUT/ab-$v-$round.csv > /dev/null 2>&1; echo "$v round $round: exit $?"
  done
done
python3 .calib/summarize.py $OUT
s=$SECONDS
cmake -S . -B build-gpu -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DDYNASOAR_VIEWER_SDL2=OFF -DDYNASOAR_BUILD_BENCH=OFF > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
cmake --build build-gpu -j16 -- -k 0 > $OUT/build.log 2>&1 || { echo "BUILD ERRORS:"; grep -m8 -B2 -A12 "error" $OUT/build.log | cut -c1-300; }
echo "built all in $((SECONDS - s)) s"
mkdir -p build-gpu/all
cp build-gpu/test/*_test build-gpu/example/bitmap_demo build-gpu/example/readme_example_* build-gpu/example/learn_* build-gpu/all/ 2>/dev/null
for e in wator nbody gol kdtree barnes_hut; do cp build-gpu/example/${e}_* build-gpu/all/ 2>/dev/null; done
s=$SECONDS
GIT_COMMIT=$(cat .calib/commit)+wt TEST_TIMEOUT=100 timeout $((560 - SECONDS)) scripts/gpu-check.sh build-gpu/all $OUT/tier tests > /dev/null 2>&1
echo "tier: exit $?, $((SECONDS - s)) s: $(grep -E '^device tier' $OUT/tier/summary.txt)"
grep -E "(FAIL|TIMED|exit [1-9])" $OUT/tier/summary.txt | head -30
echo "golden runs exit 0: $(grep -c 'golden run .*exit 0' $OUT/tier/summary.txt)"
rm -f $OUT/tier/*.xml; mv $OUT/tier/summary.txt $OUT/tier-summary.txt; tar -C $OUT -czf $OUT/tier-logs.tgz tier; rm -rf $OUT/tier
mkdir -p $OUT/x; mv $OUT/*.log $OUT/x/ 2>/dev/null; tar -C $OUT -czf $OUT/build-logs.tgz x; rm -rf $OUT/x
echo "total $((SECONDS - t0)) s"
