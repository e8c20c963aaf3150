#!/usr/bin/env bash
# The game of life's new candidates claimed first and made afterwards (the
# tree) against the commit before (main: objects.cpp of HEAD in
# .calib/before/), gol_dynasoar of both built with -lineinfo; two rounds,
# builds interleaved, of the soup (2048x2048, 300 steps) and the acorn; then
# Nsight Compute's source counters on main's three slowest do-alls of the
# soup at step 100 (Candidate::update, Alive::update, create_candidates) and
# on the tree's create_candidates. The results come back as one archive.
#   bench/results/2026-11-28-h100-gol-claims/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
t0=$SECONDS
export PATH=/usr/local/cuda/bin:$PATH
D=${DEPS_PREFIX:-$PWD/.gpu-deps/usr}
lib=$D/lib/x86_64-linux-gnu
cfg=(-DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF
     -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include
     -DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a -DCMAKE_CUDA_FLAGS=-lineinfo)
for v in main tree; do
  src=/tmp/src-$v
  mkdir -p $src && tar --exclude=./build-gpu --exclude=./.gpu-deps --exclude=./bench/results --exclude=./.git --exclude=./.calib -c . | tar -x -C $src
  [[ $v == main ]] && cp .calib/before/objects.cpp $src/example/gol/objects.cpp
  (cmake -S $src -B /tmp/build-$v -G Ninja "${cfg[@]}" >"$out/$v-configure.log" 2>&1 &&
    cmake --build /tmp/build-$v -j 8 --target gol_dynasoar >"$out/$v-build.log" 2>&1
   echo "$v build: exit $? at $((SECONDS - t0)) s") &
done
wait
soup=(--width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json)
acorn=(--pattern example/gol/patterns/acorn.cells --width 12699 --height 12652 --steps 300 --quiet --json)
for r in 1 2; do
  for v in main tree; do
    e=/tmp/build-$v/example/gol_dynasoar
    $e "${soup[@]}" >"$out/soup-$v-$r.json"
    $e "${acorn[@]}" >"$out/acorn-$v-$r.json"
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/*-[12].json")):
    d = json.load(open(f))
    ph = {k: round(v, 1) for k, v in (d.get('phases_ms') or {}).items()}
    print(f"{os.path.basename(f):20} {d['total_ms']:>8.1f} {d.get('checksum')} {ph}")
PY
echo "timed at $((SECONDS - t0)) s"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
prof() {  # name, build, kernel regex
  "$NCU" --kernel-name-base demangled --kernel-name regex:"$3" --launch-skip 100 --launch-count 1 \
    --section SpeedOfLight --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy \
    --import-source yes -o "$out/$1" /tmp/build-$2/example/gol_dynasoar --width 2048 --height 2048 --steps 102 --density 0.3 --quiet >"$out/$1-ncu.log" 2>&1
  echo "ncu $1: exit $?"
  "$NCU" --import "$out/$1.ncu-rep" --page details > "$out/$1-details.txt" 2>&1
  "$NCU" --import "$out/$1.ncu-rep" --page source --csv --print-source cuda > "$out/$1-cuda.csv" 2>&1
  rm -f "$out/$1.ncu-rep"
}
prof cand-update main 'DoAll.*Candidate::update'
prof alive-update main 'DoAll.*Alive::update'
prof create main 'DoAll.*create_candidates'
prof create-tree tree 'DoAll.*create_candidates'
grep -h -E "^  [A-Za-z].*DoAll|Duration|Registers Per|Achieved Occupancy" "$out"/*-details.txt | head -40
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
