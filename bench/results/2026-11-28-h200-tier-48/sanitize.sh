#!/usr/bin/env bash
# compute-sanitizer's memcheck, racecheck and synccheck on the tests of the
# change, their smaller cases (DYNASOAR_SANITIZER=1): XMalloc's queues on
# their own and XMalloc's pool, the do-all's new launch path (soa_test,
# api_test's new tests and the layout suite).
#   bench/results/2026-11-28-h200-tier-48/sanitize.sh BIN OUT
set -uo pipefail
BIN=$1 OUT=$2
mkdir -p "$OUT"
PATH=/usr/local/cuda/bin:$PATH
run() {  # tool binary filter
  DYNASOAR_SANITIZER=1 timeout 400 compute-sanitizer --tool "$1" --error-exitcode 99 "$BIN/$2" --gtest_filter="$3" \
    >"$OUT/$1-$2.log" 2>&1
  echo "compute-sanitizer $1 $2 ($3): exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$1-$2.log" | tail -1), $(grep -Eo '^\[  PASSED  \] [0-9]+ tests?' "$OUT/$1-$2.log" | tail -1)" \
    >"$OUT/$1-$2.txt"
}
for tool in memcheck racecheck synccheck; do
  run "$tool" cmalloc_test '*XMalloc*:*CircularMalloc*:CMallocConformance/CMalloc.*' &
  run "$tool" soa_test '*' &
  run "$tool" api_test 'ApiTest/dynasoar.*:ApiTest/bitmap_alloc.*:ApiTest/CFMMalloc.*' &
done
wait
cat "$OUT"/*.txt
