#!/usr/bin/env bash
# On a GPU machine, from the repository root, after scripts/build-gpu.sh:
#   bench/results/2026-11-27-sugarscape/run.sh OUT
# 1. sugarscape at the benchmark size on every variant (run_examples.py, 3 runs each);
# 2. the registry compaction before (CUB's DeviceSelect, cub-select.h = 62de871's
#    platform/select.h) and after (this tree): n-body and wa-tor on CFMMalloc,
#    both builds run in turn, 3 rounds.
set -uo pipefail
out=${1:?usage: run.sh OUT}
here=bench/results/2026-11-27-sugarscape
mkdir -p "$out/tables" "$out/compaction"
python3 bench/examples/run_examples.py --bin build-gpu/bin --example sugarscape --name sugarscape \
  --args "--width 1700 --height 1700 --steps 500" --reps 3 --timeout 30 --out "$out/tables"
# The compaction: this tree's programs, then the same two built with CUB's select.h.
mkdir -p /tmp/new /tmp/old
cp build-gpu/bin/nbody_cfmmalloc build-gpu/bin/wator_cfmmalloc /tmp/new/
cp include/dynasoar/platform/select.h /tmp/select-now.h
cp $here/cub-select.h include/dynasoar/platform/select.h
cmake --build build-gpu --target nbody_cfmmalloc wator_cfmmalloc -j 16 >"$out/compaction/build-old.log" 2>&1
cp build-gpu/example/nbody_cfmmalloc build-gpu/example/wator_cfmmalloc /tmp/old/
cp /tmp/select-now.h include/dynasoar/platform/select.h
for round in 1 2 3; do
  for v in old new; do
    /tmp/$v/nbody_cfmmalloc --bodies 20000 --steps 500 --quiet --json >"$out/compaction/nbody-$v-$round.json"
    /tmp/$v/wator_cfmmalloc --width 512 --height 512 --steps 50 --quiet --json >"$out/compaction/wator-$v-$round.json"
  done
done
python3 - "$out/compaction" <<'PY'
import json, glob, os, sys
d = sys.argv[1]
for p in sorted(glob.glob(os.path.join(d, "*.json"))):
    r = json.load(open(p))
    print(os.path.basename(p), "total_ms", r["total_ms"], "enumeration_ms", sum(r["extra_ms"].values()), "checksum", r["checksum"])
PY
