#!/bin/bash
# XMalloc on wa-tor and the soup: does the time depend on the pool's size?
set -u
mkdir -p xb && tar -C xb -xJf .calib/x/bins.txz
B=xb/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local name=$1; shift; local t0=$(date +%s%N); timeout 60 "$@" --quiet > $OUT/$name.txt 2>&1; local rc=$?; local t1=$(date +%s%N); echo "$name rc=$rc wall_ms=$(( (t1-t0)/1000000 )) $(grep -m1 -E 'total' $OUT/$name.txt) $(grep -m1 checksum $OUT/$name.txt)"; }
W="--width 2048 --height 2560 --steps 50 --seed 42"
run wator-scatter-default $B/wator_scatter_alloc $W
for m in 0 2048 4096 16384; do
  if [ $m = 0 ]; then run wator-xmalloc-default $B/wator_xmalloc $W; else run wator-xmalloc-$m $B/wator_xmalloc $W --heap-mib $m; fi
done
G="--width 2048 --height 2048 --density 0.3 --steps 10 --seed 42"
run gol-scatter-default $B/gol_scatter_alloc $G
for m in 0 4096 16384; do
  if [ $m = 0 ]; then run gol-xmalloc-default $B/gol_xmalloc $G; else run gol-xmalloc-$m $B/gol_xmalloc $G --heap-mib $m; fi
done
