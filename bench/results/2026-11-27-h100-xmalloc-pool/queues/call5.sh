#!/bin/bash
# XMalloc's queue geometry on the examples and the survey. One build (b289338
# plus an experiment-only patch: Options' queues and queue_slots default to
# $XM_QUEUES and $XM_SLOTS), so every variant is the same binary. wa-tor and
# the soup at the benchmark size in the examples' default pool of b289338
# (800 and 512 MiB), then the survey of XMalloc (cmalloc_bench).
set -u
rm -rf xb && mkdir -p xb && tar -C xb -xJf .calib/x/bins5.txz
B=xb/bin
one() {  # name, command...
  local name=$1; shift
  local t0=$(date +%s%N); timeout 60 "$@" > $OUT/$name.txt 2>&1; local rc=$?; local t1=$(date +%s%N)
  echo "$name rc=$rc wall_ms=$(( (t1-t0)/1000000 )) $(grep -m1 total $OUT/$name.txt | tr -s ' ') $(grep -m1 checksum $OUT/$name.txt | tr -s ' ') $(grep -m1 -o 'out of memory' $OUT/$name.txt)"
}
for g in 8192:16 1024:16 256:16 64:16 16:16 256:64; do
  export XM_QUEUES=${g%%:*} XM_SLOTS=${g##*:}
  one wator-q${XM_QUEUES}x${XM_SLOTS} $B/wator_xmalloc --quiet
  one soup-q${XM_QUEUES}x${XM_SLOTS} $B/gol_xmalloc --quiet
done
[ -x $B/cmalloc_bench ] || exit 0
for g in 8192:16 1024:16 256:16 64:16 16:16 256:64; do
  export XM_QUEUES=${g%%:*} XM_SLOTS=${g##*:}
  timeout 100 $B/cmalloc_bench --only survey --allocator XMalloc --csv $OUT/survey-q${XM_QUEUES}x${XM_SLOTS}.csv > $OUT/survey-q${XM_QUEUES}x${XM_SLOTS}.log 2>&1
  echo "survey q${XM_QUEUES}x${XM_SLOTS}: exit $?"; grep -v '^#' $OUT/survey-q${XM_QUEUES}x${XM_SLOTS}.csv | cut -d, -f1-8 | head -12
done
