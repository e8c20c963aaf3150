#!/usr/bin/env bash
# Two changes to the heap, three builds in one call on one GPU, run interleaved:
#   main = the commit before both (.calib/src-main, git archive of it),
#   acq  = main + slot reservation an acquire (was acq_rel) and freeing a
#          release (was acq_rel) read-modify-write (.calib/src-acq),
#   run  = the working tree: acq + parallel_new_indexed on a run of
#          consecutive free blocks, found by arithmetic without the table.
#   bench/results/2026-11-27-h100-alloc-orders/run.sh OUT
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
ex="soa_bench wator_dynasoar gol_dynasoar nbody_dynasoar sugarscape_dynasoar"
base="wator_baseline gol_baseline nbody_baseline sugarscape_baseline"
build() {  # name source targets...
  local n=$1 src=$2; shift 2
  cmake -S "$src" -B "build-$n" -G Ninja "${cfg[@]}" >"$out/$n-configure.log" 2>&1 &&
    timeout 420 cmake --build "build-$n" -j 5 --target "$@" >"$out/$n-build.log" 2>&1
  echo "$n build: exit $? at $((SECONDS - t0)) s"
}
build main .calib/src-main $ex &
build acq .calib/src-acq $ex &
build run . $ex $base soa_test api_test soa_stress_test
wait
for t in soa_test api_test soa_stress_test; do
  timeout 120 build-run/test/$t >"$out/$t.txt" 2>&1
  echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' "$out/$t.txt" | tr '\n' ' ')"
done
for round in 1 2; do
  for b in main acq run; do
    timeout 90 build-$b/bench/soa_bench --only scalability --only empty --csv "$out/soa-$b-$round.csv" >/dev/null 2>&1
    echo "soa_bench $b $round: exit $?"
  done
done
for f in "$out"/soa-*.csv; do
  echo "== ${f##*/}: $(grep -E '^(alloc|free),dynasoar,1048576,1,|^empty_parallel_do,gpu_events,1864135' "$f" | cut -d, -f1,3,5 | tr '\n' ' ')"
done
run() {  # build variant round
  local b=$1 v=$2 r=$3 e=build-$1/example
  $e/wator_$v --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-$v-$b-$r.json"
  $e/gol_$v --width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json >"$out/gol-$v-$b-$r.json"
  $e/nbody_$v --bodies 20000 --steps 1000 --quiet --json >"$out/nbody-$v-$b-$r.json"
  $e/sugarscape_$v --width 1700 --height 1700 --steps 500 --quiet --json >"$out/sugarscape-$v-$b-$r.json"
}
for r in 1 2; do
  run run baseline $r
  for b in main acq run; do run $b dynasoar $r; done
done
python3 - "$out" <<'PY'
import json, glob, sys, os
out = sys.argv[1]
for f in sorted(glob.glob(out + "/*.json")):
    try:
        d = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    ph = d.get("phases_ms", {})
    print(os.path.basename(f), d.get("total_ms"), d.get("checksum"),
          " ".join(f"{k}={v:.1f}" for k, v in ph.items()) if isinstance(ph, dict) else ph)
PY
echo "total $((SECONDS - t0)) s"
