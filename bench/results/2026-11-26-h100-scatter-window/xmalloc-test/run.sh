#!/usr/bin/env bash
set -uo pipefail
.calib/build.sh .calib/src-W1 build-W1 cmalloc_test > $OUT/bW1.log 2>&1 &
.calib/build.sh . build-d cmalloc_test > $OUT/bd.log 2>&1 || { tail -20 $OUT/bd.log; exit 1; }
wait
F='CMallocXMalloc.WarpsThatFreeWholeBlocksTakeThemBack'
for r in 1 2 3; do
for t in d W1; do
  timeout 100 build-$t/test/cmalloc_test --gtest_filter=$F --gtest_repeat=8 > $OUT/x-$t-$r.log 2>&1
  echo "$t round $r: $(grep -c '^\[       OK' $OUT/x-$t-$r.log) ok, $(grep -c '^\[  FAILED  \] CMallocXMalloc.Warps.*ms)' $OUT/x-$t-$r.log) failed; $(grep -A3 'c\[1\]' $OUT/x-$t-$r.log | grep 'Which is: [1-9]' | tr -s ' ' | tr '\n' ' ' | cut -c1-200)"
done
done
