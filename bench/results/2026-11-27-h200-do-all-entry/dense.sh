#!/usr/bin/env bash
# Whether the do-all's gap is the blocks' placement: parallel_new claims a
# block per group at a seeded, spread position in the free-block bitmap, so
# the benchmark's 2^24 objects lie in blocks scattered over a heap twice
# their size. `dense` (.calib/src-dense) = main with soa_bench's do-all
# objects made by parallel_new_indexed, which takes a run of consecutive
# free blocks. Both built and run interleaved, two rounds.
#   bench/results/2026-11-27-h200-do-all-entry/dense.sh OUT
set -uo pipefail
out=${1:?}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
D=$PWD/.gpu-deps/usr; lib=$D/lib/x86_64-linux-gnu
t0=$SECONDS
cfg=(-DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF
     -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include
     -DPNG_LIBRARY_RELEASE=$lib/libpng16.a -DZLIB_LIBRARY_RELEASE=$lib/libz.a)
for v in main dense; do
  (cmake -S .calib/src-$v -B build-d$v -G Ninja "${cfg[@]}" >"$out/$v-configure.log" 2>&1 &&
   cmake --build build-d$v -j 8 --target soa_bench >"$out/$v-build.log" 2>&1; echo "$v build: exit $? at $((SECONDS - t0)) s") &
done
wait
for r in 1 2; do
  for v in main dense; do
    timeout 120 build-d$v/bench/soa_bench --only do_all --csv "$out/soa-$v-$r.csv" >/dev/null 2>&1
    echo "$v $r: exit $? $(grep -E '^do_all,dynasoar,(1048576|16777216|67108864),' "$out/soa-$v-$r.csv" | cut -d, -f3,5,11 | cut -c1-40 | tr '\n' ' ')"
  done
done
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
