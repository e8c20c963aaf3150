#!/usr/bin/env bash
# The main demonstration. With a GPU (nvidia-smi sees one and nvcc is present) it
# builds the CUDA configuration and runs the bitmap benchmark in its quick form
# (`build-cuda/bench/bitmap_bench` without --quick runs the full sweep up to 2^30 bits).
# Without a GPU it builds the CPU-only configuration and runs the bitmap demo on
# host threads. Extra arguments go to the program that runs.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
command -v nvcc >/dev/null || { [[ -x /usr/local/cuda/bin/nvcc ]] && export PATH=/usr/local/cuda/bin:$PATH; }
if command -v nvcc >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "GPU found: $(nvidia-smi -L | head -1)"
  cmake -S . -B build-cuda -DDYNASOAR_ENABLE_CUDA=ON >/dev/null
  cmake --build build-cuda -j "$JOBS" --target bitmap_bench bitmap_demo
  build-cuda/example/bitmap_demo
  if [[ $# -eq 0 ]]; then set -- --quick; fi
  exec build-cuda/bench/bitmap_bench "$@"
else
  echo "No GPU found: running the CPU-only build of the bitmap demo on host threads."
  cmake -S . -B build-host -DDYNASOAR_ENABLE_CUDA=OFF >/dev/null
  cmake --build build-host -j "$JOBS" --target bitmap_demo
  exec build-host/example/bitmap_demo "$@"
fi
