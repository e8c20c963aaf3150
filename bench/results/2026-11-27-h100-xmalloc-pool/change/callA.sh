#!/bin/bash
# XMalloc's default of 16 queues over ScatterAlloc (working tree): build the
# raw and back-end suites and cmalloc_bench here, run XMalloc's tests, the
# sanitizers on them, and the survey with ScatterAlloc and XMalloc over CUDA's malloc.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
timeout 420 .calib/x/gpubuild.sh build-dev cmalloc_test backend_test cmalloc_bench || { echo "build failed"; tail -20 build-dev.configure.log 2>/dev/null; exit 1; }
echo "built in $((SECONDS - t0)) s"
mkdir -p $OUT/san
for tool in memcheck racecheck; do
  ( DYNASOAR_SANITIZER=1 DYNASOAR_STRESS_ROUNDS=8 timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 \
      build-dev/test/cmalloc_test --gtest_filter='*XMalloc*' > $OUT/san/$tool.log 2>&1
    echo "$tool cmalloc_test XMalloc: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san/$tool.log | tail -1), $(grep -Eo '^\[  PASSED  \] [0-9]+ tests?' $OUT/san/$tool.log | tail -1), $(grep -Eo '^\[  FAILED  \] [0-9]+ tests?' $OUT/san/$tool.log | tail -1)" >> $OUT/san/summary.txt ) &
done
for t in cmalloc_test backend_test; do
  timeout 150 build-dev/test/$t --gtest_filter='*XMalloc*' > $OUT/$t.log 2>&1
  echo "$t XMalloc: exit $?, $(grep -Eo '^\[  PASSED  \] [0-9]+ tests?' $OUT/$t.log | tail -1), $(grep -Eo '^\[  SKIPPED \] [0-9]+ tests?' $OUT/$t.log | tail -1), $(grep -E '^\[  FAILED  \]' $OUT/$t.log | head -5)"
done
wait
cat $OUT/san/summary.txt
timeout 100 build-dev/bench/cmalloc_bench --only survey --allocator ScatterAlloc --allocator XMalloc --csv $OUT/survey.csv > $OUT/survey.log 2>&1
echo "survey: exit $?"; grep survey $OUT/survey.csv | cut -d, -f1-5,9
echo "total $((SECONDS - t0)) s"
