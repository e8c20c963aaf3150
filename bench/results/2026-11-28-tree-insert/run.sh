#!/usr/bin/env bash
# The quadtree insertion (test/api/tree_insert.h) on the GPU: the probe with
# acquire loads (the guide's rule), with plain loads, and with plain loads
# and the original's slot bookkeeping (the original's code), each run under
# a time limit, then the test on every freeing back end, repeated (REPEAT;
# 0 leaves it out). Binaries from scripts/build-gpu.sh tree_insert_test tree_insert_probe.
#   [MODES="atomic plain original"] [REPEAT=3] bench/results/2026-11-28-tree-insert/run.sh BIN OUT
set -uo pipefail
BIN=$1 OUT=$2
mkdir -p "$OUT"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  echo "commit: ${GIT_COMMIT:-unknown}"
} | tee "$OUT/runs.txt"
echo "reads,bodies,steps,seed,exit,ms" > "$OUT/runs.csv"
probe() {  # reads bodies steps seed limit
  local start end rc flag=()
  [[ $1 != atomic ]] && flag=(--$1)
  start=$(date +%s%N)
  timeout "$5" "$BIN/tree_insert_probe" "${flag[@]}" "$2" "$3" "$4" >>"$OUT/probe.log" 2>&1; rc=$?
  end=$(date +%s%N)
  echo "$1,$2,$3,$4,$rc,$(( (end - start) / 1000000 ))" >> "$OUT/runs.csv"
}
for reads in ${MODES:-atomic plain original}; do
  for seed in $(seq 1 16); do probe $reads 2000 20 $seed 8; done
  for seed in $(seq 1 6); do probe $reads 20000 30 $seed 10; done
  for seed in 1 2 3; do probe $reads 300000 5 $seed 15; done
done
# exit 124: still running at the limit (hung); 1: a wrong tree; 0: every tree exact
awk -F, 'NR > 1 { k = $1 " " $2; n[k]++; if ($5 == 0) ok[k]++; else if ($5 == 124) hung[k]++; else bad[k]++ }
  END { for (k in n) printf "%s bodies: %d runs, %d exact, %d wrong, %d hung\n", k, n[k], ok[k] + 0, bad[k] + 0, hung[k] + 0 }' \
  "$OUT/runs.csv" | sort | tee -a "$OUT/runs.txt"
[[ ${REPEAT:-3} == 0 ]] && exit 0
timeout 240 "$BIN/tree_insert_test" --gtest_repeat=${REPEAT:-3} >"$OUT/tree_insert_test.log" 2>&1
echo "tree_insert_test x${REPEAT:-3}: exit $?, $(grep -c '^\[       OK \]' "$OUT/tree_insert_test.log") passed, $(grep -c '^\[  FAILED  \] Tree' "$OUT/tree_insert_test.log") failed, $(grep -c '^\[  SKIPPED \] Tree' "$OUT/tree_insert_test.log") skipped" | tee -a "$OUT/runs.txt"
