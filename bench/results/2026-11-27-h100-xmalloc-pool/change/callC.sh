#!/bin/bash
# (callC: callB again with the cap of XMalloc's extra pool at 4 GiB; the tables come back as one archive.)
# XMalloc's default of 16 queues over ScatterAlloc: golden runs of its six
# example programs (built from the working tree), then every problem of the
# comparison with the baseline and the heap (programs of bd8d22e, code
# unchanged since) in the same run, reps 1.
set -u
trap 'tar -C $OUT -czf $OUT/tables.tgz tables && rm -rf $OUT/tables' EXIT
rm -rf xb && mkdir -p xb && tar -C xb -xJf .calib/x/bins7.txz
B=xb/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for ex in wator gol nbody barnes_hut kdtree; do
  for exe in $B/${ex}_xmalloc $B/${ex}_raw_xmalloc; do
    [ -x $exe ] || continue
    grep -v '^#' example/$ex/golden.txt | while IFS= read -r line; do
      [ -z "$line" ] && continue
      args=${line%% => *}; sum=${line##* => }
      timeout 60 $exe $args --quiet --expect "$sum" > /tmp/g.log 2>&1
      echo "$(basename $exe) golden $args: exit $? $(grep -m1 -E 'checksum|error' /tmp/g.log | tr -s ' ')"
    done
  done
done
T=$OUT/tables; mkdir -p $T
R() { local name=$1 ex=$2 v=$3; shift 3
  python3 bench/examples/run_examples.py --bin $B --example $ex --variants $v --args "$*" --reps 1 --timeout 60 --out $T --name $name > $T/$name.log 2>&1
  echo "$name: exit $?"; grep -E '^\| (baseline|dynasoar|scatter_alloc|xmalloc|raw_xmalloc) ' $T/$name.md | cut -d'|' -f2-4; }
R wator wator baseline,dynasoar,scatter_alloc,xmalloc --width 2048 --height 2560 --steps 500
R gol-soup gol baseline,dynasoar,scatter_alloc,xmalloc --width 2048 --height 2048 --steps 300 --density 0.3
R gol-acorn-large gol baseline,dynasoar,xmalloc --pattern example/gol/patterns/acorn.cells --width 12699 --height 12652 --steps 300
R nbody nbody baseline,dynasoar,xmalloc --bodies 20000 --steps 3000 --rtol 0.02
R nbody-collisions nbody baseline,dynasoar,xmalloc --bodies 20000 --steps 3000 --collisions --rtol 0.02
R barnes-hut barnes_hut baseline,dynasoar,xmalloc --bodies 300000 --steps 10
R kdtree-soup kdtree baseline,dynasoar,xmalloc,raw_xmalloc --scene soup --triangles 2000000
