#!/usr/bin/env bash
# compute-sanitizer on the tests of the changed lock-free code at f049611:
# slot reservation and freeing (soa_stress_test), the bitmap search
# (bitmap_stress_test, bitmap_test), parallel_new_indexed on a run of blocks
# (api_test's *Indexed* tests), destroys (errors_test's destroy tests).
#   bench/results/2026-11-27-h100-after-orders/sanitizer/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
DEPS_PREFIX=${DEPS_PREFIX:-$PWD/.gpu-deps/usr} JOBS=16 scripts/build-gpu.sh soa_stress_test bitmap_stress_test bitmap_test api_test errors_test >"$out/build.log" 2>&1 \
  || { tail -20 "$out/build.log"; exit 1; }
export DYNASOAR_SANITIZER=1
run() {  # tool name test [filter]
  local tool=$1 name=$2 t=$3 f=${4:-*}
  timeout 240 compute-sanitizer --tool "$tool" build-gpu/bin/$t --gtest_filter="$f" >"$out/$tool-$name.txt" 2>&1
  echo "$tool $name: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' "$out/$tool-$name.txt" | tr '\n' ' ')"
}
for tool in memcheck racecheck synccheck; do
  run $tool soa_stress soa_stress_test
  run $tool bitmap_stress bitmap_stress_test
  run $tool indexed api_test '*Indexed*'
done
run memcheck bitmap bitmap_test
run memcheck destroy errors_test '*Destroy*'
