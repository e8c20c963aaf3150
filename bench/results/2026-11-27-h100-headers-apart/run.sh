#!/usr/bin/env bash
# Block headers kept apart from the blocks (every block 128-byte aligned):
# every device target of the working tree built (scripts/build-gpu.sh), and
# main (the commit before: .calib/src-main, git archive of it) built for the
# heap benchmark and the examples with heap targets; then, interleaved, two
# rounds of soa_bench (do_all, empty, scalability) and of the examples at
# their benchmark sizes, main and tree, with the baselines; then the table
# of issue 21's targets for the tree (run_examples.py, heap and baseline,
# 3 runs each, as in ../2026-11-27-h100-final/). The results come back as
# one archive.
#   bench/results/2026-11-27-h100-headers-apart/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
t0=$SECONDS
export PATH=/usr/local/cuda/bin:$PATH
D=${DEPS_PREFIX:-$PWD/.gpu-deps/usr}
lib=$D/lib/x86_64-linux-gnu
cfg=(-DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF
     -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include
     -DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a)
(cmake -S .calib/src-main -B build-main -G Ninja "${cfg[@]}" >"$out/main-configure.log" 2>&1 &&
  cmake --build build-main -j 4 --target soa_bench wator_dynasoar gol_dynasoar sugarscape_dynasoar nbody_dynasoar \
    >"$out/main-build.log" 2>&1; echo "main build: exit $? at $((SECONDS - t0)) s") &
DEPS_PREFIX=$D JOBS=12 scripts/build-gpu.sh >"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
echo "tree built at $((SECONDS - t0)) s"
wait
B=build-gpu/bin
for r in 1 2; do
  timeout 150 build-main/bench/soa_bench --only do_all --only empty --only scalability --csv "$out/soa-main-$r.csv" >/dev/null 2>&1
  echo "soa_bench main $r: exit $?"
  timeout 150 $B/soa_bench --only do_all --only empty --only scalability --csv "$out/soa-tree-$r.csv" >/dev/null 2>&1
  echo "soa_bench tree $r: exit $?"
done
for f in "$out"/soa-*.csv; do
  echo "== ${f##*/}: $(grep -E '^do_all,dynasoar,(1048576|16777216|67108864),|^empty_parallel_do,gpu_events,|^(alloc|free),dynasoar,1048576,1,' "$f" | cut -d, -f1,3,5,11 | cut -c1-48 | tr '\n' ' ')"
done
for r in 1 2; do
  $B/wator_baseline --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-baseline-$r.json"
  $B/nbody_baseline --bodies 20000 --steps 1000 --quiet --json >"$out/nbody-baseline-$r.json"
  for v in main tree; do
    e=$B; [[ $v == main ]] && e=build-main/example
    $e/wator_dynasoar --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-$v-$r.json"
    $e/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json >"$out/gol-$v-$r.json"
    $e/sugarscape_dynasoar --width 1700 --height 1700 --steps 500 --quiet --json >"$out/sugarscape-$v-$r.json"
    $e/nbody_dynasoar --bodies 20000 --steps 1000 --quiet --json >"$out/nbody-$v-$r.json"
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/*-[12].json")):
    d = json.load(open(f))
    print(f"{os.path.basename(f):26} {d['total_ms']:>9.1f} {d.get('checksum', d.get('float_checksum'))} {d.get('phases_ms')}")
PY
ex() {  # name example args... [--rtol X]
  local name=$1 example=$2; shift 2
  local rtol=()
  if [[ ${*: -2:1} == --rtol ]]; then rtol=(--rtol "${*: -1}"); set -- "${@:1:$#-2}"; fi
  python3 bench/examples/run_examples.py --bin $B --example "$example" --name "$name" --args "$*" \
    --variants dynasoar,baseline --reps 3 --timeout 60 --out "$out" "${rtol[@]}" 2>&1 | tail -3
}
ex wator wator --width 2048 --height 2560 --steps 500
ex nbody nbody --bodies 20000 --steps 3000 --rtol 0.02
ex nbody-collisions nbody --bodies 20000 --steps 3000 --collisions --rtol 0.02
ex gol-soup gol --width 2048 --height 2048 --steps 300 --density 0.3
ex gol-acorn-large gol --pattern example/gol/patterns/acorn.cells --width 12699 --height 12652 --steps 300
ex sugarscape sugarscape --width 1700 --height 1700 --steps 500
$B/soa_bench --only empty --only do_all --only scalability --only utilisation --csv "$out/soa_bench.csv" >"$out/soa_bench.log" 2>&1
echo "soa_bench: exit $?"
grep -E '^do_all,dynasoar|^empty_parallel_do|^(alloc|free),dynasoar,1048576,1,|^utilisation' "$out/soa_bench.csv" | cut -d, -f1-5,10,11 | cut -c1-110
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
