#!/usr/bin/env bash
# Device tier at the commit in .calib/commit: build every target (Release),
# one tier run with the golden runs of every example, two more of the tests
# alone, then compute-sanitizer with the time left.
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
commit=$(cat .calib/commit)
cmake -S . -B build-gpu -G Ninja -DDYNASOAR_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DDYNASOAR_VIEWER_SDL2=OFF -DDYNASOAR_BUILD_BENCH=OFF > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
t0=$SECONDS
cmake --build build-gpu -j16 > $OUT/build.log 2>&1 || { grep -m5 -B2 -A12 "error" $OUT/build.log; exit 1; }
echo "built all in $((SECONDS - t0)) s (commit $commit)"
mkdir -p build-gpu/bin build-gpu/all
cp build-gpu/test/*_test build-gpu/example/bitmap_demo build-gpu/example/readme_example_* build-gpu/example/learn_* build-gpu/bin/
cp build-gpu/bin/* build-gpu/all/
for e in wator nbody gol kdtree barnes_hut; do cp build-gpu/example/${e}_* build-gpu/all/ 2>/dev/null; done
for run in 1 2 3; do
  s=$SECONDS
  bin=build-gpu/bin; [[ $run == 1 ]] && bin=build-gpu/all
  GIT_COMMIT=$commit TEST_TIMEOUT=100 timeout 230 scripts/gpu-check.sh $bin $OUT/tier-$run tests > /dev/null 2>&1
  echo "run $run ($bin): exit $?, $((SECONDS - s)) s: $(grep -E '^device tier' $OUT/tier-$run/summary.txt)"
  grep -E "(FAIL|TIMED|exit [1-9])" $OUT/tier-$run/summary.txt | head -20
  grep -c "golden run .*exit 0" $OUT/tier-$run/summary.txt
  rm -f $OUT/tier-$run/*.xml
  if [[ $run == 1 ]]; then tar -C $OUT -czf $OUT/tier-1.tgz tier-1; fi
  mv $OUT/tier-$run/summary.txt $OUT/tier-$run-summary.txt; rm -rf $OUT/tier-$run
done
left=$((575 - SECONDS))
echo "time left for the sanitizers: $left s"
if ((left > 130)); then
  s=$SECONDS
  GIT_COMMIT=$commit SANITIZE_TIMEOUT=$((left - 10)) SANITIZE_JOBS=10 SANITIZE_ROUNDS=8 timeout $left scripts/gpu-check.sh build-gpu/bin $OUT/sanitize sanitize > /dev/null 2>&1
  echo "sanitize exit $?, $((SECONDS - s)) s"
  grep -E "compute-sanitizer|overall" $OUT/sanitize/summary.txt | grep -v "exit 0,"
  grep -c "exit 0," $OUT/sanitize/summary.txt
  mv $OUT/sanitize/summary.txt $OUT/sanitize-summary.txt
  tar -C $OUT -czf $OUT/sanitize-logs.tgz sanitize && rm -rf $OUT/sanitize
fi
