#!/usr/bin/env bash
# An upper bound, not a change: what the release of a destroy's slot costs
# the examples. The variant (`relaxed`) frees the slot with a relaxed
# read-modify-write, which the memory model does not allow (the object's
# last writes could land after the next owner's); main is HEAD. soa_bench,
# gol_dynasoar and wator_dynasoar of both, two rounds, builds interleaved:
# the 2^20 frees, the soup and wa-tor. The results come back as one archive.
#   bench/results/2026-11-28-h100-release-bound/run.sh OUT
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
for v in main relaxed; do
  src=/tmp/src-$v
  rm -rf $src && mkdir -p $src && tar --exclude=./build-gpu --exclude=./.gpu-deps --exclude=./bench/results --exclude=./.git --exclude=./.calib -c . | tar -x -C $src
  [[ $v == relaxed ]] && sed -i 's/platform::atomic_fetch_and(bits, ~mask, platform::release)/platform::atomic_fetch_and(bits, ~mask, platform::relaxed)/' $src/include/dynasoar/allocator/soa/heap.h
  grep -c "atomic_fetch_and(bits, ~mask, platform::relaxed)" $src/include/dynasoar/allocator/soa/heap.h | sed "s/^/$v relaxed frees in heap.h: /"
  (cmake -S $src -B /tmp/build-$v -G Ninja "${cfg[@]}" >"$out/$v-configure.log" 2>&1 &&
    cmake --build /tmp/build-$v -j 8 --target soa_bench gol_dynasoar wator_dynasoar >"$out/$v-build.log" 2>&1
   echo "$v build: exit $? at $((SECONDS - t0)) s") &
done
wait
for r in 1 2; do
  for v in main relaxed; do
    b=/tmp/build-$v/bench/soa_bench; e=/tmp/build-$v/example
    timeout 100 $b --only scalability --csv "$out/soa-$v-$r.csv" >/dev/null 2>&1
    echo "== soa-$v-$r: exit $?, $(grep -E '^(alloc|free),dynasoar,1048576,1,' "$out/soa-$v-$r.csv" | cut -d, -f1,5 | tr '\n' ' ')"
    $e/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json >"$out/gol-$v-$r.json"
    $e/wator_dynasoar --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-$v-$r.json"
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/*-[12].json")):
    d = json.load(open(f))
    ph = {k: round(v, 1) for k, v in (d.get('phases_ms') or {}).items()}
    print(f"{os.path.basename(f):22} {d['total_ms']:>8.1f} {d.get('checksum')} {ph}")
PY
echo "total $((SECONDS - t0)) s"
rm -f "$out"/*-configure.log
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
