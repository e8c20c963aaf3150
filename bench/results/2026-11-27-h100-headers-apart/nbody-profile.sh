#!/usr/bin/env bash
# Nsight Compute on n-body's force kernel (its 11th launch, 20 000 bodies),
# main against the change (.calib/src-main, .calib/src-headers), to find
# where the 5 % of nbody.sh go.
#   bench/results/2026-11-27-h100-headers-apart/nbody-profile.sh OUT
set -uo pipefail
out=${1:?}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
D=$PWD/.gpu-deps/usr; lib=$D/lib/x86_64-linux-gnu
t0=$SECONDS
cfg=(-DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF
     -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include
     -DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a -DCMAKE_CUDA_FLAGS=-lineinfo)
for v in main headers; do
  (cmake -S .calib/src-$v -B build-q$v -G Ninja "${cfg[@]}" >"$out/$v-configure.log" 2>&1 &&
   cmake --build build-q$v -j 8 --target nbody_dynasoar >"$out/$v-build.log" 2>&1; echo "$v build: exit $? at $((SECONDS - t0)) s") &
done
wait
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for v in main headers; do
  "$NCU" --kernel-name-base demangled --kernel-name regex:compute_force --launch-skip 10 --launch-count 1 --set full \
    --import-source yes -o "$out/$v" build-q$v/example/nbody_dynasoar --bodies 20000 --steps 12 --quiet >"$out/$v-ncu.log" 2>&1
  echo "$v ncu: exit $?"
  "$NCU" --import "$out/$v.ncu-rep" --page details > "$out/$v-details.txt" 2>&1
  "$NCU" --import "$out/$v.ncu-rep" --page source --csv --print-source sass | gzip > "$out/$v-sass.csv.gz"
  rm -f "$out/$v.ncu-rep"
  grep -E "Duration|Executed Instructions  |L1/TEX Hit|L2 Hit|Warp Cycles Per Issued|Achieved Active Warps|Grid Size" "$out/$v-details.txt"
done
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
