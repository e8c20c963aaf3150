#!/usr/bin/env bash
# Runs every example simulation on every back end and its baseline at the
# benchmark sizes (DynaSOAr paper Sec. 6 where it gives one) and writes
# <name>.csv and <name>.md per problem into OUT (bench/examples/run_examples.py
# checks that all variants agree on the checksum), and wa-tor's per-step
# trace of every variant (wator-trace-<variant>.csv). Plots: plot_results.py OUT.
#
#   bench/examples/run_all.sh BIN_DIR OUT_DIR [REPS] [TIMEOUT_S]
#   SMALL=1 bench/examples/run_all.sh ...   # the golden-run sizes: a quick check of the pipeline
#   ONLY='^(wator|nbody)' bench/examples/run_all.sh ...   # the problems whose names match (wator-trace: the traces)
#
# A variant that exceeds TIMEOUT_S seconds is recorded as failed with the
# reason; the others still run.
set -uo pipefail
bin=${1:?usage: run_all.sh BIN_DIR OUT_DIR [REPS] [TIMEOUT_S]}
out=${2:?usage: run_all.sh BIN_DIR OUT_DIR [REPS] [TIMEOUT_S]}
reps=${3:-3}
timeout=${4:-120}
here=$(dirname "$0")
status=0
run() {  # name example args... [--rtol X: for run_examples.py, not the program]
  local name=$1 example=$2; shift 2
  [[ $name =~ ${ONLY:-.} ]] || return 0
  local rtol=()
  if [[ ${*: -2:1} == --rtol ]]; then rtol=(--rtol "${*: -1}"); set -- "${@:1:$#-2}"; fi
  python3 "$here/run_examples.py" --bin "$bin" --example "$example" --name "$name" --args "$*" \
    --reps "$reps" --timeout "$timeout" --out "$out" "${rtol[@]}" || status=1
}
trace_wator() {  # wa-tor per step on every variant (paper Fig. 12a, 12d): wator-trace-<variant>.csv
  local exe v
  [[ wator-trace =~ ${ONLY:-.} ]] || return 0
  for exe in "$bin"/wator_*; do
    [[ -x $exe ]] || continue
    v=${exe##*/wator_}
    timeout "$timeout" "$exe" "$@" --quiet --trace "$out/wator-trace-$v.csv" >/dev/null \
      || echo "wa-tor trace of $v: stopped (exit $?); the file has the steps done by then"
  done
}
mkdir -p "$out"
if [[ ${SMALL:-0} == 1 ]]; then
  run wator wator --width 96 --height 64 --steps 60 --seed 7
  trace_wator --width 96 --height 64 --steps 60 --seed 7
  run nbody nbody --bodies 256 --steps 100
  run nbody-collisions nbody --bodies 256 --steps 100 --collisions
  run gol-soup gol --width 96 --height 80 --steps 80 --seed 7
  run kdtree-soup kdtree --scene soup --triangles 4000 --seed 7
  run barnes-hut barnes_hut --bodies 2000 --steps 10 --seed 7
  run sugarscape sugarscape --width 80 --height 60 --steps 60 --seed 7
  run traffic traffic --intersections 150 --steps 300 --seed 7
  run generation generation --width 96 --height 80 --steps 80 --seed 7 --states 8
  run structure structure --nodes 3000 --steps 40 --seed 7
  exit $status
fi
run wator wator --width 2048 --height 2560 --steps 500
trace_wator --width 2048 --height 2560 --steps 500
run nbody nbody --bodies 20000 --steps 3000 --rtol 0.02
run nbody-collisions nbody --bodies 20000 --steps 3000 --collisions --rtol 0.02
run gol-soup gol --width 2048 --height 2048 --steps 300 --density 0.3
run gol-acorn-large gol --pattern example/gol/patterns/acorn.cells --width 12699 --height 12652 --steps 300
# k-d tree build (Vinkler & Havran 2014, Table 3 sizes reach 2.2M triangles), one line per scene
run kdtree-soup kdtree --scene soup --triangles 2000000
run kdtree-surface kdtree --scene surface --triangles 2000000
run kdtree-clustered kdtree --scene clustered --triangles 2000000
# Barnes-Hut with a dynamic quadtree (the original DynaSOAr's barnes-hut-dynamic)
run barnes-hut barnes_hut --bodies 300000 --steps 10
# Sugarscape at the original DynaSOAr example's grid size
run sugarscape sugarscape --width 1700 --height 1700 --steps 500
# Traffic on the original DynaSOAr example's network, for its number of iterations
run traffic traffic --intersections 17500 --steps 12000
# Generation on the original DynaSOAr example's grid, past the soup's die-off
run generation generation --width 5000 --height 5000 --steps 1000
# The structure of nodes and springs at the original DynaSOAr example's size
run structure structure --nodes 1500000 --steps 500
exit $status
