#!/usr/bin/env bash
# Call 1: the device tier at the commit in .calib/commit (binaries built by
# scripts/build-gpu.sh, carried as .calib/bin.tgz), compute-sanitizer on
# ScatterAlloc's and XMalloc's tests beside it, then comparison part A.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
mkdir -p build-gpu && tar -C build-gpu -xJf .calib/bin.txz || exit 1
C=$(cat .calib/commit)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# sanitizers, in the background, on the new back ends' tests
mkdir -p $OUT/san
for tool in memcheck racecheck synccheck; do
  for t in cmalloc_test backend_test; do
    ( DYNASOAR_SANITIZER=1 DYNASOAR_STRESS_ROUNDS=8 timeout 240 compute-sanitizer --tool $tool --error-exitcode 99 \
        build-gpu/bin/$t --gtest_filter='*Scatter*:*XMalloc*' > $OUT/san/$tool-$t.log 2>&1
      echo "$tool $t: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san/$tool-$t.log | tail -1), $(grep -Eo '^\[  PASSED  \] [0-9]+ tests?' $OUT/san/$tool-$t.log | tail -1), $(grep -Eo '^\[  FAILED  \] [0-9]+ tests?' $OUT/san/$tool-$t.log | tail -1)" >> $OUT/san/summary.txt ) &
  done
done
s=$SECONDS
GIT_COMMIT=$C TEST_TIMEOUT=240 timeout 400 scripts/gpu-check.sh build-gpu/bin $OUT/tier tests > /dev/null 2>&1
echo "tier: exit $?, $((SECONDS - s)) s: $(grep -E '^device tier' $OUT/tier/summary.txt)"
grep -E "(FAIL|TIMED|exit [1-9])" $OUT/tier/summary.txt | head -30
echo "golden runs exit 0: $(grep -c 'golden run .*exit 0' $OUT/tier/summary.txt), not 0: $(grep 'golden run' $OUT/tier/summary.txt | grep -vc 'exit 0')"
wait
echo "sanitizers done at $((SECONDS - t0)) s"; cat $OUT/san/summary.txt
cp $OUT/tier/summary.txt $OUT/tier-summary.txt
rm -f $OUT/tier/*.xml; tar -C $OUT -czf $OUT/tier-logs.tgz tier san; rm -rf $OUT/tier
cp $OUT/san/summary.txt $OUT/san-summary.txt; rm -rf $OUT/san
# comparison part A, if time allows
if (( SECONDS - t0 < 230 )); then
  s=$SECONDS
  ONLY='^(wator|gol-soup)$' timeout $((585 - (SECONDS - t0))) bench/examples/run_all.sh build-gpu/bin $OUT/tables 1 20 > $OUT/tables-a.log 2>&1
  echo "part A: exit $?, $((SECONDS - s)) s"
  tar -C $OUT -czf $OUT/tables-a.tgz tables && rm -rf $OUT/tables
fi
echo "total $((SECONDS - t0)) s"
