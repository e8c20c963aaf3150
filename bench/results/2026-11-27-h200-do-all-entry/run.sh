#!/usr/bin/env bash
# The do-all's list entry: three builds in one call on one GPU, run interleaved.
#   main = the commit before (.calib/src-main, git archive of it): the
#          snapshot tested before the block number is loaded (the compiler
#          put that load behind the test: three waits per visited block);
#   tree = the working tree: number and snapshot loaded together, before
#          the test (two waits);
#   pre  = tree + the next entry loaded before the method runs
#          (.calib/src-pre).
# Also Nsight Compute on the n-body baseline's force kernel (the heap's was
# profiled in 2026-11-27-h200-profiles/, whose script had a wrong regex for it).
#   bench/results/2026-11-27-h200-do-all-entry/run.sh OUT
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
    timeout 420 cmake --build "build-$n" -j 6 --target "$@" >"$out/$n-build.log" 2>&1
  echo "$n build: exit $? at $((SECONDS - t0)) s"
}
build main .calib/src-main $ex &
build pre .calib/src-pre $ex &
build tree . $ex wator_baseline gol_baseline sugarscape_baseline nbody_baseline api_test soa_test
wait
for t in api_test soa_test; do
  timeout 200 build-tree/test/$t >"$out/$t.txt" 2>&1
  echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' "$out/$t.txt" | tr '\n' ' ')"
done
for round in 1 2; do
  for b in main tree pre; do
    timeout 120 build-$b/bench/soa_bench --only do_all --only empty --csv "$out/soa-$b-$round.csv" >/dev/null 2>&1
    echo "soa_bench $b $round: exit $?"
  done
done
for f in "$out"/soa-*.csv; do
  echo "== ${f##*/}: $(grep -E '^do_all,dynasoar,(1048576|16777216|67108864),|^empty_parallel_do,gpu_events,' "$f" | cut -d, -f3,5,11 | tr '\n' ' ')"
done
E=build-tree/example
for r in 1 2; do
  $E/wator_baseline --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-baseline-$r.json"
  $E/sugarscape_baseline --width 1700 --height 1700 --steps 500 --quiet --json >"$out/sugarscape-baseline-$r.json"
  $E/nbody_baseline --bodies 20000 --steps 1000 --quiet --json >"$out/nbody-baseline-$r.json"
  for b in main tree pre; do
    e=build-$b/example
    $e/wator_dynasoar --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-$b-$r.json"
    $e/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json >"$out/gol-$b-$r.json"
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
    ph = d.get("phases_ms") or d.get("phases") or {}
    print(f"{os.path.basename(f):28} {d.get('total_ms', d.get('time_ms')):>10} {d.get('checksum', d.get('float_checksum'))} {ph}")
PY
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
"$NCU" --kernel-name-base demangled --kernel-name 'regex:Forces<.bool.0>' --launch-skip 10 --launch-count 1 --set full \
  -o "$out/nbody-base" $E/nbody_baseline --bodies 20000 --steps 12 --quiet >"$out/nbody-base-ncu.log" 2>&1
echo "ncu: exit $?"
"$NCU" --import "$out/nbody-base.ncu-rep" --page details > "$out/nbody-base-details.txt" 2>&1
"$NCU" --import "$out/nbody-base.ncu-rep" --page source --csv --print-source sass | gzip > "$out/nbody-base-sass.csv.gz"
rm -f "$out/nbody-base.ncu-rep"
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
