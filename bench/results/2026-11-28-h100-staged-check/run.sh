#!/usr/bin/env bash
# The staged device_do after its leader lane came from platform::ctz (the
# only device code changed after 2026-11-28-h100-final): backend_test, the
# suite built with DYNASOAR_STAGED_DEVICE_DO=1, plainly and under
# compute-sanitizer memcheck, racecheck and synccheck.
#   GIT_COMMIT=<commit> bench/results/2026-11-28-h100-staged-check/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out/tier" "$out/sanitize" /tmp/sbin
DEPS_PREFIX=${DEPS_PREFIX:-$PWD/.gpu-deps/usr} JOBS=16 scripts/build-gpu.sh backend_test >"$out/build.log" 2>&1 \
  || { tail -20 "$out/build.log"; exit 1; }
ln -sf "$PWD/build-gpu/bin/backend_test" /tmp/sbin/backend_test
TEST_TIMEOUT=200 scripts/gpu-check.sh /tmp/sbin "$out/tier" tests >"$out/tier/gpu-check.log" 2>&1
grep -E "^test |device tier" "$out/tier/summary.txt"
SANITIZE_JOBS=3 scripts/gpu-check.sh /tmp/sbin "$out/sanitize" sanitize >"$out/sanitize/gpu-check.log" 2>&1
echo "sanitize: exit $?"; grep -E "compute-sanitizer|overall" "$out/sanitize/summary.txt"
find "$out" -type f ! -name summary.txt -delete
