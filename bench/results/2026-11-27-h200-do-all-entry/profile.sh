#!/usr/bin/env bash
# The three do-all variants of run.sh (main, tree, pre) under Nsight Compute:
# the SASS of DoAll<Particle::step> (cuobjdump) and the stall sampling of its
# first timed launch at 2^24 objects in soa_bench --only do_all, for each.
#   bench/results/2026-11-27-h200-do-all-entry/profile.sh OUT
set -uo pipefail
out=${1:?}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
D=$PWD/.gpu-deps/usr; lib=$D/lib/x86_64-linux-gnu
t0=$SECONDS
cfg=(-DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF
     -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include
     -DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a -DCMAKE_CUDA_FLAGS=-lineinfo)
for v in main tree pre; do
  (cmake -S .calib/src-$v -B build-p$v -G Ninja "${cfg[@]}" >"$out/$v-configure.log" 2>&1 &&
   cmake --build build-p$v -j 5 --target soa_bench >"$out/$v-build.log" 2>&1; echo "$v build: exit $? at $((SECONDS - t0)) s") &
done
wait
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for v in main tree pre; do
  b=build-p$v/bench/soa_bench
  cuobjdump -sass "$b" | awk '/Function : .*parallel_for_early_kernel.*DoAll.*8Particle.*4stepEf/{p=1;print;next} p&&/Function :/{p=0} p' > "$out/$v-doall.sass"
  echo "$v: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$out/$v-doall.sass") SASS lines"
  "$NCU" --kernel-name-base demangled --kernel-name regex:Particle::step --launch-skip 345 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section SourceCounters --section WarpStateStats --section Occupancy \
    --import-source yes -o "$out/$v" "$b" --only do_all >"$out/$v-ncu.log" 2>&1
  echo "$v ncu: exit $?"
  "$NCU" --import "$out/$v.ncu-rep" --page details > "$out/$v-details.txt" 2>&1
  "$NCU" --import "$out/$v.ncu-rep" --page source --csv --print-source sass | gzip > "$out/$v-sass.csv.gz"
  rm -f "$out/$v.ncu-rep"
  grep -E "Duration|DRAM Throughput|L2 Hit Rate|Achieved Active Warps|Warp Cycles Per Issued" "$out/$v-details.txt"
done
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
