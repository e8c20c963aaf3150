#!/usr/bin/env bash
# The device tier of the watchdog change, built on the GPU machine:
#   DEPS_PREFIX=<deps> bench/results/2026-11-28-h200-tier/run.sh OUT
# then compute-sanitizer on the new tests (sanitize.sh beside this).
set -uo pipefail
OUT=$1
mkdir -p "$OUT"
start=$(date +%s)
JOBS=${JOBS:-16} scripts/build-gpu.sh >"$OUT/build.log" 2>&1
echo "build: exit $?, $(( $(date +%s) - start )) s" | tee "$OUT/build.txt"
GIT_COMMIT=${GIT_COMMIT:-unknown} scripts/gpu-check.sh build-gpu/bin "$OUT/tier" tests >/dev/null 2>&1
echo "tier: exit $?, $(( $(date +%s) - start )) s" | tee -a "$OUT/build.txt"
grep -E "^(date|device|commit|device tier|overall)|TIMED OUT|FAILED|exit [1-9]" "$OUT/tier/summary.txt"
