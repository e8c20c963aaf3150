#!/usr/bin/env bash
set -uo pipefail
cp -r .gpu-deps/usr/. /usr/ 2>/dev/null
export PATH=/usr/local/cuda/bin:$PATH
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
[[ -x build-gpu/bench/soa_bench ]] || cmake --build build-gpu -j16 --target soa_bench > /dev/null 2>&1
# The 1 MiB heap's empty parallel_do: skip the warm-up, then one parallel_do's launches.
$NCU --launch-skip 100 --launch-count 12 --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size \
  build-gpu/bench/soa_bench --only empty --quick > $OUT/ncu.txt 2>&1
grep -E "^  [a-zA-Z_].*\(|gpu__time_duration|launch__grid_size|launch__block_size" $OUT/ncu.txt | sed 's/dynasoar:://g' | cut -c1-160 | head -60
