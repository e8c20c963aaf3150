#!/usr/bin/env bash
# Issue 21's targets at 3debf53 (the code of the last full tier was f049611): every
# device target built (scripts/build-gpu.sh), then on one GPU the examples
# with a heap-versus-baseline target at their benchmark sizes (the heap and
# the baseline only, 3 runs each, run_examples.py) and the heap benchmark's
# do-all, empty parallel_do and allocation (soa_bench). The results come
# back as one archive (the call returns a limited number of files).
#   bench/results/2026-11-27-h100-final/run.sh OUT
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
build-gpu/bin/soa_bench --only empty --only do_all --only scalability --csv "$out/soa_bench.csv" >"$out/soa_bench.log" 2>&1
echo "soa_bench: exit $?"
grep -E '^do_all,dynasoar|^empty_parallel_do|^(alloc|free),dynasoar,1048576,1,' "$out/soa_bench.csv" | cut -d, -f2,3,5,10
# n-body's clocks: the heap's force kernel spreads its 313 heap blocks over
# all 132 multiprocessors, the baseline's 79 thread blocks of 256 threads
# leave 53 idle; under Nsight Compute's locked clocks the two kernels take
# the same time. The SM clock and power, sampled every 20 ms during one
# 3000-step run of each.
for v in dynasoar baseline; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 20 >"$out/clocks-nbody-$v.csv" &
  smi=$!
  sleep 1
  build-gpu/bin/nbody_$v --bodies 20000 --steps 3000 --quiet --json >"$out/clocks-nbody-$v.json"
  sleep 0.5
  kill $smi; wait $smi 2>/dev/null
  python3 - "$out/clocks-nbody-$v.csv" <<'PY'
import csv, sys, statistics
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) >= 4]
busy = [r for r in rows if float(r[3].split()[0]) > 150]
clk = [float(r[1].split()[0]) for r in busy]
pw = [float(r[3].split()[0]) for r in busy]
if clk:
    print(f"{sys.argv[1].rsplit('/', 1)[-1]}: {len(busy)} busy samples, SM clock median {statistics.median(clk):.0f} MHz "
          f"(min {min(clk):.0f}), power median {statistics.median(pw):.0f} W")
PY
done
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
