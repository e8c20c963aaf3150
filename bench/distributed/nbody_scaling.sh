#!/usr/bin/env bash
# n-body on one rank and on two: nbody_dynasoar (the heap's walk over all
# bodies), nbody_distributed --ranks 1 (the all-gathered array, one rank) and
# nbody_distributed --ranks 2 (one GPU each). Each program runs once to warm
# up, then three timed runs; ms is the report's total_ms (the step loop, set-up
# excluded; the distributed program's is its slowest rank's).
#
#   bench/distributed/nbody_scaling.sh BIN_DIR OUT_DIR
#   BODIES=256 STEPS=5 bench/distributed/nbody_scaling.sh ...   # a quick check of the script
#
# Writes OUT_DIR/nbody_scaling.csv (program,ranks,bodies,steps,run,ms,checksum)
# and OUT_DIR/nbody_scaling.txt: each program's median and the median ratios.
# 200000 bodies: 4e10 interactions a step; the heap's walk took about 41 ms
# a step on an H100 (bench/results/2026-11-25-h100-comparison/budget/
# nbody-budget-16mib.csv: 122.5 ms for 3 steps), so 40 steps take a few
# seconds.
set -euo pipefail
bin=${1:?usage: nbody_scaling.sh BIN_DIR OUT_DIR}
out=${2:?usage: nbody_scaling.sh BIN_DIR OUT_DIR}
bodies=${BODIES:-200000}
steps=${STEPS:-40}
runs=3
mkdir -p "$out"
csv=$out/nbody_scaling.csv
summary=$out/nbody_scaling.txt
echo "program,ranks,bodies,steps,run,ms,checksum" >"$csv"

source "$(dirname "$0")/measure.sh"
size="$bodies,$steps"
args=(--bodies "$bodies" --steps "$steps")
measure "nbody_dynasoar,1,$size" "$bin/nbody_dynasoar" "${args[@]}"
measure "nbody_distributed,1,$size" "$bin/nbody_distributed" --ranks 1 "${args[@]}"
measure "nbody_distributed,2,$size" "$bin/nbody_distributed" --ranks 2 "${args[@]}"

device=$(device_of "$bin/nbody_distributed" --bodies 1 --steps 0)
python3 - "$csv" "$device" >"$summary" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ms, sums = {}, {}
for r in rows:
    key = (r["program"], int(r["ranks"]))
    ms.setdefault(key, []).append(float(r["ms"]))
    sums.setdefault(key, set()).add(r["checksum"])
first = rows[0]
print(f"n-body, {first['bodies']} bodies, {first['steps']} steps, on {sys.argv[2]}; "
      f"median of {len(next(iter(ms.values())))} runs after a warm-up")
med = {k: statistics.median(v) for k, v in ms.items()}
for (program, ranks), m in med.items():
    print(f"{program} --ranks {ranks}: median {m:.1f} ms, checksums {' '.join(sorted(sums[(program, ranks)]))}")
one, two, heap = med[("nbody_distributed", 1)], med[("nbody_distributed", 2)], med[("nbody_dynasoar", 1)]
print(f"speed-up of 2 ranks over 1 (nbody_distributed): {one / two:.2f}")
print(f"nbody_dynasoar / nbody_distributed --ranks 2: {heap / two:.2f}")
EOF
cat "$summary"
