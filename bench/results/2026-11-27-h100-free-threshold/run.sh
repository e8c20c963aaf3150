#!/usr/bin/env bash
# Which frees to serve together, and a shorter search on an empty active
# bitmap: four builds in one call on one GPU, run interleaved.
#   head = c4748ad (.calib/src-head, git archive of it),
#   f16  = head + frees of the first present lane's block served by one
#          leader where at least 16 lanes free objects of it
#          (.calib/src-f16: ../2026-11-27-h100-free-coalesced/'s second form
#          with that threshold),
#   f32  = the same where all 32 lanes do (.calib/src-f32),
#   top  = head + the leader stops searching the active bitmap once it
#          found the top level empty (.calib/src-top).
#   bench/results/2026-11-27-h100-free-threshold/run.sh OUT
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
ex="soa_bench wator_dynasoar gol_dynasoar"
build() {  # name source targets...
  local n=$1 src=$2; shift 2
  cmake -S "$src" -B "build-$n" -G Ninja "${cfg[@]}" >"$out/$n-configure.log" 2>&1 &&
    timeout 420 cmake --build "build-$n" -j 4 --target "$@" >"$out/$n-build.log" 2>&1
  echo "$n build: exit $? at $((SECONDS - t0)) s"
}
for v in head f16 f32; do build $v .calib/src-$v $ex & done
build top .calib/src-top $ex errors_test soa_stress_test
wait
for t in errors_test soa_stress_test; do
  timeout 120 build-top/test/$t >"$out/top-$t.txt" 2>&1
  echo "top $t: exit $? $(grep -E '^\[  (PASSED|FAILED)' "$out/top-$t.txt" | tr '\n' ' ')"
done
for round in 1 2; do
  for b in head f16 f32 top; do
    timeout 90 build-$b/bench/soa_bench --only scalability --csv "$out/soa-$b-$round.csv" >/dev/null 2>&1
    echo "soa_bench $b $round: exit $?"
  done
done
for f in "$out"/soa-*.csv; do
  echo "== ${f##*/}: $(grep -E '^(alloc|free),dynasoar,1048576,1,' "$f" | cut -d, -f1,3,5 | tr '\n' ' ')"
done
for r in 1 2; do
  for b in head f16 f32 top; do
    e=build-$b/example
    $e/wator_dynasoar --width 2048 --height 2560 --steps 500 --quiet --json >"$out/wator-$b-$r.json"
    $e/gol_dynasoar --width 2048 --height 2048 --steps 300 --density 0.3 --quiet --json >"$out/gol-$b-$r.json"
  done
done
python3 - "$out" <<'PY'
import json, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try:
        d = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    ph = d.get("phases_ms", {})
    print(os.path.basename(f), d.get("total_ms"), d.get("checksum"), " ".join(f"{k}={v:.1f}" for k, v in ph.items()))
PY
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" --exclude='*-build.log' --exclude='*-configure.log' . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
