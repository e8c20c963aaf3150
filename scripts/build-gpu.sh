#!/usr/bin/env bash
# Builds the device-tier binaries (tests, benchmark, demo) for one GPU architecture
# and copies them to build-gpu/bin, ready to be run on a GPU machine with
# scripts/gpu-check.sh build-gpu/bin OUT_DIR. The CUDA runtime is linked statically.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
# The GPU machine may lack the viewer's libraries: no window there, and
# libpng and zlib linked statically where their archives exist.
static_png=()
lib=/usr/lib/x86_64-linux-gnu
[[ -f $lib/libpng16.a && -f $lib/libz.a ]] \
  && static_png=(-DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a)
cmake -S . -B build-gpu -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DDYNASOAR_VIEWER_SDL2=OFF "${static_png[@]}"
cmake --build build-gpu -j "${JOBS:-$(nproc)}"
rm -rf build-gpu/bin && mkdir -p build-gpu/bin
cp build-gpu/test/*_test build-gpu/bench/bitmap_bench build-gpu/bench/soa_bench build-gpu/bench/cmalloc_bench build-gpu/bench/cmalloc_probe build-gpu/bench/backend_bench build-gpu/example/bitmap_demo build-gpu/example/readme_example_* build-gpu/example/learn_* build-gpu/example/wator_* build-gpu/example/nbody_* build-gpu/example/gol_* build-gpu/example/kdtree_* build-gpu/example/barnes_hut_* build-gpu/example/phase_timer_test build-gpu/bin/
du -sh build-gpu/bin
