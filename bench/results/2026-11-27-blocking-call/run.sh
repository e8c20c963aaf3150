#!/usr/bin/env bash
# From the repository root on the GPU machine: the micro-benchmark twice,
# and soa_bench's empty parallel_do rows of the library as it is (8374703).
set -euo pipefail
D=bench/results/2026-11-27-blocking-call
nvcc -O2 -arch=sm_90 -std=c++17 $D/blocking_call.cu -o /tmp/blocking_call
mkdir -p /tmp/b && tar xJf .calib/bin.txz -C /tmp/b
nvidia-smi -L
for i in 1 2; do /tmp/blocking_call; /tmp/b/bin/soa_bench --only empty --csv $OUT/empty-main-$i.csv | tail -12; done
