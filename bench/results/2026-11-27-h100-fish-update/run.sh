#!/usr/bin/env bash
# Where wa-tor's fish update goes (the phase furthest off its baseline after
# the object index, 5.9x): Nsight Compute on one fish-update launch of the
# heap (the do-all kernel) and of the baseline, at step 101 of the benchmark
# grid, same binaries as the tree's.
#   bench/results/2026-11-27-h100-fish-update/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
[[ -x build-gpu/bin/wator_dynasoar && -x build-gpu/bin/wator_baseline ]] || DEPS_PREFIX=${DEPS_PREFIX:-$PWD/.gpu-deps/usr} JOBS=16 scripts/build-gpu.sh wator_dynasoar wator_baseline >"$out/build.log" 2>&1 \
  || { tail -20 "$out/build.log"; exit 1; }
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
          --section SchedulerStats --section MemoryWorkloadAnalysis --section SourceCounters)
args=(--width 2048 --height 2560 --steps 110 --seed 42)
"$NCU" --kernel-name-base demangled --kernel-name regex:'DoAll.*Fish.*update' --launch-skip 100 --launch-count 1 "${sections[@]}" \
  build-gpu/bin/wator_dynasoar "${args[@]}" >"$out/ncu-heap-fish-update.txt" 2>&1
echo "heap: exit $? $(grep -E '^ +Duration' "$out/ncu-heap-fish-update.txt" | head -1)"
"$NCU" --kernel-name-base demangled --kernel-name regex:'FishUpdate' --launch-skip 100 --launch-count 1 "${sections[@]}" \
  build-gpu/bin/wator_baseline "${args[@]}" >"$out/ncu-baseline-fish-update.txt" 2>&1
echo "baseline: exit $? $(grep -E '^ +Duration' "$out/ncu-baseline-fish-update.txt" | head -1)"
"$NCU" --kernel-name-base demangled --kernel-name regex:'DoAll.*Fish.*prepare' --launch-skip 100 --launch-count 1 "${sections[@]}" \
  build-gpu/bin/wator_dynasoar "${args[@]}" >"$out/ncu-heap-fish-prepare.txt" 2>&1
echo "heap prepare: exit $? $(grep -E '^ +Duration' "$out/ncu-heap-fish-prepare.txt" | head -1)"
