#!/usr/bin/env bash
# The game of life's eight neighbours from one division (Grid::neighbors, in
# the object version and the baseline: the tree) against a division per
# neighbour (main: the tree's objects.cpp, claims first, with HEAD's
# rules.h and baseline.cpp, from .calib/before/); gol_dynasoar and
# gol_baseline of both, three rounds, builds interleaved, of the soup
# (2048x2048, 300 steps) and the acorn (12 699x12 652, 300 steps). The
# results come back as one archive.
#   bench/results/2026-11-28-h100-gol-neighbors/run.sh OUT
set -uo pipefail
out=${1:?usage: run.sh OUT}
mkdir -p "$out"
t0=$SECONDS
export PATH=/usr/local/cuda/bin:$PATH
D=${DEPS_PREFIX:-$PWD/.gpu-deps/usr}
lib=$D/lib/x86_64-linux-gnu
cfg=(-DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF
     -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include
     -DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a)
for v in main tree; do
  src=/tmp/src-$v
  rm -rf $src && mkdir -p $src && tar --exclude=./build-gpu --exclude=./.gpu-deps --exclude=./bench/results --exclude=./.git --exclude=./.calib -c . | tar -x -C $src
  [[ $v == main ]] && cp .calib/before/objects.cpp .calib/before/baseline.cpp .calib/before/rules.h $src/example/gol/
  (cmake -S $src -B /tmp/build-$v -G Ninja "${cfg[@]}" >"$out/$v-configure.log" 2>&1 &&
    cmake --build /tmp/build-$v -j 8 --target gol_dynasoar gol_baseline >"$out/$v-build.log" 2>&1
   echo "$v build: exit $? at $((SECONDS - t0)) s") &
done
wait
soup=(--width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json)
acorn=(--pattern example/gol/patterns/acorn.cells --width 12699 --height 12652 --steps 300 --quiet --json)
for r in 1 2 3; do
  for v in main tree; do
    for b in dynasoar baseline; do
      e=/tmp/build-$v/example/gol_$b
      $e "${soup[@]}" >"$out/soup-$b-$v-$r.json"
      $e "${acorn[@]}" >"$out/acorn-$b-$v-$r.json"
    done
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/*-[123].json")):
    d = json.load(open(f))
    ph = {k: round(v, 1) for k, v in (d.get('phases_ms') or {}).items()}
    print(f"{os.path.basename(f):28} {d['total_ms']:>8.1f} {d.get('checksum')} {ph}")
PY
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
