#!/bin/bash
# XMalloc at the benchmark sizes in larger pools than the examples' default.
set -u
mkdir -p xb && tar -C xb -xJf .calib/x/bins.txz
B=xb/bin
run() { local name=$1; shift; local t0=$(date +%s%N); timeout 90 "$@" > $OUT/$name.txt 2>&1; local rc=$?; local t1=$(date +%s%N); echo "$name rc=$rc wall_ms=$(( (t1-t0)/1000000 )) $(grep -m1 -E 'total' $OUT/$name.txt) $(grep -m1 checksum $OUT/$name.txt) $(grep -m1 -i 'out of memory' $OUT/$name.txt | cut -c1-80) last: $(grep 'step' $OUT/$name.txt | grep -v total | tail -1)"; }
run gol-xmalloc-2048 $B/gol_xmalloc --heap-mib 2048
run gol-xmalloc-4096 $B/gol_xmalloc --heap-mib 4096
run wator-xmalloc-3200 $B/wator_xmalloc --heap-mib 3200
run wator-xmalloc-2048 $B/wator_xmalloc --heap-mib 2048
