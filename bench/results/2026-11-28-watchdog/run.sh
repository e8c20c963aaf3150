#!/usr/bin/env bash
# The watchdog's cost on soa_bench's do-all and empty parallel_do: the same
# build with the watchdog off (DYNASOAR_WATCHDOG unset) and on (60 s), and
# soa_bench_before, built from the commit before the watchdog, in two
# alternating rounds; then the device tests of the change.
#   bench/results/2026-11-28-watchdog/run.sh BIN OUT
set -uo pipefail
BIN=$1 OUT=$2
mkdir -p "$OUT"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  echo "commit: ${GIT_COMMIT:-unknown}"
} | tee "$OUT/summary.txt"
for round in 1 2; do
  env -u DYNASOAR_WATCHDOG "$BIN/soa_bench_before" --only do_all --only empty --csv "$OUT/before-$round.csv" >"$OUT/before-$round.log" 2>&1
  echo "before round $round: exit $?" | tee -a "$OUT/summary.txt"
  env -u DYNASOAR_WATCHDOG "$BIN/soa_bench" --only do_all --only empty --csv "$OUT/off-$round.csv" >"$OUT/off-$round.log" 2>&1
  echo "off round $round: exit $?" | tee -a "$OUT/summary.txt"
  DYNASOAR_WATCHDOG=60 "$BIN/soa_bench" --only do_all --only empty --csv "$OUT/on-$round.csv" >"$OUT/on-$round.log" 2>&1
  echo "on round $round: exit $?" | tee -a "$OUT/summary.txt"
done
for t in watchdog_test tree_insert_test platform_test soa_test; do
  [[ -x $BIN/$t ]] || continue
  timeout 300 "$BIN/$t" >"$OUT/$t.log" 2>&1
  echo "$t: exit $?, $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]|^\[  SKIPPED \] [0-9]' "$OUT/$t.log" | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
done
