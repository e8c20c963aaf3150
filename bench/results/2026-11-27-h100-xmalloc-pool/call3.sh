#!/bin/bash
# The examples' default pool on XMalloc (4x the estimate since the change):
# golden runs of the two rebuilt programs, then wa-tor and the soup at the
# benchmark sizes with the baseline, the heap and ScatterAlloc in the same run.
set -u
rm -rf xb && mkdir -p xb && tar -C xb -xJf .calib/x/bins3.txz
B=xb/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for ex in wator gol; do
  grep -v '^#' example/$ex/golden.txt | while IFS= read -r line; do
    [ -z "$line" ] && continue
    args=${line%% => *}; sum=${line##* => }
    timeout 60 $B/${ex}_xmalloc $args --quiet --expect "$sum" > /tmp/g.log 2>&1
    echo "${ex}_xmalloc golden $args: exit $? $(grep -m1 -E 'checksum|error' /tmp/g.log)"
  done
done
mkdir -p $OUT/tables
V=baseline,dynasoar,scatter_alloc,xmalloc
python3 bench/examples/run_examples.py --bin $B --example wator --variants $V --args "--width 2048 --height 2560 --steps 500" --reps 1 --timeout 60 --out $OUT/tables --name wator > $OUT/tables/wator.log 2>&1; echo "wator: exit $?"
python3 bench/examples/run_examples.py --bin $B --example gol --variants $V --args "--width 2048 --height 2048 --steps 300 --density 0.3" --reps 1 --timeout 60 --out $OUT/tables --name gol-soup > $OUT/tables/gol-soup.log 2>&1; echo "gol-soup: exit $?"
cat $OUT/tables/*.md
