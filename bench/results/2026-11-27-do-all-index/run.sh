#!/usr/bin/env bash
# The snapshot next to the block list and the object index (issue 21): four
# builds in one call on one GPU, run interleaved.
#   main = the commit before both changes (.calib/src-main, git archive of it),
#   list = main + the snapshot list read with the list entry (.calib/src-list),
#   idx  = main + parallel_new_indexed, the grid examples' cells found by
#          ObjectIndex instead of a table of pointers (.calib/src-idx),
#   both = the working tree (list + idx).
#   bench/results/2026-11-27-snapshot-list/run.sh OUT
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
    timeout 420 cmake --build "build-$n" -j 4 --target "$@" >"$out/$n-build.log" 2>&1
  echo "$n build: exit $? at $((SECONDS - t0)) s"
}
build main .calib/src-main $ex &
build list .calib/src-list $ex &
build idx .calib/src-idx $ex &
build both . $ex $base soa_test api_test soa_stress_test
wait
for t in soa_test api_test soa_stress_test; do
  timeout 120 build-both/test/$t >"$out/$t.txt" 2>&1
  echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' "$out/$t.txt" | tr '\n' ' ')"
done
for round in 1 2; do
  for b in main list; do
    timeout 90 build-$b/bench/soa_bench --only empty --only do_all --csv "$out/soa-$b-$round.csv" >/dev/null 2>&1
    echo "soa_bench $b $round: exit $?"
  done
done
for f in "$out"/soa-*.csv; do
  echo "== ${f##*/}: $(grep -E '^do_all,dynasoar' "$f" | cut -d, -f3,10 | tr '\n' ' ')"
done
run() {  # build variant round
  local b=$1 v=$2 r=$3 e=build-$1/example
  $e/wator_$v --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-$v-$b-$r.json"
  $e/gol_$v --width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json >"$out/gol-$v-$b-$r.json"
  $e/nbody_$v --bodies 20000 --steps 1000 --quiet --json >"$out/nbody-$v-$b-$r.json"
  $e/sugarscape_$v --width 1700 --height 1700 --steps 500 --quiet --json >"$out/sugarscape-$v-$b-$r.json"
}
for r in 1 2; do
  run both baseline $r
  for b in main list idx both; do run $b dynasoar $r; done
done
timeout 120 compute-sanitizer --tool memcheck build-both/test/api_test --gtest_filter='*Indexed*' >"$out/memcheck-indexed.txt" 2>&1
echo "memcheck api_test *Indexed*: exit $? $(grep -E 'ERROR SUMMARY' "$out/memcheck-indexed.txt")"
timeout 150 compute-sanitizer --tool racecheck build-both/test/soa_test >"$out/racecheck-soa.txt" 2>&1
echo "racecheck soa_test: exit $? $(grep -E 'RACECHECK SUMMARY' "$out/racecheck-soa.txt")"
python3 - "$out" <<'PY'
import json, glob, os, sys
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    try:
        j = json.load(open(p))
        print(os.path.basename(p), j.get("total_ms"), j.get("checksum"))
    except Exception as e:
        print(os.path.basename(p), "unreadable", e)
PY
echo "total $((SECONDS - t0)) s"
