#!/usr/bin/env bash
# On the GPU machine, from the repository root: every target of the working
# tree (the change), with the dependencies carried in .gpu-deps.
set -euo pipefail
s=$SECONDS
DEPS_PREFIX=$PWD/.gpu-deps/usr JOBS=16 scripts/build-gpu.sh > $OUT/build.log 2>&1 || { tail -40 $OUT/build.log; exit 1; }
tail -2 $OUT/build.log; echo "built in $((SECONDS - s)) s"
