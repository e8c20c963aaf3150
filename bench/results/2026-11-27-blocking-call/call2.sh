#!/usr/bin/env bash
# On the GPU machine, from the repository root: the third form (every raise
# of the heap marks the page-locked mirror; the blocking call waits and
# reads it) against main (8374703, .calib/bin.txz) and the second form
# (a one-thread kernel copies the word, 9eab110, unpacked in .variant/),
# then the tests and golden runs of the DynaSOAr heap's programs.
set -uo pipefail
DEPS=$PWD/.gpu-deps/usr
s=$SECONDS
(cd .variant && DEPS_PREFIX=$DEPS JOBS=4 scripts/build-gpu.sh soa_bench > $OUT/build-variant.log 2>&1) &
DEPS_PREFIX=$DEPS JOBS=14 scripts/build-gpu.sh soa_bench wator_dynasoar gol_dynasoar nbody_dynasoar kdtree_dynasoar \
  barnes_hut_dynasoar readme_example_dynasoar learn_heap_basics learn_new_and_destroy learn_inheritance learn_device_do \
  platform_test api_test errors_test soa_test soa_stress_test > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
wait
[[ -x .variant/build-gpu/bin/soa_bench ]] || { tail -30 $OUT/build-variant.log; exit 1; }
echo "built in $((SECONDS - s)) s"
mkdir -p /tmp/b && tar xJf .calib/bin.txz -C /tmp/b
nvidia-smi -L
mkdir -p $OUT/csv
for i in 1 2 3; do
  /tmp/b/bin/soa_bench --only empty --csv $OUT/csv/empty-main-$i.csv > /dev/null
  .variant/build-gpu/bin/soa_bench --only empty --csv $OUT/csv/empty-kernel-$i.csv > /dev/null
  build-gpu/bin/soa_bench --only empty --csv $OUT/csv/empty-seen-$i.csv > /dev/null
done
for f in $OUT/csv/empty-*.csv; do echo "$(basename $f): $(grep -E "gpu_events,|host_wall" $f | awk -F, '{printf "%s/%s=%s  ", $2, $3, $8}')"; done
for i in 1 2; do
  for v in main seen; do
    b=/tmp/b/bin; [[ $v == seen ]] && b=build-gpu/bin
    for p in wator gol nbody; do
      echo "$v $p: $($b/${p}_dynasoar --quiet 2>&1 | grep -E 'total|checksum' | tr -s ' ' | tr '\n' ' ')"
    done
  done
done
GIT_COMMIT=working-tree timeout 300 scripts/gpu-check.sh build-gpu/bin $OUT/tier tests > /dev/null 2>&1
echo "tests and golden runs: exit $? (bitmap_demo is not built here)"
grep -E "^test |golden run|readme|learn|overall" $OUT/tier/summary.txt | grep -vE "exit 0" | head -20
echo "golden runs exit 0: $(grep -c 'golden run .*exit 0' $OUT/tier/summary.txt), not 0: $(grep 'golden run' $OUT/tier/summary.txt | grep -vc 'exit 0')"
grep -E "^test " $OUT/tier/summary.txt
cp $OUT/tier/summary.txt $OUT/tests-summary.txt; rm -f $OUT/tier/*.xml; tar -C $OUT -czf $OUT/tests-logs.tgz tier; rm -rf $OUT/tier
