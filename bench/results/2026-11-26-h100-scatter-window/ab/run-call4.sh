#!/usr/bin/env bash
# A = main, B = working tree; survey of ScatterAlloc and XMalloc interleaved.
set -uo pipefail
.calib/build.sh .calib/src-A build-A cmalloc_bench || exit 1
.calib/build.sh . build-d cmalloc_bench || exit 1
for r in 1 2; do
  timeout 200 build-A/bench/cmalloc_bench --only survey --allocator ScatterAlloc --allocator XMalloc --csv $OUT/A-$r.csv >/dev/null 2>&1
  timeout 200 build-d/bench/cmalloc_bench --only survey --allocator ScatterAlloc --allocator XMalloc --active-window 1 --csv $OUT/B-$r.csv >/dev/null 2>&1
done
for f in $OUT/A-*.csv $OUT/B-*.csv; do echo "== $f"; grep survey_malloc $f | grep -v "paper_search\|uncoalesced" | cut -d, -f2,3,5; done
