#!/usr/bin/env bash
# Second call, on the binaries run-tier.sh built (the same machine): issue
# 21's tables in one run. The examples with a heap-versus-baseline target at
# their benchmark sizes (the heap and the baseline, 3 runs each,
# run_examples.py), the k-d tree's object form on the heap against the host
# baseline on its three scenes at 2M triangles (3 runs each), and the heap
# benchmark's do-all, empty parallel_do, allocation and utilisation
# (soa_bench). The results come back as one archive.
#   bench/results/2026-11-28-h100-final/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
t0=$SECONDS
[[ -x build-gpu/bin/soa_bench ]] || { echo "no build-gpu/bin: run run-tier.sh first"; exit 1; }
ex() {  # name example args... [--rtol X]
  local name=$1 example=$2; shift 2
  local rtol=()
  if [[ ${*: -2:1} == --rtol ]]; then rtol=(--rtol "${*: -1}"); set -- "${@:1:$#-2}"; fi
  python3 bench/examples/run_examples.py --bin build-gpu/bin --example "$example" --name "$name" --args "$*" \
    --variants dynasoar,baseline --reps 3 --timeout 60 --out "$out" "${rtol[@]}" 2>&1 | tail -3
}
ex wator wator --width 2048 --height 2560 --steps 500
ex nbody nbody --bodies 20000 --steps 3000 --rtol 0.02
ex nbody-collisions nbody --bodies 20000 --steps 3000 --collisions --rtol 0.02
ex gol-soup gol --width 2048 --height 2048 --steps 300 --density 0.3
ex gol-acorn-large gol --pattern example/gol/patterns/acorn.cells --width 12699 --height 12652 --steps 300
ex sugarscape sugarscape --width 1700 --height 1700 --steps 500
for scene in soup surface clustered; do ex kdtree-$scene kdtree --scene $scene --triangles 2000000; done
echo "examples at $((SECONDS - t0)) s"
build-gpu/bin/soa_bench --only empty --only do_all --only scalability --only utilisation --csv "$out/soa_bench.csv" >"$out/soa_bench.log" 2>&1
echo "soa_bench: exit $?"
grep -E '^do_all,dynasoar|^empty_parallel_do|^(alloc|free),dynasoar,1048576,1,|^utilisation' "$out/soa_bench.csv" | cut -d, -f2,3,5,10,11 | cut -c1-90
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
