#!/usr/bin/env bash
# Issue 21's targets with the block headers apart and device_do's full blocks
# unrolled completely (the commit that lands them): every
# device target built (scripts/build-gpu.sh), then on one GPU the examples
# with a heap-versus-baseline target at their benchmark sizes (the heap and
# the baseline only, 3 runs each, run_examples.py) and the heap benchmark's
# do-all, empty parallel_do and allocation (soa_bench). The results come
# back as one archive (the call returns a limited number of files).
#   bench/results/2026-11-27-h100-headers-final/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
t0=$SECONDS
DEPS_PREFIX=${DEPS_PREFIX:-$PWD/.gpu-deps/usr} JOBS=16 scripts/build-gpu.sh >"$out/build.log" 2>&1 \
  || { tail -20 "$out/build.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
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
build-gpu/bin/soa_bench --only empty --only do_all --only scalability --only utilisation --csv "$out/soa_bench.csv" >"$out/soa_bench.log" 2>&1
echo "soa_bench: exit $?"
grep -E '^do_all,dynasoar|^empty_parallel_do|^(alloc|free),dynasoar,1048576,1,|^utilisation' "$out/soa_bench.csv" | cut -d, -f2,3,5,10,11 | cut -c1-90
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
