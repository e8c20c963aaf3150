#!/usr/bin/env bash
# .calib/build.sh SRC BUILD TARGET... : configure (once) and build targets on the GPU machine.
set -euo pipefail
SRC=$1; B=$2; shift 2
D=$(cd "$(dirname "$0")/.." && pwd)/.gpu-deps
export PATH=/usr/local/cuda/bin:$PATH
if [[ ! -f $B/build.ninja ]]; then
  cmake -S "$SRC" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDYNASOAR_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF \
    -DCMAKE_PREFIX_PATH="$D" -DGTEST_ROOT="$D" \
    -DPNG_LIBRARY_RELEASE="$D/lib/libpng16.a" -DZLIB_LIBRARY_RELEASE="$D/lib/libz.a" \
    -DPNG_PNG_INCLUDE_DIR="$D/include" -DZLIB_INCLUDE_DIR="$D/include" >"$B.configure.log" 2>&1 \
    || { tail -30 "$B.configure.log"; exit 1; }
fi
cmake --build "$B" -j 16 --target "$@" 2>&1 | tail -3
