#!/usr/bin/env bash
# Builds the device-tier binaries (tests, benchmark, demo) for one GPU architecture
# and copies them to build-gpu/bin, ready to be run on a GPU machine with
# scripts/gpu-check.sh build-gpu/bin OUT_DIR. The CUDA runtime is linked statically.
#
#   scripts/build-gpu.sh                  every target
#   scripts/build-gpu.sh soa_bench api_test   only these (copied to build-gpu/bin too)
#
# Environment: JOBS (parallel jobs), CUDA_ARCH (default 90), DEPS_PREFIX: a
# folder laid out like /usr that holds GoogleTest, CLI11, libpng and zlib
# (headers, CMake files and static archives), for a GPU machine that lacks
# them and cannot install them: e.g. the files of `dpkg -L libgtest-dev
# libgmock-dev libcli11-dev libpng-dev zlib1g-dev` copied from a machine
# that has them, shared libraries left out (archives in lib/<multiarch>).
# The paths stay in build-gpu's CMake cache for later runs. Uses Ninja where
# it is installed (for a new build folder).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
lib=${DEPS_PREFIX:-/usr}/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
deps=()
if [[ -n "${DEPS_PREFIX:-}" ]]; then
  deps=(-DCMAKE_PREFIX_PATH="$DEPS_PREFIX" -DGTEST_ROOT="$DEPS_PREFIX"
        -DPNG_PNG_INCLUDE_DIR="$DEPS_PREFIX/include" -DZLIB_INCLUDE_DIR="$DEPS_PREFIX/include")
fi
# The GPU machine may lack the viewer's libraries: no window there, and
# libpng and zlib linked statically where their archives exist.
[[ -f $lib/libpng16.a && -f $lib/libz.a ]] \
  && deps+=(-DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a)
generator=()
[[ ! -f build-gpu/CMakeCache.txt ]] && command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build-gpu "${generator[@]}" -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DDYNASOAR_VIEWER_SDL2=OFF "${deps[@]}" >/dev/null
targets=()
[[ $# -gt 0 ]] && targets=(--target "$@")
cmake --build build-gpu -j "${JOBS:-$(nproc)}" "${targets[@]}"
rm -rf build-gpu/bin && mkdir -p build-gpu/bin
if [[ $# -gt 0 ]]; then  # the named targets only: no older binaries beside them
  for t in "$@"; do
    f=$(find build-gpu/test build-gpu/bench build-gpu/example -maxdepth 1 -type f -name "$t" -perm -u+x | head -1)
    [[ -n $f ]] && cp "$f" build-gpu/bin/ || echo "build-gpu.sh: no program $t (not copied)" >&2
  done
else
  cp build-gpu/test/*_test build-gpu/bench/{bitmap,soa,cmalloc,backend,checkpoint}_bench build-gpu/bench/cmalloc_probe \
     build-gpu/example/{bitmap_demo,readme_example_*,learn_*,wator_*,nbody_*,gol_*,kdtree_*,barnes_hut_*,sugarscape_*,traffic_*,generation_*,structure_*} \
     build-gpu/bin/
fi
# nccl_test runs the launcher and its rank program from beside itself.
if [[ -f build-gpu/bin/nccl_test ]]; then
  cp build-gpu/tools/dynasoar_launch build-gpu/test/nccl_rank_program build-gpu/bin/
fi
du -sh build-gpu/bin
