#!/usr/bin/env bash
# Call 1 (2026-11-26): branch handover-uniform (working tree) against main 0114e61
# (.calib/src-old). Build all of the branch; GPU 0: device tier, then synccheck on
# the handover tests; GPU 1: allocation benchmarks old/new interleaved, then
# XMalloc's memory budget rows.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
( cmake -S .calib/src-old -B build-old $cfg -DDYNASOAR_BUILD_TESTS=OFF -DDYNASOAR_BUILD_EXAMPLES=OFF > $OUT/b/old-configure.log 2>&1 && timeout 230 cmake --build build-old -j6 --target cmalloc_bench soa_bench > $OUT/b/old-build.log 2>&1; echo "old build exit $? at $((SECONDS - t0)) s" ) &
cmake -S . -B build-gpu $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
timeout 240 cmake --build build-gpu -j26 -- -k 0 > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS or timeout:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "built in $((SECONDS - t0)) s"
wait
mkdir -p build-gpu/all
cp build-gpu/test/*_test build-gpu/example/bitmap_demo build-gpu/example/readme_example_* build-gpu/example/learn_* build-gpu/all/ 2>/dev/null
for e in wator nbody gol kdtree barnes_hut; do cp build-gpu/example/${e}_* build-gpu/all/ 2>/dev/null; done
gpu0() {
  local s=$SECONDS
  GIT_COMMIT=$(cat .calib/commit) TEST_TIMEOUT=100 timeout $((440 - SECONDS)) scripts/gpu-check.sh build-gpu/all $OUT/tier tests > /dev/null 2>&1
  echo "tier: exit $?, $((SECONDS - s)) s: $(grep -E '^device tier' $OUT/tier/summary.txt)"
  grep -E "(FAIL|TIMED|exit [1-9])" $OUT/tier/summary.txt | head -30
  echo "golden runs exit 0: $(grep -c 'golden run .*exit 0' $OUT/tier/summary.txt), not 0: $(grep 'golden run' $OUT/tier/summary.txt | grep -vc 'exit 0')"
  for t in "platform_test --gtest_filter=Warp.*" "cmalloc_test --gtest_filter=*XMalloc*:*Scatter*" "soa_test"; do
    ((SECONDS < 540)) || break
    timeout 60 compute-sanitizer --tool synccheck build-gpu/test/$t > $OUT/b/sync-${t%% *}.txt 2>&1; echo "synccheck $t: exit $? $(tail -1 $OUT/b/sync-${t%% *}.txt)"
  done
}
gpu1() {
  for round in 1 2; do
    for b in old gpu; do
      timeout 45 build-$b/bench/cmalloc_bench --only survey --allocator ScatterAlloc --allocator CFMMalloc --allocator XMalloc --csv $OUT/b/survey-$b-$round.csv > /dev/null 2>&1; echo "survey $b $round: exit $?"
      timeout 40 build-$b/bench/soa_bench --quick --only scalability --csv $OUT/b/scal-$b-$round.csv > /dev/null 2>&1; echo "soa scalability $b $round: exit $?"
    done
  done
  for f in $OUT/b/survey-*.csv; do echo "== ${f##*/}"; grep -E "^survey_malloc" $f | grep -v paper | cut -d, -f2-5 | tr '\n' ' '; echo; done
  for f in $OUT/b/scal-*.csv; do echo "== ${f##*/}"; grep -E "^(alloc|free),dynasoar" $f | cut -d, -f1-6 | head -12 | tr '\n' ' '; echo; done
  mkdir -p $OUT/budget
  timeout $((560 - SECONDS)) python3 bench/examples/memory_budget.py --bin build-gpu/example --example nbody --variants xmalloc --heap-mib 16 --steps 3 --timeout 30 --refine 2 --rtol 1e-3 --sizes 12500,25000,50000,100000,141000,200000 --out $OUT/budget --name nbody-budget-16mib-xmalloc > $OUT/budget/nbody.log 2>&1; echo "nbody budget exit $?"; tail -12 $OUT/budget/nbody.log
  timeout $((590 - SECONDS)) python3 bench/examples/memory_budget.py --bin build-gpu/example --example wator --variants xmalloc --heap-mib 64 --steps 25 --timeout 30 --refine 2 --stop-after-timeouts 1 --sizes 128x128,181x181,256x256,362x362,512x512,724x724 --out $OUT/budget --name wator-budget-64mib-xmalloc > $OUT/budget/wator.log 2>&1; echo "wator budget exit $?"; tail -12 $OUT/budget/wator.log
}
CUDA_VISIBLE_DEVICES=0 gpu0 > $OUT/b/gpu0.txt 2>&1 &
CUDA_VISIBLE_DEVICES=1 gpu1 > $OUT/b/gpu1.txt 2>&1
wait
cat $OUT/b/gpu0.txt; echo =====; cat $OUT/b/gpu1.txt
cp $OUT/tier/summary.txt $OUT/tier-summary.txt 2>/dev/null
rm -f $OUT/tier/*.xml; tar -C $OUT -czf $OUT/c1.tgz b tier budget; rm -rf $OUT/b $OUT/tier $OUT/budget
echo "total $((SECONDS - t0)) s"
