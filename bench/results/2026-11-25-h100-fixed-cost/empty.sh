#!/usr/bin/env bash
# Issue 21 baseline: the fixed cost of an empty parallel_do and the do-all ratio at HEAD,
# and what an empty parallel_do launches (nsys), to find where the 20 us go.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DDYNASOAR_VIEWER_SDL2=OFF -DDYNASOAR_BUILD_BENCH=ON -DDYNASOAR_BUILD_EXAMPLES=OFF -DDYNASOAR_BUILD_TESTS=OFF > $OUT/configure.log 2>&1 || { tail $OUT/configure.log; exit 1; }
cmake --build build-gpu -j16 --target soa_bench > $OUT/build.log 2>&1 || { grep -m3 -A10 error $OUT/build.log; exit 1; }
echo "commit $(cat .calib/commit)"
for r in 1 2; do build-gpu/bench/soa_bench --only empty --csv $OUT/empty-$r.csv > /dev/null 2>&1; echo "empty run $r: $?"; grep "^empty" $OUT/empty-$r.csv | cut -d, -f1-9; done
build-gpu/bench/soa_bench --only do_all --csv $OUT/do_all.csv > /dev/null 2>&1; echo "do_all: $?"; grep "^do_all" $OUT/do_all.csv | cut -d, -f1-11
which nsys || ls /usr/local/cuda/bin | grep -i nsys || ls /opt/nvidia 2>/dev/null
if command -v nsys >/dev/null; then
  nsys profile -o $OUT/empty --force-overwrite true build-gpu/bench/soa_bench --only empty --quick > $OUT/nsys.log 2>&1
  nsys stats --report cuda_gpu_trace --format csv $OUT/empty.nsys-rep > $OUT/trace.csv 2>/dev/null
  nsys stats --report cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum $OUT/empty.nsys-rep > $OUT/nsys-stats.txt 2>&1
  tail -n 40 $OUT/trace.csv | cut -c1-200
  rm -f $OUT/empty.nsys-rep $OUT/*.sqlite; gzip $OUT/trace.csv
fi
