#!/usr/bin/env bash
# On the GPU machine: the programs the comparison needs, built from the
# working tree, then compare.sh and the new tests.
set -uo pipefail
D=bench/results/2026-11-27-blocking-call
s=$SECONDS
DEPS_PREFIX=$PWD/.gpu-deps/usr JOBS=16 scripts/build-gpu.sh soa_bench wator_dynasoar nbody_dynasoar platform_test api_test errors_test > $OUT/build1.log 2>&1 || { tail -30 $OUT/build1.log; exit 1; }
echo "built in $((SECONDS - s)) s"
bash $D/compare.sh
build-gpu/bin/platform_test --gtest_filter='ErrorFlags*' 2>&1 | grep -E '^\[ +(OK|FAILED|PASSED|SKIPPED) '
build-gpu/bin/api_test --gtest_filter='*BlockingDoAll*' 2>&1 | grep -E '^\[ +(FAILED|PASSED) '
build-gpu/bin/errors_test --gtest_filter='*BlockingDoAll*:*DestroyTwice*:*NewAfterOutOfMemory*' 2>&1 | grep -E '^\[ +(FAILED|PASSED) '
