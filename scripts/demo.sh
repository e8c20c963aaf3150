#!/usr/bin/env bash
# The main demonstration: wa-tor (DynaSOAr paper Sec. 6) on the DynaSOAr heap,
# on a CMalloc variant (CFMMalloc) and on CUDA's device malloc, next to the
# hand-written baseline; every run must compute the same checksum, and a table
# of times is printed. With a GPU (nvidia-smi sees one and nvcc is present) it
# runs at the paper's size, 2048x2560 cells for 500 steps; without one, the
# CPU-only build runs a 256x256 grid for 100 steps on host threads.
# Arguments replace the size: scripts/demo.sh --width 512 --height 512 --steps 200
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
VARIANTS=dynasoar,cfmmalloc,cuda_malloc,baseline
command -v nvcc >/dev/null || { [[ -x /usr/local/cuda/bin/nvcc ]] && export PATH=/usr/local/cuda/bin:$PATH; }
if command -v nvcc >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "GPU found: $(nvidia-smi -L | head -1)"
  build=build-cuda
  cmake -S . -B $build -DDYNASOAR_ENABLE_CUDA=ON >/dev/null
  size="--width 2048 --height 2560 --steps 500"
else
  echo "No GPU found: wa-tor at a small size on host threads (the CPU-only build)."
  build=build-host
  cmake -S . -B $build -DDYNASOAR_ENABLE_CUDA=OFF >/dev/null
  size="--width 256 --height 256 --steps 100"
fi
cmake --build $build -j "$JOBS" --target wator_dynasoar wator_cfmmalloc wator_cuda_malloc wator_baseline
if [[ $# -gt 0 ]]; then size="$*"; fi
exec python3 bench/examples/run_examples.py --bin $build/example --example wator \
  --variants $VARIANTS --args "$size"
