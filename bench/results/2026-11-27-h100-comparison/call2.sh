#!/usr/bin/env bash
# Call 2: comparison part B on the binaries of call 1 (build-gpu/bin, kept on the warm machine).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
[[ -x build-gpu/bin/wator_xmalloc ]] || { mkdir -p build-gpu && tar -C build-gpu -xJf .calib/bin.txz || exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local lim=$1; shift; s=$SECONDS; ONLY="$1" bench/examples/run_all.sh build-gpu/bin $OUT/tables 1 $lim >> $OUT/tables-b.log 2>&1; echo "$1: exit $?, $((SECONDS - s)) s"; }
run 20 '^(gol-acorn-large)$'
run 45 '^(nbody|nbody-collisions)$'
run 45 '^(barnes-hut)$'
run 30 '^(kdtree-soup)$'
s=$SECONDS
timeout 60 build-gpu/bin/wator_xmalloc --width 2048 --height 2560 --steps 500 --heap-mib 4096 > $OUT/tables/wator-xmalloc-4gib.txt 2>&1
echo "wator_xmalloc 4 GiB: exit $?, $((SECONDS - s)) s: $(grep -E 'total|checksum' $OUT/tables/wator-xmalloc-4gib.txt | tr '\n' ' ')"
cd $OUT && tar czf tables-b.tgz tables && rm -rf tables
echo "total $((SECONDS - t0)) s"
