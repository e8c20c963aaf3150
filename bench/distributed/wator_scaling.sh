#!/usr/bin/env bash
# wa-tor on one GPU and on two (issue targets of the distributed layer):
#   weak:   wator_distributed --ranks 2 on 4096x2560 against the one-GPU
#           programs on 2048x2560 (the same cells per GPU);
#   strong: 2048x2560 on one GPU and on two;
#   memory: a grid whose heap needs 1.5 times a per-GPU limit runs on 2
#           ranks with the limit each and stops on 1 with the out-of-memory
#           error (the need is found by bisection over --heap-mib).
# Each timed program runs once to warm up, then three times; ms is the
# report's total_ms (the step loop; the distributed program's slowest rank).
#
#   bench/distributed/wator_scaling.sh BIN_DIR OUT_DIR
#   WIDTH=96 HEIGHT=64 STEPS=20 MEM_WIDTH=512 MEM_HEIGHT=512 MEM_MAX_MIB=64 bench/distributed/wator_scaling.sh ...
#
# Writes OUT_DIR/wator_scaling.csv (case,program,ranks,width,height,steps,run,ms,checksum),
# OUT_DIR/wator_memory.txt (the memory case's three runs) and
# OUT_DIR/wator_scaling.txt (medians and ratios).
set -euo pipefail
bin=${1:?usage: wator_scaling.sh BIN_DIR OUT_DIR}
out=${2:?usage: wator_scaling.sh BIN_DIR OUT_DIR}
width=${WIDTH:-2048}
height=${HEIGHT:-2560}
steps=${STEPS:-500}
runs=3
mkdir -p "$out"
csv=$out/wator_scaling.csv
echo "case,program,ranks,width,height,steps,run,ms,checksum" >"$csv"

source "$(dirname "$0")/measure.sh"
# case, program label, ranks, width, height, command...
measure_grid() {
  local case=$1 label=$2 ranks=$3 w=$4 h=$5; shift 5
  measure "$case,$label,$ranks,$w,$h,$steps" "$@" --width "$w" --height "$h" --steps "$steps"
}
measure_grid one-gpu wator_dynasoar 1 "$width" "$height" "$bin/wator_dynasoar"
measure_grid one-gpu wator_distributed 1 "$width" "$height" "$bin/wator_distributed" --ranks 1
measure_grid strong wator_distributed 2 "$width" "$height" "$bin/wator_distributed" --ranks 2
measure_grid weak wator_distributed 2 $((2 * width)) "$height" "$bin/wator_distributed" --ranks 2

# The memory case: fewer steps, one run each; exit codes and messages kept.
# NEED: the smallest heap (MiB, found by bisection) with which the grid runs
# on one rank; LIMIT = NEED / 1.5 per GPU; then the grid on one rank with
# LIMIT (it must stop with the out-of-memory error) and on two ranks with
# LIMIT each (it must run and give the checksum of the run with NEED).
mem_w=${MEM_WIDTH:-8192}
mem_h=${MEM_HEIGHT:-6400}
mem_steps=${MEM_STEPS:-20}
mem_run() {  # ranks heap_mib: the report's lines, then "exit code N"
  set +e
  "$bin/wator_distributed" --ranks "$1" --heap-mib "$2" --width "$mem_w" --height "$mem_h" \
    --steps "$mem_steps" --quiet 2>&1 | grep -E "checksum|live|heap|error" | head -5
  echo "exit code ${PIPESTATUS[0]}"
  set -e
}
lo=1 hi=${MEM_MAX_MIB:-16384}  # lo fails (or is 1), hi runs
while ((hi - lo > hi / 50 + 1)); do
  mid=$(((lo + hi) / 2))
  if mem_run 1 "$mid" | grep -q "exit code 0"; then hi=$mid; else lo=$mid; fi
done
need=$hi
limit=$((need * 2 / 3))  # the problem needs at least 1.5x the limit
{
  echo "wa-tor ${mem_w}x${mem_h}, ${mem_steps} steps: needs ${need} MiB of heap on one rank (bisection: ${lo} MiB fails)"
  echo "limit per GPU: ${limit} MiB (the problem needs $(python3 -c "print(f'{$need / $limit:.2f}')")x the limit)"
  echo "--- wator_distributed --ranks 1 --heap-mib $need"
  mem_run 1 "$need"
  echo "--- wator_distributed --ranks 1 --heap-mib $limit"
  mem_run 1 "$limit"
  echo "--- wator_distributed --ranks 2 --heap-mib $limit (per rank)"
  mem_run 2 "$limit"
} >"$out/wator_memory.txt"

device=$(device_of "$bin/wator_distributed" --width 4 --height 4 --steps 0)
python3 - "$csv" "$device" >"$out/wator_scaling.txt" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ms, sums = {}, {}
for r in rows:
    key = (r["case"], r["program"], int(r["ranks"]), f'{r["width"]}x{r["height"]}')
    ms.setdefault(key, []).append(float(r["ms"]))
    sums.setdefault(key, set()).add(r["checksum"])
print(f"wa-tor, {rows[0]['steps']} steps, on {sys.argv[2]}; median of {len(next(iter(ms.values())))} runs after a warm-up")
med = {k: statistics.median(v) for k, v in ms.items()}
for k, m in med.items():
    print(f"{k[0]:8} {k[1]} --ranks {k[2]} {k[3]}: median {m:.1f} ms, checksums {' '.join(sorted(sums[k]))}")
def find(case, program, ranks):
    return next(m for k, m in med.items() if k[:3] == (case, program, ranks))
single = find("one-gpu", "wator_dynasoar", 1)
dist1 = find("one-gpu", "wator_distributed", 1)
strong = find("strong", "wator_distributed", 2)
weak = find("weak", "wator_distributed", 2)
print(f"strong scaling, 2 GPUs against wator_dynasoar on 1: {single / strong:.2f}x faster (target >= 1.7)")
print(f"strong scaling, 2 GPUs against wator_distributed on 1: {dist1 / strong:.2f}x faster")
print(f"weak scaling, 2 GPUs on twice the grid against wator_dynasoar on 1: {weak / single:.2f}x the time (target <= 1.15)")
print(f"weak scaling, against wator_distributed on 1: {weak / dist1:.2f}x the time")
PY
cat "$out/wator_scaling.txt" "$out/wator_memory.txt"
