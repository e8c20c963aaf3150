#!/usr/bin/env bash
# Registers of a malloc + free kernel of each circular variant, before
# (05de1fb) and after CircularMalloc::walk became named steps (634a21d),
# from ptxas (sm_90, -O3). Compile only; no GPU needed.
#   bench/results/2026-11-28-walk-registers/run.sh > registers.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for commit in 05de1fb 634a21d; do
  mkdir -p "$tmp/$commit"
  git -C "$root" archive "$commit" include | tar -x -C "$tmp/$commit"
  echo "$commit:"
  nvcc -std=c++20 -arch=sm_90 -O3 -I"$tmp/$commit/include" -DDYNASOAR_CUDA=1 --expt-relaxed-constexpr \
       --extended-lambda -Xptxas -v -c "$here/kernels.cu" -o "$tmp/k.o" 2>&1 |
    grep -E "Compiling entry|Used [0-9]+ registers" | sed 's/ptxas info *: //'
done
