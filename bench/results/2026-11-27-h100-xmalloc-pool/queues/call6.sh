#!/bin/bash
# As run5.sh (same binaries, queues from $XM_QUEUES/$XM_SLOTS), but in pools
# that XMalloc finishes in (wa-tor 3200 MiB, the soup 2048 MiB), and the
# survey of XMalloc with the default 8192 queues in the same call.
set -u
rm -rf xb && mkdir -p xb && tar -C xb -xJf .calib/x/bins5.txz
B=xb/bin
one() {  # name, command...
  local name=$1; shift
  local t0=$(date +%s%N); timeout 45 "$@" > $OUT/$name.txt 2>&1; local rc=$?; local t1=$(date +%s%N)
  echo "$name rc=$rc wall_ms=$(( (t1-t0)/1000000 )) $(grep -m1 total $OUT/$name.txt | tr -s ' ') $(grep -m1 checksum $OUT/$name.txt | tr -s ' ') $(grep -m1 -o 'out of memory' $OUT/$name.txt)"
}
for g in 16:16 64:16 256:16; do
  export XM_QUEUES=${g%%:*} XM_SLOTS=${g##*:}
  one wator-q${XM_QUEUES}x${XM_SLOTS}-3200 $B/wator_xmalloc --quiet --heap-mib 3200
  one soup-q${XM_QUEUES}x${XM_SLOTS}-2048 $B/gol_xmalloc --quiet --heap-mib 2048
done
for g in 8192:16 256:16 64:16 16:16; do
  export XM_QUEUES=${g%%:*} XM_SLOTS=${g##*:}
  timeout 60 $B/cmalloc_bench --only survey --allocator XMalloc --csv $OUT/survey-q${XM_QUEUES}x${XM_SLOTS}.csv > $OUT/survey-q${XM_QUEUES}x${XM_SLOTS}.log 2>&1
  echo "survey q${XM_QUEUES}x${XM_SLOTS}: exit $?"; grep -v '^#' $OUT/survey-q${XM_QUEUES}x${XM_SLOTS}.csv | cut -d, -f1-5,9 | grep survey
done
