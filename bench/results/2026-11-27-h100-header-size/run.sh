#!/usr/bin/env bash
# Block headers of 32 (the tree), 64 and 128 bytes: does wa-tor's shark
# update get back what it lost when the headers left the blocks (headers
# sharing 128-byte lines under new/destroy read-modify-writes), and what do
# the others pay? Three copies of the working tree, the two larger ones with
# BlockHeader's alignas and static_assert changed; each built for
# soa_bench and the heap examples; then two rounds, builds interleaved, of
# soa_bench (do_all, empty, scalability) and of wa-tor, the game of life
# soup, sugarscape and n-body (1000 steps) at their benchmark sizes, with
# wa-tor's baseline. The results come back as one archive.
#   bench/results/2026-11-27-h100-header-size/run.sh OUT
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
targets=(soa_bench wator_dynasoar gol_dynasoar sugarscape_dynasoar nbody_dynasoar)
for n in 32 64 128; do
  src=/tmp/src-h$n
  mkdir -p $src && tar --exclude=./build-gpu --exclude=./.gpu-deps --exclude=./bench/results --exclude=./.git -c . | tar -x -C $src
  sed -i "s/struct alignas(32) BlockHeader/struct alignas($n) BlockHeader/; s/sizeof(BlockHeader) == 32/sizeof(BlockHeader) == $n/" \
    $src/include/dynasoar/allocator/soa/heap.h
  grep -c "alignas($n) BlockHeader" $src/include/dynasoar/allocator/soa/heap.h >/dev/null || { echo "h$n: patch failed"; exit 1; }
  extra=(); [[ $n == 32 ]] && extra=(wator_baseline)
  (cmake -S $src -B /tmp/build-h$n -G Ninja "${cfg[@]}" >"$out/h$n-configure.log" 2>&1 &&
    cmake --build /tmp/build-h$n -j 6 --target "${targets[@]}" "${extra[@]}" >"$out/h$n-build.log" 2>&1
   echo "h$n build: exit $? at $((SECONDS - t0)) s") &
done
wait
for r in 1 2; do
  for n in 32 64 128; do
    timeout 150 /tmp/build-h$n/bench/soa_bench --only do_all --only empty --only scalability --csv "$out/soa-h$n-$r.csv" >/dev/null 2>&1
    echo "soa_bench h$n $r: exit $?"
  done
done
for f in "$out"/soa-*.csv; do
  echo "== ${f##*/}: $(grep -E '^do_all,dynasoar,(1048576|16777216),|^empty_parallel_do,gpu_events,|^(alloc|free),dynasoar,1048576,1,' "$f" | cut -d, -f1,3,5,11 | cut -c1-48 | tr '\n' ' ')"
done
for r in 1 2; do
  /tmp/build-h32/example/wator_baseline --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-baseline-$r.json"
  for n in 32 64 128; do
    e=/tmp/build-h$n/example
    $e/wator_dynasoar --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-h$n-$r.json"
    $e/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json >"$out/gol-h$n-$r.json"
    $e/sugarscape_dynasoar --width 1700 --height 1700 --steps 500 --quiet --json >"$out/sugarscape-h$n-$r.json"
    $e/nbody_dynasoar --bodies 20000 --steps 1000 --quiet --json >"$out/nbody-h$n-$r.json"
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
