#!/usr/bin/env bash
# Soup and wa-tor on ScatterAlloc: A = main, d = window 16, C = window 4, E = window 8; survey of every window in one process.
set -uo pipefail
T="wator_scatter_alloc gol_scatter_alloc"
( .calib/build.sh .calib/src-W8 build-E $T > $OUT/buildE.log 2>&1 ) &
.calib/build.sh . build-d cmalloc_bench > /dev/null 2>&1; wait; tail -1 $OUT/buildE.log
for r in 1 2; do
  for t in A d C E; do
    s=$(timeout 30 build-$t/example/gol_scatter_alloc --width 2048 --height 2048 --steps 300 --density 0.3 2>&1 | grep -E "total" | tr -s ' ')
    w=$(timeout 30 build-$t/example/wator_scatter_alloc --width 2048 --height 2560 --steps 500 2>&1 | grep -E "total" | tr -s ' ')
    echo "$t round $r: soup $s wator $w"
  done
done
for r in 1 2; do
timeout 200 build-d/bench/cmalloc_bench --only survey --allocator ScatterAlloc --allocator XMalloc --active-window 4 --active-window 8 --active-window 32 --csv $OUT/W-$r.csv >/dev/null 2>&1
grep survey_malloc $OUT/W-$r.csv | grep -v "paper_search\|uncoalesced" | cut -d, -f2,3,5
done
