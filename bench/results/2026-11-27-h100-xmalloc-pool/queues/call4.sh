#!/bin/bash
# XMalloc's queues on wa-tor (benchmark size, 3200 MiB pool): the default
# 8192 queues of 16 slots per class against 1024 of 64 (the default before
# dfcc143) and 256 of 16; each program differs only in those defaults.
set -u
rm -rf xb && mkdir -p xb && tar -C xb -xJf .calib/x/bins4.txz
for v in q8192x16 q1024x64 q256x16 q8192x16; do
  t0=$(date +%s%N)
  timeout 90 xb/bin/wator_xmalloc_$v --heap-mib 3200 > $OUT/wator-$v.txt 2>&1; rc=$?
  t1=$(date +%s%N)
  echo "$v rc=$rc wall_ms=$(( (t1-t0)/1000000 )) $(grep -m1 total $OUT/wator-$v.txt) $(grep -m1 checksum $OUT/wator-$v.txt)"
  mv $OUT/wator-$v.txt $OUT/wator-$v-$(date +%s).txt
done
