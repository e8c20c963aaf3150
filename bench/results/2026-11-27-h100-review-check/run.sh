#!/usr/bin/env bash
# After a last reading of the change: parallel_new_indexed copies the
# free-block bitmap's level 0 once (count and run from one copy) and the
# claim kernel counts the groups outside the run (no kernel of its own);
# the bitmap's level size has one definition (containers_for). Targeted
# GPU check of that tree: the tests of the changed code, compute-sanitizer
# on the indexed tests, and the golden runs of the grid examples on the heap.
#   bench/results/2026-11-27-h100-review-check/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
DEPS_PREFIX=${DEPS_PREFIX:-$PWD/.gpu-deps/usr} JOBS=16 scripts/build-gpu.sh api_test bitmap_test soa_stress_test \
  wator_dynasoar gol_dynasoar sugarscape_dynasoar >"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
for t in api_test bitmap_test soa_stress_test; do
  timeout 120 build-gpu/bin/$t >"$out/$t.txt" 2>&1
  echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' "$out/$t.txt" | tr '\n' ' ')"
done
DYNASOAR_SANITIZER=1 timeout 200 compute-sanitizer --tool memcheck build-gpu/bin/api_test --gtest_filter='*Indexed*' >"$out/memcheck-indexed.txt" 2>&1
echo "memcheck indexed: exit $? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' "$out/memcheck-indexed.txt" | tr '\n' ' ')"
for ex in wator gol sugarscape; do
  grep -v '^#' example/$ex/golden.txt | grep '=>' | while IFS= read -r line; do
    args=${line%% =>*}; want=${line##*=> }
    got=$(eval build-gpu/bin/${ex}_dynasoar $args 2>&1 | grep -E '^ +checksum' | awk '{print $2}')
    echo "$ex golden ($args): got $got, want $want $([[ $got == "$want" ]] && echo MATCH || echo DIFFER)"
  done
done
rm -f "$out/build.log"
