#!/usr/bin/env bash
# The device tier at the commit in .calib/commit (binaries built by
# scripts/build-gpu.sh, carried as .calib/bin.txz), with compute-sanitizer
# on XMalloc's back-end tests beside it.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
rm -rf build-gpu/bin && mkdir -p build-gpu && tar -C build-gpu -xJf .calib/bin.txz || exit 1
C=$(cat .calib/commit)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/san
for tool in memcheck racecheck synccheck; do
  ( DYNASOAR_SANITIZER=1 DYNASOAR_STRESS_ROUNDS=8 timeout 240 compute-sanitizer --tool $tool --error-exitcode 99 \
      build-gpu/bin/backend_test --gtest_filter='*XMalloc*' > $OUT/san/$tool-backend_test.log 2>&1
    echo "$tool backend_test XMalloc: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san/$tool-backend_test.log | tail -1), $(grep -Eo '^\[  PASSED  \] [0-9]+ tests?' $OUT/san/$tool-backend_test.log | tail -1), $(grep -Eo '^\[  FAILED  \] [0-9]+ tests?' $OUT/san/$tool-backend_test.log | tail -1)" >> $OUT/san/summary.txt ) &
done
s=$SECONDS
GIT_COMMIT=$C TEST_TIMEOUT=240 timeout 480 scripts/gpu-check.sh build-gpu/bin $OUT/tier tests > /dev/null 2>&1
echo "tier: exit $?, $((SECONDS - s)) s: $(grep -E '^device tier' $OUT/tier/summary.txt)"
grep -E "(FAIL|TIMED|exit [1-9])" $OUT/tier/summary.txt | head -30
echo "golden runs exit 0: $(grep -c 'golden run .*exit 0' $OUT/tier/summary.txt), not 0: $(grep 'golden run' $OUT/tier/summary.txt | grep -vc 'exit 0')"
wait
cat $OUT/san/summary.txt
cp $OUT/tier/summary.txt $OUT/tier-summary.txt; cp $OUT/san/summary.txt $OUT/san-summary.txt
rm -f $OUT/tier/*.xml; tar -C $OUT -czf $OUT/tier-logs.tgz tier san; rm -rf $OUT/tier $OUT/san
echo "total $((SECONDS - t0)) s"
# XMalloc's memory budget rows (Fig. 12b) again, with its 16 queues: the
# commands of ../2026-11-26-h200-xmalloc-budget/ on this commit's programs.
mkdir -p $OUT/budget
timeout 150 python3 bench/examples/memory_budget.py --bin build-gpu/bin --example wator --variants xmalloc --heap-mib 64 --steps 25 --timeout 30 --refine 2 --stop-after-timeouts 1 --sizes 128x128,181x181,256x256,362x362,512x512,724x724 --out $OUT/budget --name wator-budget-64mib-xmalloc > $OUT/budget/wator.log 2>&1
echo "wator budget: exit $?"; tail -4 $OUT/budget/wator.log
timeout 120 python3 bench/examples/memory_budget.py --bin build-gpu/bin --example nbody --variants xmalloc --heap-mib 16 --steps 3 --timeout 30 --refine 2 --rtol 1e-3 --sizes 12500,25000,50000,100000,141000,200000 --out $OUT/budget --name nbody-budget-16mib-xmalloc > $OUT/budget/nbody.log 2>&1
echo "nbody budget: exit $?"; tail -4 $OUT/budget/nbody.log
grep -h "^| xmalloc" $OUT/budget/*.md
tar -C $OUT -czf $OUT/budget.tgz budget && rm -rf $OUT/budget
echo "total $((SECONDS - t0)) s"
