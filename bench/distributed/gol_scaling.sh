#!/usr/bin/env bash
# The game of life on one rank and on two: gol_dynasoar (one heap, no
# halo), gol_distributed --ranks 1 (the band program on one rank, no ghosts)
# and gol_distributed --ranks 2 (two bands, one GPU each, a ghost row
# exchanged each step). Each program runs once to warm up, then three timed
# runs; ms is the report's total_ms (the step loop, set-up excluded; the
# distributed program's is its slowest rank's).
#
#   bench/distributed/gol_scaling.sh BIN_DIR OUT_DIR
#   WIDTH=64 HEIGHT=48 STEPS=5 bench/distributed/gol_scaling.sh ...   # a quick check of the script
#
# Writes OUT_DIR/gol_scaling.csv (program,ranks,width,height,steps,run,ms,checksum)
# and OUT_DIR/gol_scaling.txt: each program's median and the median ratios.
# The soup (8192x8192 cells, density 0.3) spreads alive cells over every
# band, so that both ranks have work in every step.
set -euo pipefail
bin=${1:?usage: gol_scaling.sh BIN_DIR OUT_DIR}
out=${2:?usage: gol_scaling.sh BIN_DIR OUT_DIR}
width=${WIDTH:-8192}
height=${HEIGHT:-8192}
steps=${STEPS:-100}
density=${DENSITY:-0.3}
runs=3
mkdir -p "$out"
csv=$out/gol_scaling.csv
summary=$out/gol_scaling.txt
echo "program,ranks,width,height,steps,run,ms,checksum" >"$csv"

source "$(dirname "$0")/measure.sh"
size="$width,$height,$steps"
args=(--width "$width" --height "$height" --steps "$steps" --density "$density")
measure "gol_dynasoar,1,$size" "$bin/gol_dynasoar" "${args[@]}"
measure "gol_distributed,1,$size" "$bin/gol_distributed" --ranks 1 "${args[@]}"
measure "gol_distributed,2,$size" "$bin/gol_distributed" --ranks 2 "${args[@]}"

device=$(device_of "$bin/gol_distributed" --width 3 --height 3 --steps 0)
python3 - "$csv" "$device" "$density" >"$summary" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ms, sums = {}, {}
for r in rows:
    key = (r["program"], int(r["ranks"]))
    ms.setdefault(key, []).append(float(r["ms"]))
    sums.setdefault(key, set()).add(r["checksum"])
first = rows[0]
print(f"game of life, {first['width']}x{first['height']} soup of density {sys.argv[3]}, {first['steps']} steps, "
      f"on {sys.argv[2]}; median of {len(next(iter(ms.values())))} runs after a warm-up")
med = {k: statistics.median(v) for k, v in ms.items()}
for (program, ranks), m in med.items():
    print(f"{program} --ranks {ranks}: median {m:.1f} ms, checksums {' '.join(sorted(sums[(program, ranks)]))}")
all_sums = set().union(*sums.values())
print("checksums: " + ("all equal" if len(all_sums) == 1 else "DIFFER: " + " ".join(sorted(all_sums))))
one, two, heap = med[("gol_distributed", 1)], med[("gol_distributed", 2)], med[("gol_dynasoar", 1)]
print(f"speed-up of 2 ranks over 1 (gol_distributed): {one / two:.2f}")
print(f"gol_dynasoar / gol_distributed --ranks 1: {heap / one:.2f}")
print(f"gol_dynasoar / gol_distributed --ranks 2: {heap / two:.2f}")
EOF
cat "$summary"
