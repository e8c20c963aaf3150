#!/usr/bin/env bash
# Nsight Compute on the kernels of two unmet targets, heap against its
# baseline in each: n-body's force phase (compute_force's do-all with its
# device_do walk, against the baseline's Forces kernel), and the do-all over
# 2^24 objects of soa_bench (DoAll<Particle::step> against soa_step). Full
# section set, with the SASS source page (-lineinfo build).
#   bench/results/2026-11-27-h200-profiles/run.sh OUT
set -uo pipefail
out=${1:?}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
D=$PWD/.gpu-deps/usr; lib=$D/lib/x86_64-linux-gnu
t0=$(date +%s)
cmake -S . -B build-prof -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DDYNASOAR_VIEWER_SDL2=OFF -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include \
  -DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a -DCMAKE_CUDA_FLAGS=-lineinfo >"$out/cmake.log" 2>&1 || { tail "$out/cmake.log"; exit 1; }
cmake --build build-prof -j 16 --target nbody_dynasoar nbody_baseline soa_bench >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
E=build-prof/example
prof() {  # name program-args... ; kernel regex and skip in K, S
  "$NCU" --kernel-name-base demangled --kernel-name "regex:$K" --launch-skip "$S" --launch-count 1 --set full \
    --import-source yes -o "$out/$1" "${@:2}" >"$out/$1-ncu.log" 2>&1
  echo "$1: ncu exit $?"
  "$NCU" --import "$out/$1.ncu-rep" --page details > "$out/$1-details.txt" 2>&1
  "$NCU" --import "$out/$1.ncu-rep" --page source --csv --print-source sass | gzip > "$out/$1-sass.csv.gz"
  rm -f "$out/$1.ncu-rep"
}
K='compute_force' S=10 prof nbody-heap $E/nbody_dynasoar --bodies 20000 --steps 12 --quiet
K='Forces<false>' S=10 prof nbody-base $E/nbody_baseline --bodies 20000 --steps 12 --quiet
# soa_bench --only do_all: 53 launches per size up to 2^20 (3 warm-up, 50
# timed), 23 from 2^22; the heap's first timed launch at 2^24 is number 344.
# The arrays run twice per size (two offsets): 682 launches before 2^24.
K='Particle::step' S=345 prof doall-heap build-prof/bench/soa_bench --only do_all
K='soa_step' S=686 prof doall-base build-prof/bench/soa_bench --only do_all
for f in "$out"/*-details.txt; do echo "== $f"; grep -E "Grid Size|Registers Per|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|L2 Hit|L1/TEX Hit|Executed Ipc A|Issue Slots Busy" "$f" | head -14; done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
