#!/usr/bin/env bash
set -uo pipefail
.calib/build.sh .calib/src-X1 build-X1 cmalloc_test > $OUT/bX1.log 2>&1 &
.calib/build.sh .calib/src-X2 build-X2 cmalloc_test > $OUT/bX2.log 2>&1
wait
F='CMallocXMalloc.WarpsThatFreeWholeBlocksTakeThemBack'
for t in X1 X2 d; do
  timeout 150 build-$t/test/cmalloc_test --gtest_filter=$F --gtest_repeat=8 > $OUT/x-$t.log 2>&1
  echo "$t: $(grep -c '^\[       OK' $OUT/x-$t.log) ok, $(grep -c '^\[  FAILED  \] CMallocXMalloc.Warps.*ms)' $OUT/x-$t.log) failed; $(grep -A3 'c\[1\]' $OUT/x-$t.log | grep 'Which is: [1-9]' | tr -s ' ' | tr '\n' ' ' | cut -c1-200) $(grep -o '(.... ms)' $OUT/x-$t.log | head -3 | tr '\n' ' ')"
done
