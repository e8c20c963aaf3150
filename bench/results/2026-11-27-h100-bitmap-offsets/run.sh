#!/usr/bin/env bash
# The bitmap search computing each level's offset instead of loading it:
# two builds in one call on one GPU, run interleaved.
#   head  = c4748ad (.calib/src-head, git archive of it),
#   tree  = the working tree: Bitmap::try_find_set reads only the handle's
#           container address, capacity and level count, and computes each
#           level's size and offset; the heap's leader reads
#           options.active_retries once.
#   bench/results/2026-11-27-h100-bitmap-offsets/run.sh OUT
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
ex="soa_bench wator_dynasoar gol_dynasoar sugarscape_dynasoar nbody_dynasoar"
build() {  # name source targets...
  local n=$1 src=$2; shift 2
  cmake -S "$src" -B "build-$n" -G Ninja "${cfg[@]}" >"$out/$n-configure.log" 2>&1 &&
    timeout 420 cmake --build "build-$n" -j 8 --target "$@" >"$out/$n-build.log" 2>&1
  echo "$n build: exit $? at $((SECONDS - t0)) s"
}
build head .calib/src-head $ex &
build tree . $ex wator_baseline bitmap_test bitmap_stress_test soa_stress_test
wait
for t in bitmap_test bitmap_stress_test soa_stress_test; do
  timeout 120 build-tree/test/$t >"$out/$t.txt" 2>&1
  echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' "$out/$t.txt" | tr '\n' ' ')"
done
for round in 1 2; do
  for b in head tree; do
    timeout 90 build-$b/bench/soa_bench --only scalability --csv "$out/soa-$b-$round.csv" >/dev/null 2>&1
    echo "soa_bench $b $round: exit $?"
  done
done
for f in "$out"/soa-*.csv; do
  echo "== ${f##*/}: $(grep -E '^(alloc|free),dynasoar,1048576,1,' "$f" | cut -d, -f1,3,5 | tr '\n' ' ')"
done
for r in 1 2 3; do
  build-tree/example/wator_baseline --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-baseline-$r.json"
  for b in head tree; do
    e=build-$b/example
    $e/wator_dynasoar --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-$b-$r.json"
    $e/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json >"$out/gol-$b-$r.json"
    [[ $r == 3 ]] && continue
    $e/sugarscape_dynasoar --width 1700 --height 1700 --steps 500 --quiet --json >"$out/sugarscape-$b-$r.json"
    $e/nbody_dynasoar --bodies 20000 --steps 1000 --quiet --json >"$out/nbody-$b-$r.json"
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try:
        d = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    ph = d.get("phases_ms", {})
    print(os.path.basename(f), d.get("total_ms"), d.get("checksum"), " ".join(f"{k}={v:.1f}" for k, v in ph.items()))
PY
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" --exclude='*-build.log' --exclude='*-configure.log' . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
