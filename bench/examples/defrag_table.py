#!/usr/bin/env python3
"""Compaction on and off, one table from one run: every example that
fragments, on the back ends that compact (dynasoar, bitmap_alloc), without
--defrag and with --defrag N for each N of --every. The runs of one
example alternate between the settings (rep by rep), so that a drift of
the machine's speed falls on all of them alike.

    bench/examples/defrag_table.py --bin build-gpu/bin --reps 3 --every 25,100 \\
        --out bench/results/X

Per row: the median simulation time (the program's own measurement), the
blocks in use at the end of the run (the report's "in use at the end"), the
blocks the policy freed and the objects it moved, and the ratios of time
and blocks in use to the run without compaction. The checksums of all runs
of one example must agree (exit code 1 if not, or if a run fails).
"""
import argparse
import csv
import os
import re
import shlex
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_examples import checksums_agree, run_once  # noqa: E402

# Example, arguments: sizes that run for seconds on a GPU of 2026 and
# fragment (objects die in scattered places).
SUITE = [
    ("wator", "--width 2048 --height 2560 --steps 500"),
    ("sugarscape", "--width 1700 --height 1700 --steps 1000"),
    ("gol", "--width 2048 --height 2048 --steps 300 --density 0.4"),
    ("nbody", "--bodies 20000 --steps 500 --collisions"),
    ("structure", ""),
    ("traffic", "--steps 3000"),
    ("generation", "--width 2048 --height 2048 --steps 500"),
]


# Small sizes for a check of the script on a CPU (--quick).
QUICK = {
    "wator": "--width 96 --height 64 --steps 60 --seed 7",
    "sugarscape": "--width 80 --height 60 --steps 60 --seed 7",
    "gol": "--width 96 --height 80 --steps 80 --seed 7 --density 0.3",
    "nbody": "--bodies 256 --steps 100 --collisions",
    "traffic": "--intersections 300 --steps 300",
    "generation": "--width 128 --height 128 --steps 100",
}


def in_use_blocks(report):
    line = report.get("heap", {}).get("in use at the end", "")
    m = re.match(r"(\d+) blocks", line)
    return int(m.group(1)) if m else None


def compaction(report):
    m = re.match(r"(\d+) blocks freed, (\d+) objects moved", report.get("heap", {}).get("compaction", ""))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="folder with <example>_<back end> programs")
    ap.add_argument("--examples", default="", help="comma-separated names (default: every one of the suite found)")
    ap.add_argument("--variants", default="dynasoar,bitmap_alloc")
    ap.add_argument("--every", default="25,100", help="the --defrag settings to compare with none")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out", required=True, help="folder for defrag.csv and defrag.md")
    ap.add_argument("--quick", action="store_true", help="small sizes (a check of the script, not a measurement)")
    o = ap.parse_args()

    wanted = set(o.examples.split(",")) if o.examples else None
    settings = [0] + [int(x) for x in o.every.split(",") if x]
    rows, failed = [], False
    for example, args in SUITE:
        if wanted is not None and example not in wanted:
            continue
        if o.quick:
            if example not in QUICK:
                continue
            args = QUICK[example]
        for variant in o.variants.split(","):
            program = os.path.join(o.bin, f"{example}_{variant}")
            if not os.access(program, os.X_OK):
                if wanted is not None:
                    print(f"{program}: not built", file=sys.stderr)
                    failed = True
                continue
            runs = {s: [] for s in settings}
            error = None
            for _ in range(o.reps):
                for s in settings:
                    extra = ["--defrag", str(s)] if s else []
                    result, error = run_once(program, shlex.split(args) + extra, o.timeout)
                    if result is None:
                        break
                    runs[s].append(result)
                    print(f"{example} {variant} --defrag {s}: {result['total_ms']:.1f} ms, "
                          f"{in_use_blocks(result)} blocks in use, checksum {result['checksum']}", file=sys.stderr)
                if error:
                    break
            if error:
                print(f"{example} {variant}: {error}", file=sys.stderr)
                rows.append({"example": example, "variant": variant, "error": error})
                failed = True
                continue
            if not checksums_agree((r["checksum"] for s in settings for r in runs[s]), 1e-4):
                print(f"{example} {variant}: checksums differ", file=sys.stderr)
                failed = True
            base_ms = statistics.median(r["total_ms"] for r in runs[0])
            base_blocks = in_use_blocks(runs[0][-1])
            for s in settings:
                ms = statistics.median(r["total_ms"] for r in runs[s])
                blocks = in_use_blocks(runs[s][-1])
                freed, moved = compaction(runs[s][-1])
                rows.append({
                    "example": example, "variant": variant, "defrag_every": s, "args": args,
                    "device": runs[s][-1]["device"], "reps": len(runs[s]),
                    "total_ms": round(ms, 2), "time_vs_off": round(ms / base_ms, 3),
                    "blocks_in_use_at_end": blocks,
                    "blocks_vs_off": round(blocks / base_blocks, 3) if blocks and base_blocks else "",
                    "blocks_freed": freed, "objects_moved": moved,
                    "compaction_ms": round(statistics.median(r["phases_ms"].get("compaction", 0.0)
                                                             for r in runs[s]), 2),
                    "checksum": runs[s][-1]["checksum"],
                })

    os.makedirs(o.out, exist_ok=True)
    fields = ["example", "variant", "defrag_every", "args", "device", "reps", "total_ms", "time_vs_off",
              "blocks_in_use_at_end", "blocks_vs_off", "blocks_freed", "objects_moved", "compaction_ms",
              "checksum", "error"]
    with open(os.path.join(o.out, "defrag.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    done = [r for r in rows if "error" not in r]
    lines = [f"Compaction on and off ({done[0]['device'] if done else ''}), median of {o.reps} runs", "",
             "| example | back end | --defrag | time (ms) | vs. off | blocks in use at end | vs. off "
             "| blocks freed | objects moved | compaction (ms) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['example']} | {r['variant']} | failed | | | | | | | |")
            continue
        lines.append(f"| {r['example']} | {r['variant']} | {r['defrag_every'] or 'off'} | {r['total_ms']:.1f} "
                     f"| {r['time_vs_off']:.3f} | {r['blocks_in_use_at_end']} | {r['blocks_vs_off']} "
                     f"| {r['blocks_freed']} | {r['objects_moved']} | {r['compaction_ms']:.1f} |")
    with open(os.path.join(o.out, "defrag.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
