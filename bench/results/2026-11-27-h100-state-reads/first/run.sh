#!/usr/bin/env bash
# The heap's fields read once, before the first atomic, in allocate and
# deallocate (tree) against the commit before (main: heap.h of HEAD, put in
# .calib/before/ by hand). Each built for soa_bench and the heap examples;
# then two rounds, builds interleaved, of soa_bench (do_all, empty,
# scalability) and of wa-tor, the game of life soup, sugarscape and n-body
# (1000 steps), and the registers of the allocation and free kernels. The
# results come back as one archive.
#   bench/results/2026-11-27-h100-state-reads/first/run.sh OUT (run from the folder above as run.sh)
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
variants=(main tree)
for v in "${variants[@]}"; do
  src=/tmp/src-$v
  mkdir -p $src && tar --exclude=./build-gpu --exclude=./.gpu-deps --exclude=./bench/results --exclude=./.git --exclude=./.calib -c . | tar -x -C $src
  [[ $v == main ]] && cp .calib/before/heap.h $src/include/dynasoar/allocator/soa/heap.h
  extra=(); [[ $v == tree ]] && extra=(soa_test soa_stress_test errors_test)
  (cmake -S $src -B /tmp/build-$v -G Ninja "${cfg[@]}" >"$out/$v-configure.log" 2>&1 &&
    cmake --build /tmp/build-$v -j 6 --target "${targets[@]}" "${extra[@]}" >"$out/$v-build.log" 2>&1
   echo "$v build: exit $? at $((SECONDS - t0)) s") &
done
wait
for v in "${variants[@]}"; do
  cuobjdump --dump-resource-usage /tmp/build-$v/bench/soa_bench | grep -A1 -E 'heap_alloc|heap_free' | grep -Eo 'heap_(alloc|free)|REG:[0-9]+' | paste - - | sed "s|^|$v: |"
done > "$out/alloc-free-registers.txt"
cat "$out/alloc-free-registers.txt"
for r in 1 2; do
  for v in "${variants[@]}"; do
    timeout 150 /tmp/build-$v/bench/soa_bench --only do_all --only empty --only scalability --csv "$out/soa-$v-$r.csv" >/dev/null 2>&1
    echo "soa_bench $v $r: exit $?"
  done
done
for f in "$out"/soa-*.csv; do
  echo "== ${f##*/}: $(grep -E '^do_all,dynasoar,(1048576|16777216),|^empty_parallel_do,gpu_events,|^(alloc|free),dynasoar,(1048576|16384),1,' "$f" | cut -d, -f1,3,5,10 | cut -c1-48 | tr '\n' ' ')"
done
for r in 1 2; do
  for v in "${variants[@]}"; do
    e=/tmp/build-$v/example
    $e/wator_dynasoar --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-$v-$r.json"
    $e/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json >"$out/gol-$v-$r.json"
    $e/sugarscape_dynasoar --width 1700 --height 1700 --steps 500 --quiet --json >"$out/sugarscape-$v-$r.json"
    $e/nbody_dynasoar --bodies 20000 --steps 1000 --quiet --json >"$out/nbody-$v-$r.json"
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/*-[12].json")):
    d = json.load(open(f))
    ph = {k: round(v, 1) for k, v in (d.get('phases_ms') or {}).items()}
    print(f"{os.path.basename(f):24} {d['total_ms']:>8.1f} {d.get('checksum', d.get('float_checksum'))} {ph}")
PY
for t in soa_test soa_stress_test errors_test; do
  timeout 120 /tmp/build-tree/test/$t >"$out/tree-$t.log" 2>&1
  echo "tree $t: exit $?, $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/tree-$t.log" | tr '\n' ' ')"
done
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
