#!/usr/bin/env bash
# Builds and runs the test suites; exits non-zero on any failure.
#
#   1. host tier: CPU-only build (plain C++ compiler, std::thread workers), all tests,
#      and the reference documentation (Doxygen; any warning fails)
#   2. host tier under ThreadSanitizer: the executor, API, bitmap, SOA heap, CMalloc,
#      back-end and distributed-layer tests
#   3. CUDA build: every device target compiled for sm_${CUDA_ARCH:-90} (without a GPU
#      a compile check: PTX for compute_XX, little optimisation), and the
#      README's CMake recipe compiled as a CUDA consumer project (both routes); the
#      device tier runs when a GPU is present, otherwise it is reported as SKIPPED.
#
# Installs what the machine lacks first (scripts/lib/deps.sh).
#
# Environment: JOBS (parallel build jobs), CUDA_ARCH (default 90),
#              DYNASOAR_SKIP_CUDA=1 to leave out step 3.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
ensure_deps cmake g++ make python3 libgtest-dev libcli11-dev libpng-dev libsdl2-dev doxygen
JOBS=${JOBS:-$(nproc)}
CUDA_ARCH=${CUDA_ARCH:-90}
summary=()
step() { printf '\n=== %s ===\n' "$*"; }

step "host tier: configure and build (build-host)"
# -O1: the tier checks results, not speed, and its 113 files compile a third
# faster than at -O3 (wa-tor's objects 3.8 s against 5.7 s on CI's machine).
cmake -S . -B build-host -DDYNASOAR_ENABLE_CUDA=OFF -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"
cmake --build build-host -j "$JOBS"
step "host tier: tests"
ctest --test-dir build-host -L host -j "$JOBS" --output-on-failure --no-tests=error
summary+=("host tier: $(ctest --test-dir build-host -L host -N | tail -1)  PASSED")

step "reference documentation: Doxygen over the headers, no warning allowed (docs target)"
cmake --build build-host --target docs
summary+=("reference documentation (Doxygen, no warnings): PASSED")

step "host tier under ThreadSanitizer (build-tsan)"
cmake -S . -B build-tsan -DDYNASOAR_ENABLE_CUDA=OFF -DDYNASOAR_SANITIZE=thread \
  -DDYNASOAR_BUILD_BENCH=OFF -DDYNASOAR_BUILD_EXAMPLES=OFF
cmake --build build-tsan -j "$JOBS" --target platform_test api_test errors_test tree_insert_test watchdog_test bitmap_test bitmap_stress_test soa_test soa_stress_test soa_layout_test raw_test backend_test distributed_test
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=7 suppressions=$PWD/test/cmalloc/tsan.supp" \
  ctest --test-dir build-tsan -R '^([A-Za-z]+/)?(Executor|HostPool|Api|Random|DeviceStack|Bitmap|Soa|CMalloc|Backend|TreeInsertion|Watchdog|Distributed)' -j "$JOBS" --output-on-failure --no-tests=error
summary+=("ThreadSanitizer: $(ctest --test-dir build-tsan -R '^([A-Za-z]+/)?(Executor|HostPool|Api|Random|DeviceStack|Bitmap|Soa|CMalloc|Backend|TreeInsertion|Watchdog|Distributed)' -N | tail -1)  PASSED")

if [[ "${DYNASOAR_SKIP_CUDA:-0}" == 1 ]]; then
  summary+=("CUDA build: SKIPPED (DYNASOAR_SKIP_CUDA=1)")
elif ! find_nvcc; then
  summary+=("CUDA build: SKIPPED (no nvcc found)")
else
  if nvidia-smi -L >/dev/null 2>&1; then
    build_type=(-DCMAKE_BUILD_TYPE=Release)
    archs=$CUDA_ARCH
  else
    # Without a GPU this build only shows that every device target compiles
    # and links: to PTX for compute_XX (the virtual architecture), with
    # little optimisation (host -O0, the device's NVVM at -O1). On CI's
    # machine: 663 s for every target, against 705 s with ptxas -O0 making
    # sm_XX code as well and 1 028 s with NVVM at its default -O3 (wa-tor
    # on XMalloc alone: 14, 21 and 33 s; in most files the host compiler's
    # share is larger); about 495 s for 137 targets since the framework's
    # headers no longer include CUB. ptxas runs in the device tier's
    # Release builds (scripts/build-gpu.sh).
    build_type=(-DCMAKE_BUILD_TYPE=CompileCheck "-DCMAKE_CUDA_FLAGS_COMPILECHECK=-Xcicc -O1"
                "-DDYNASOAR_EXAMPLE_BACKENDS=dynasoar;cfmmalloc;cuda_malloc")
    # The examples for the demonstration's back ends only: the tests
    # compile every back end's device code, and each example's code is the
    # same on every back end (example/CMakeLists.txt).
    archs=$CUDA_ARCH-virtual
  fi
  step "CUDA build for ${archs} (build-cuda, ${build_type[0]#-DCMAKE_BUILD_TYPE=}): compiles every device target (without a GPU, the examples for three back ends)"
  cmake -S . -B build-cuda -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$archs" "${build_type[@]}"
  cmake --build build-cuda -j "$JOBS"
  summary+=("CUDA build: all targets compiled")
  step "CUDA consumer and nvcc's compile errors: the README's CMake recipe with a .cu file, both routes; compile_fail/cuda/"
  ctest --test-dir build-cuda -L 'consumer|compile' -j "$JOBS" --output-on-failure --no-tests=error
  summary+=("CUDA consumer and compile errors: $(ctest --test-dir build-cuda -L 'consumer|compile' -N | tail -1)  PASSED (compiled; run only with a GPU)")
  if nvidia-smi -L >/dev/null 2>&1; then
    step "device tier: tests"
    ctest --test-dir build-cuda -L device --output-on-failure --no-tests=error
    summary+=("device tier: $(ctest --test-dir build-cuda -L device -N | tail -1)  PASSED")
  else
    summary+=("device tier: SKIPPED (no GPU on this machine; see scripts/gpu-check.sh)")
  fi
fi

step "summary"
printf '%s\n' "${summary[@]}"
