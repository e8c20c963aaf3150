#!/usr/bin/env bash
# The main demonstration: wa-tor (DynaSOAr paper Sec. 6) as objects on the
# DynaSOAr heap, on CFMMalloc and on CUDA's device malloc, next to the
# hand-written baseline. Prints progress while it runs and a short table: what
# each variant is, its time, its ratio to the baseline and whether it computed
# the baseline's checksum. On a GPU (nvcc and nvidia-smi find one) the grid is
# the paper's 2048x2560; without one the CPU-only build runs 256x256 on host
# threads. Installs what the machine lacks first (scripts/lib/deps.sh).
#
#   scripts/demo.sh                      the plan for this machine
#   scripts/demo.sh --grid 512x512 --steps 50   another size, every variant
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
ensure_deps cmake g++ make python3 libcli11-dev libpng-dev
JOBS=${JOBS:-$(nproc)}
targets=(wator_dynasoar wator_cfmmalloc wator_cuda_malloc wator_baseline)
if find_nvcc && nvidia-smi -L >/dev/null 2>&1; then
  echo "GPU found: $(nvidia-smi -L | head -1)"
  # Build for the GPU at hand (e.g. 9.0 -> 90), so nothing is compiled at start-up.
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
  build=build-cuda
  cmake -S . -B $build -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${arch:-native}" >/dev/null
  plan=(--gpu)
else
  echo "No GPU found: the CPU-only build on host threads."
  build=build-host
  cmake -S . -B $build -DDYNASOAR_ENABLE_CUDA=OFF >/dev/null
  plan=()
fi
echo "building ${targets[*]} in $build ..."
start=$(date +%s)
cmake --build $build -j "$JOBS" --target demo_programs >"$build/demo-build.log" 2>&1 \
  || { tail -30 "$build/demo-build.log"; echo "build failed (log: $build/demo-build.log)" >&2; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
exec python3 bench/examples/demo.py --bin $build/example ${plan[@]+"${plan[@]}"} "$@"
