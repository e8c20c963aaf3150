#!/usr/bin/env bash
# Second call: the heap's fields read once in deallocate only (the tree; the
# first call's allocate part taken back), against the commit before (main:
# heap.h of HEAD in .calib/before/). Every device target of the tree built
# (scripts/build-gpu.sh, for the device tier in the next call), main built
# for soa_bench and three examples beside it; then two rounds, builds
# interleaved, of soa_bench's allocation and free (scalability) and of the
# game of life soup, wa-tor and sugarscape; the registers of the allocation
# and free kernels. The results come back as one archive.
#   bench/results/2026-11-27-h100-state-reads/run.sh OUT
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
src=/tmp/src-main
mkdir -p $src && tar --exclude=./build-gpu --exclude=./.gpu-deps --exclude=./bench/results --exclude=./.git --exclude=./.calib -c . | tar -x -C $src
cp .calib/before/heap.h $src/include/dynasoar/allocator/soa/heap.h
(cmake -S $src -B /tmp/build-main -G Ninja "${cfg[@]}" >"$out/main-configure.log" 2>&1 &&
  cmake --build /tmp/build-main -j 4 --target soa_bench gol_dynasoar wator_dynasoar sugarscape_dynasoar >"$out/main-build.log" 2>&1
 echo "main build: exit $? at $((SECONDS - t0)) s") &
DEPS_PREFIX=$D JOBS=14 scripts/build-gpu.sh >"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
echo "tree built at $((SECONDS - t0)) s"
tail -3 "$out/build.log" >"$out/build-tail.txt"; rm "$out/build.log"
wait
for v in main tree; do
  b=/tmp/build-main/bench/soa_bench; [[ $v == tree ]] && b=build-gpu/bin/soa_bench
  cuobjdump --dump-resource-usage $b | grep -A1 -E 'heap_alloc|heap_free' | grep -Eo 'heap_(alloc|free)|REG:[0-9]+' | paste - - | sed "s|^|$v: |"
done > "$out/alloc-free-registers.txt"
cat "$out/alloc-free-registers.txt"
for r in 1 2; do
  for v in main tree; do
    b=/tmp/build-main/bench/soa_bench; e=/tmp/build-main/example
    [[ $v == tree ]] && b=build-gpu/bin/soa_bench && e=build-gpu/bin
    timeout 100 $b --only scalability --csv "$out/soa-$v-$r.csv" >/dev/null 2>&1
    echo "== soa-$v-$r: exit $?, $(grep -E '^(alloc|free),dynasoar,(1048576|16384),1,' "$out/soa-$v-$r.csv" | cut -d, -f1,3,5 | tr '\n' ' ')"
    $e/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json >"$out/gol-$v-$r.json"
    $e/wator_dynasoar --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-$v-$r.json"
    $e/sugarscape_dynasoar --width 1700 --height 1700 --steps 500 --quiet --json >"$out/sugarscape-$v-$r.json"
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/*-[12].json")):
    d = json.load(open(f))
    ph = {k: round(v, 1) for k, v in (d.get('phases_ms') or {}).items()}
    print(f"{os.path.basename(f):24} {d['total_ms']:>8.1f} {d.get('checksum', d.get('float_checksum'))} {ph}")
PY
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
