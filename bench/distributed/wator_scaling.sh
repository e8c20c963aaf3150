#!/usr/bin/env bash
# wa-tor on one GPU and on two (issue targets of the distributed layer):
#   weak:   wator_distributed --ranks 2 on 4096x2560 against the one-GPU
#           programs on 2048x2560 (the same cells per GPU);
#   strong: 2048x2560 on one GPU and on two;
#   memory: with --heap-mib HEAP_MIB per rank, a grid that needs about 1.5
#           times that runs on 2 ranks and stops on 1 with the out-of-memory
#           error (and runs on 1 with twice the heap, for the checksum).
# Each timed program runs once to warm up, then three times; ms is the
# report's total_ms (the step loop; the distributed program's slowest rank).
#
#   bench/distributed/wator_scaling.sh BIN_DIR OUT_DIR
#   WIDTH=96 HEIGHT=64 STEPS=20 MEM_WIDTH=512 MEM_HEIGHT=512 HEAP_MIB=5 bench/distributed/wator_scaling.sh ...
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

# One run: "ms checksum" from the program's JSON report.
run_once() {
  "$@" --steps "$steps" --json --quiet |
    python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["total_ms"], r["checksum"])'
}

# case, program label, ranks, width, height, command...
measure() {
  local case=$1 label=$2 ranks=$3 w=$4 h=$5; shift 5
  run_once "$@" --width "$w" --height "$h" >/dev/null  # warm-up
  local run result ms checksum
  for run in $(seq 1 $runs); do
    result=$(run_once "$@" --width "$w" --height "$h")
    read -r ms checksum <<<"$result"
    echo "$case,$label,$ranks,$w,$h,$steps,$run,$ms,$checksum" >>"$csv"
  done
}

measure one-gpu wator_dynasoar 1 "$width" "$height" "$bin/wator_dynasoar"
measure one-gpu wator_distributed 1 "$width" "$height" "$bin/wator_distributed" --ranks 1
measure strong wator_distributed 2 "$width" "$height" "$bin/wator_distributed" --ranks 2
measure weak wator_distributed 2 $((2 * width)) "$height" "$bin/wator_distributed" --ranks 2

# The memory case: fewer steps, one run each; exit codes and messages kept.
mem_w=${MEM_WIDTH:-8192}
mem_h=${MEM_HEIGHT:-6400}
heap=${HEAP_MIB:-1024}
mem_steps=${MEM_STEPS:-20}
{
  echo "wa-tor ${mem_w}x${mem_h}, ${mem_steps} steps, --heap-mib $heap per rank"
  for ranks in 1 2; do
    echo "--- wator_distributed --ranks $ranks --heap-mib $heap"
    set +e
    "$bin/wator_distributed" --ranks "$ranks" --heap-mib "$heap" --width "$mem_w" --height "$mem_h" \
      --steps "$mem_steps" --quiet 2>&1 | grep -E "checksum|live|heap|error" | head -5
    echo "exit code ${PIPESTATUS[0]}"
    set -e
  done
  echo "--- wator_distributed --ranks 1 --heap-mib $((2 * heap)) (the same problem with twice the heap)"
  set +e
  "$bin/wator_distributed" --ranks 1 --heap-mib $((2 * heap)) --width "$mem_w" --height "$mem_h" \
    --steps "$mem_steps" --quiet 2>&1 | grep -E "checksum|live|heap|error" | head -5
  echo "exit code ${PIPESTATUS[0]}"
  set -e
} >"$out/wator_memory.txt"

device=$("$bin/wator_distributed" --width 4 --height 4 --steps 0 --json --quiet |
         python3 -c 'import json, sys; print(json.load(sys.stdin)["device"])')
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
