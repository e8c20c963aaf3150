#!/usr/bin/env bash
# n-body's force phase after the headers moved out of the blocks: 5 % slower
# in run.sh's rounds, although its inner loop compiles to fewer
# instructions. Three builds of nbody_dynasoar, run interleaved, 1000 steps:
#   main    = the commit before (.calib/src-main): header in the block, data at byte 64;
#   headers = the change (.calib/src-headers): headers apart, data at byte 0;
#   off64   = the change with the data at byte 64 of each block (.calib/src-off64),
#             the block otherwise as in `headers`.
#   bench/results/2026-11-27-h100-headers-apart/nbody.sh OUT
set -uo pipefail
out=${1:?}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
D=$PWD/.gpu-deps/usr; lib=$D/lib/x86_64-linux-gnu
t0=$SECONDS
cfg=(-DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF
     -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include
     -DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a)
for v in main headers off64; do
  t=nbody_dynasoar; [[ $v == headers ]] && t="nbody_dynasoar nbody_baseline"
  (cmake -S .calib/src-$v -B build-n$v -G Ninja "${cfg[@]}" >"$out/$v-configure.log" 2>&1 &&
   cmake --build build-n$v -j 5 --target $t >"$out/$v-build.log" 2>&1; echo "$v build: exit $? at $((SECONDS - t0)) s") &
done
wait
for r in 1 2; do
  build-nheaders/example/nbody_baseline --bodies 20000 --steps 1000 --quiet --json >"$out/nbody-baseline-$r.json"
  for v in main headers off64; do
    build-n$v/example/nbody_dynasoar --bodies 20000 --steps 1000 --quiet --json >"$out/nbody-$v-$r.json"
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(f))
    print(f"{os.path.basename(f):24} {d['total_ms']:>9.1f} {d.get('float_checksum', d.get('checksum'))} {d.get('phases_ms')}")
PY
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
