#!/usr/bin/env bash
# Whether generic loads and stores cost the do-all its gap: the heap's field
# proxies compile to generic LD/ST (addresses made from integers), the plain
# arrays' kernel to LDG/STG. `generic` (.calib/src-generic) = main with two
# more timings in soa_bench's do-all, printed to stderr: the plain-array step
# through pointers the compiler cannot place in the global space, once as
# written (vel read once) and once as the heap's method reads (vel twice);
# and the plain step as a grid-stride loop over 2 112 to 16 896 thread
# blocks of 128 threads (the do-all's form; one wave on an H100 is 2 112);
# then (second call) plain memory laid out as the heap's blocks, walked as
# the do-all walks them, without list entries, dense and every other block;
# then (third call) such blocks of 512, 576 and 640 bytes with the data at
# byte 0, 64 or 128.
#   bench/results/2026-11-27-h200-do-all-entry/generic.sh OUT
set -uo pipefail
out=${1:?}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
D=$PWD/.gpu-deps/usr; lib=$D/lib/x86_64-linux-gnu
t0=$SECONDS
cmake -S .calib/src-generic -B build-generic -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF -DCMAKE_PREFIX_PATH=$D -DGTEST_ROOT=$D \
  -DPNG_PNG_INCLUDE_DIR=$D/include -DZLIB_INCLUDE_DIR=$D/include -DPNG_LIBRARY_RELEASE=$lib/libpng16.a \
  -DZLIB_LIBRARY_RELEASE=$lib/libz.a >"$out/configure.log" 2>&1 &&
  cmake --build build-generic -j 16 --target soa_bench >"$out/build.log" 2>&1
echo "build: exit $? at $((SECONDS - t0)) s"
for r in 1 2; do
  timeout 120 build-generic/bench/soa_bench --only do_all --csv "$out/soa-generic-$r.csv" 2>"$out/stderr-$r.txt" >/dev/null
  echo "round $r: exit $?"; grep EXPERIMENT "$out/stderr-$r.txt"
  grep -E '^do_all,(dynasoar|soa_arrays),' "$out/soa-generic-$r.csv" | cut -d, -f2,3,5 | tr '\n' ' '; echo
done
echo "total $((SECONDS - t0)) s"
tar -czf "$out.tgz" -C "$out" . && rm -rf "$out" && mkdir -p "$out" && mv "$out.tgz" "$out/files.tgz"
