#!/usr/bin/env bash
# First call: every device target built (scripts/build-gpu.sh), then the
# device tier (scripts/gpu-check.sh tests: every *_test binary, the README
# example on every back end, the teaching programs, the golden runs of every
# simulation on every back end and baseline). The build stays on the machine
# for run.sh. The logs come back as one archive.
#   GIT_COMMIT=<commit> bench/results/2026-11-28-h100-final/run-tier.sh OUT
set -uo pipefail
out=${1:?usage: run-tier.sh OUT}
mkdir -p "$out/tier"
t0=$SECONDS
DEPS_PREFIX=${DEPS_PREFIX:-$PWD/.gpu-deps/usr} JOBS=16 scripts/build-gpu.sh >"$out/build.log" 2>&1 \
  || { tail -20 "$out/build.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
TEST_TIMEOUT=200 timeout 300 scripts/gpu-check.sh build-gpu/bin "$out/tier" tests >"$out/tier/gpu-check.log" 2>&1
echo "tier: exit $? at $((SECONDS - t0)) s"
grep -E 'device tier|FAILED|TIMED|overall' "$out/tier/summary.txt"
echo "golden runs: $(grep -c 'golden run' "$out/tier/summary.txt"), not exit 0: $(grep 'golden run' "$out/tier/summary.txt" | grep -vc 'exit 0,')"
tail -5 "$out/build.log" > "$out/build-tail.txt"
tar -czf "$out/tier.tgz" -C "$out/tier" . && rm -rf "$out/tier" "$out/build.log"
