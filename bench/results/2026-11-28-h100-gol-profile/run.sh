#!/usr/bin/env bash
# Where the game of life soup's slowest do-alls spend their time, per source
# line: Nsight Compute's SASS page (stall samples, executed instructions) of
# Candidate::update, Alive::update and Alive::create_candidates at step 100
# (application replay: every pass a run of its own), joined with the line
# table of nvdisasm on the same binary (lines.py). The tree, gol_dynasoar,
# built with -lineinfo.
#   bench/results/2026-11-28-h100-gol-profile/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
here=$(dirname "$0")
mkdir -p "$out"
t0=$SECONDS
export PATH=/usr/local/cuda/bin:$PATH
D=${DEPS_PREFIX:-$PWD/.gpu-deps/usr}
lib=$D/lib/x86_64-linux-gnu
cmake -S . -B /tmp/build-prof -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DDYNASOAR_VIEWER_SDL2=OFF -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include \
  -DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a -DCMAKE_CUDA_FLAGS=-lineinfo >"$out/cmake.log" 2>&1 || { tail "$out/cmake.log"; exit 1; }
cmake --build /tmp/build-prof -j 16 --target gol_dynasoar >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "built at $((SECONDS - t0)) s"
B=/tmp/build-prof/example/gol_dynasoar
(cd "$out" && cuobjdump -xelf all $B >/dev/null && for f in *.cubin; do nvdisasm -gi "$f" > "${f%.cubin}.sass"; done; ls -la; rm -f *.cubin)
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for k in Candidate::update Alive::update create_candidates; do
  n=${k//::/-}
  "$NCU" --replay-mode application --kernel-name-base demangled --kernel-name regex:"DoAll.*$k" --launch-skip 100 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section ComputeWorkloadAnalysis --section SpeedOfLight --import-source no \
    -o "$out/$n" $B --width 2048 --height 2048 --steps 102 --density 0.3 --quiet >"$out/$n-ncu.log" 2>&1
  echo "ncu $k: exit $? at $((SECONDS - t0)) s"
  "$NCU" --import "$out/$n.ncu-rep" --page details > "$out/$n-details.txt" 2>&1
  "$NCU" --import "$out/$n.ncu-rep" --page source --csv --print-source sass > "$out/$n-sass.csv" 2>&1
  rm -f "$out/$n.ncu-rep"
  python3 "$here/lines.py" "$out/$n-sass.csv" <(cat "$out"/*.sass) objects.cpp 30 > "$out/$n-lines.txt" 2>&1
  head -50 "$out/$n-lines.txt"
  grep -E "Duration|Executed Ipc A|Avg. Active Threads" "$out/$n-details.txt"
done
gzip "$out"/*.sass "$out"/*-sass.csv
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
