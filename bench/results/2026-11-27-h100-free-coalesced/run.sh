#!/usr/bin/env bash
# Coalesced frees and the wa-tor loads, three builds in one call on one GPU, run interleaved:
#   head = the commit before both (.calib/src-head, git archive of it),
#   free = head + frees of one block by lanes of a warp served by one
#          leader: heap.h and warp.h of the working tree (.calib/src-free),
#   tree = the working tree: free + wa-tor's prepare methods reading the
#          position before their first store.
# This is the second call's script; the first call (first/) ran it with
# first/free-match-any.patch as `free` (every block's lanes grouped by two
# match_any) and first/wator-loads.patch (all of wa-tor's methods reading
# their fields first) in `tree`, and without DYNASOAR_SANITIZER=1 for the
# sanitizer runs (CudaMalloc's double destroy then reads freed memory, which
# memcheck reports; the test is skipped when the variable is set).
#   bench/results/2026-11-27-h100-free-coalesced/run.sh OUT
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
ex="soa_bench wator_dynasoar gol_dynasoar sugarscape_dynasoar"
base="wator_baseline gol_baseline sugarscape_baseline"
build() {  # name source targets...
  local n=$1 src=$2; shift 2
  cmake -S "$src" -B "build-$n" -G Ninja "${cfg[@]}" >"$out/$n-configure.log" 2>&1 &&
    timeout 420 cmake --build "build-$n" -j 5 --target "$@" >"$out/$n-build.log" 2>&1
  echo "$n build: exit $? at $((SECONDS - t0)) s"
}
build head .calib/src-head $ex &
build free .calib/src-free $ex &
build tree . $ex $base soa_test api_test soa_stress_test errors_test
wait
for t in soa_test api_test soa_stress_test errors_test; do
  timeout 120 build-tree/test/$t >"$out/$t.txt" 2>&1
  echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' "$out/$t.txt" | tr '\n' ' ')"
done
for round in 1 2; do
  for b in head free tree; do
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
  $e/sugarscape_$v --width 1700 --height 1700 --steps 500 --quiet --json >"$out/sugarscape-$v-$b-$r.json"
}
for r in 1 2; do
  run tree baseline $r
  for b in head free tree; do run $b dynasoar $r; done
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
for t in memcheck synccheck; do
  DYNASOAR_SANITIZER=1 timeout 150 compute-sanitizer --tool $t build-tree/test/errors_test --gtest_filter='*Destroy*:*Double*:*Twice*' >"$out/$t-errors.txt" 2>&1
  echo "$t errors_test: exit $? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/$t-errors.txt" | tr '\n' ' ')"
  DYNASOAR_SANITIZER=1 timeout 150 compute-sanitizer --tool $t build-tree/test/soa_stress_test >"$out/$t-stress.txt" 2>&1
  echo "$t soa_stress_test: exit $? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/$t-stress.txt" | tr '\n' ' ')"
done
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" --exclude='*-build.log' --exclude='*-configure.log' . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
