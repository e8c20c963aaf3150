#!/usr/bin/env bash
# Source-level stall sampling of wa-tor's fish update (heap), -lineinfo build.
set -uo pipefail
out=${1:?}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
D=$PWD/.gpu-deps/usr; lib=$D/lib/x86_64-linux-gnu
t0=$(date +%s)
cmake -S . -B build-prof -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DDYNASOAR_VIEWER_SDL2=OFF -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include \
  -DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a -DCMAKE_CUDA_FLAGS=-lineinfo >"$out/cmake.log" 2>&1 || { tail "$out/cmake.log"; exit 1; }
cmake --build build-prof -j 16 --target wator_dynasoar >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
B=build-prof/example/wator_dynasoar
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
args=(--width 2048 --height 2560 --steps 110 --seed 42)
"$NCU" --kernel-name-base demangled --kernel-name regex:'DoAll.*Fish.*update' --launch-skip 100 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --import-source yes -o "$out/fish" $B "${args[@]}" >"$out/ncu.log" 2>&1
echo "ncu exit $?"
"$NCU" --import "$out/fish.ncu-rep" --page source --csv --print-source cuda > "$out/fish-source-cuda.csv" 2>&1; echo "cuda page $?"
"$NCU" --import "$out/fish.ncu-rep" --page source --csv --print-source sass > "$out/fish-source-sass.csv" 2>&1; echo "sass page $?"
ls -la "$out"; head -c 600 "$out/fish-source-cuda.csv"
cuobjdump -res-usage $B 2>/dev/null | grep -A1 "Fish.*update" | head -4
