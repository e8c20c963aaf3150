#!/usr/bin/env bash
# Call 4: the error flags read into page-locked memory (working tree) against
# main without it (.calib/src-main): soa_bench --only empty, three rounds
# interleaved; the tests that read the flags.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
cfg="-G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDYNASOAR_VIEWER_SDL2=OFF"
mkdir -p $OUT/b
( cmake -S .calib/src-main -B build-main $cfg > $OUT/b/main-configure.log 2>&1 && timeout 300 cmake --build build-main -j4 --target soa_bench > $OUT/b/main-build.log 2>&1; echo "main build exit $? at $((SECONDS - t0)) s" ) &
cmake -S . -B build-gpu $cfg > $OUT/b/configure.log 2>&1 || { tail -20 $OUT/b/configure.log; exit 1; }
timeout 400 cmake --build build-gpu -j12 --target soa_bench platform_test soa_test api_test errors_test backend_test > $OUT/b/build.log 2>&1 || { echo "BUILD ERRORS or timeout:"; grep -m8 -B2 -A12 "error" $OUT/b/build.log | cut -c1-300; }
echo "built at $((SECONDS - t0)) s"
wait
for t in platform_test soa_test api_test errors_test backend_test; do
  timeout 150 build-gpu/test/$t > $OUT/b/$t.txt 2>&1; echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED)' $OUT/b/$t.txt | tr '\n' ' ')"
done
for round in 1 2 3; do
  for b in main gpu; do
    build-$b/bench/soa_bench --only empty --csv $OUT/b/empty-$b-$round.csv > /dev/null 2>&1; echo "empty $b $round: exit $?"
  done
done
for f in $OUT/b/empty-*.csv; do echo "== ${f##*/}"; grep -E "^empty_parallel_do" $f | cut -d, -f2,3,5 | tr '\n' ' '; echo; done
tar -C $OUT -czf $OUT/c4.tgz b; rm -rf $OUT/b
echo "total $((SECONDS - t0)) s"
