#!/usr/bin/env bash
# On the GPU machine after build.sh: the blocking call before (binaries of
# 8374703, the library of main, carried in .calib/bin.txz) and after (this
# working tree, build-gpu/bin), interleaved; then the micro-benchmark again.
set -uo pipefail
D=bench/results/2026-11-27-blocking-call
mkdir -p /tmp/b && tar xJf .calib/bin.txz -C /tmp/b
nvidia-smi -L
mkdir -p $OUT/csv
for i in 1 2 3; do
  /tmp/b/bin/soa_bench --only empty --csv $OUT/csv/empty-main-$i.csv > /dev/null
  build-gpu/bin/soa_bench --only empty --csv $OUT/csv/empty-change-$i.csv > /dev/null
done
for f in $OUT/csv/empty-*.csv; do echo "$(basename $f): $(grep -E "gpu_events,|host_wall" $f | awk -F, '{printf "%s/%s=%s  ", $2, $3, $8}')"; done
for i in 1 2; do
  for v in main change; do
    b=/tmp/b/bin; [[ $v == change ]] && b=build-gpu/bin
    echo "$v wator: $($b/wator_dynasoar --quiet 2>&1 | grep -E 'total|checksum' | tr -s ' ' | tr '\n' ' ')"
    echo "$v nbody: $($b/nbody_dynasoar --quiet 2>&1 | grep -E 'total|checksum' | tr -s ' ' | tr '\n' ' ')"
  done
done
