#!/usr/bin/env bash
# Configure (once) and build targets on the GPU machine: .calib/x/gpubuild.sh BUILD TARGET...
set -euo pipefail
B=$1; shift
D=$(pwd)/.gpu-deps/usr
L=$D/lib/x86_64-linux-gnu
export PATH=/usr/local/cuda/bin:$PATH
if [[ ! -f $B/build.ninja ]]; then
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDYNASOAR_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF \
    -DCMAKE_PREFIX_PATH="$D" -DGTEST_ROOT="$D" \
    -DPNG_LIBRARY_RELEASE="$L/libpng16.a" -DZLIB_LIBRARY_RELEASE="$L/libz.a" \
    -DPNG_PNG_INCLUDE_DIR="$D/include" -DZLIB_INCLUDE_DIR="$D/include" >"$B.configure.log" 2>&1 \
    || { tail -30 "$B.configure.log"; exit 1; }
fi
cmake --build "$B" -j 16 --target "$@" 2>&1 | tail -3
