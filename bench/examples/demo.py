#!/usr/bin/env python3
"""The main demonstration (scripts/demo.sh): wa-tor (DynaSOAr paper Sec. 6) as
objects on the DynaSOAr heap, on CFMMalloc and on CUDA's device malloc, next to
the hand-written baseline, with a short table a newcomer can read.

Every variant runs the same simulation from the same seed, so each must end
with the baseline's checksum. The slow back ends run fewer steps of the same
grid (the table says how many); each is compared with the baseline run for the
same number of steps.

    bench/examples/demo.py --bin build-cuda/example --gpu
    bench/examples/demo.py --bin build-host/example --csv out.csv

Exit code 0 when every run finished and every checksum matched, else 1.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import threading
import time

# What a newcomer needs to know about each variant.
DESCRIPTION = {
    "baseline": "hand-written SOA arrays, no objects",
    "dynasoar": "objects on the DynaSOAr heap (this framework)",
    "cfmmalloc": "the same objects on CFMMalloc (Vinkler & Havran)",
    "cuda_malloc": "the same objects on CUDA's device malloc",
}

# (variant, grid, steps). The byte allocators are much slower than the heap on
# wa-tor (see docs/results.md), so they run fewer steps, and CUDA's malloc a
# smaller grid as well: on an H100 it took 24 s for 10 steps of the paper's grid.
PLANS = {
    "gpu": [("baseline", "2048x2560", 500), ("dynasoar", "2048x2560", 500), ("cfmmalloc", "2048x2560", 100),
            ("cuda_malloc", "1024x1280", 20)],
    "cpu": [("baseline", "256x256", 100), ("dynasoar", "256x256", 100), ("cfmmalloc", "256x256", 100),
            ("cuda_malloc", "256x256", 100)],
}


def run(program, args, timeout, label):
    """Runs one program with --json, passing its progress lines through.

    Returns (report, error, wall seconds). Each pipe has a reader thread of
    its own, so neither can fill up while the other is read.
    """
    cmd = [program] + args + ["--json"]
    start = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        return None, f"cannot start {program}: {e.strerror}", 0.0
    out_lines, err_lines = [], []

    def pump_err():
        for line in p.stderr:
            err_lines.append(line)
            if ": step " in line:  # the program's own progress, once a second
                print(f"      {label}: {line.strip()}", flush=True)

    def pump_out():
        out_lines.extend(p.stdout)

    readers = [threading.Thread(target=f, daemon=True) for f in (pump_err, pump_out)]
    for t in readers:
        t.start()
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None, f"did not finish in {timeout:.0f} s", time.monotonic() - start
    finally:
        for t in readers:
            t.join(timeout=5)
    wall = time.monotonic() - start
    if p.returncode != 0:
        said = [l.strip() for l in err_lines if l.strip() and ": step " not in l][-3:]
        return None, f"exit {p.returncode}: {' / '.join(said)[-300:] or 'no message'}", wall
    try:
        report = json.loads("".join(out_lines))
        float(report["total_ms"]), report["checksum"], report["device"]
        return report, None, wall
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        return None, "no valid report on standard output", wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="folder with the wator_<variant> programs")
    ap.add_argument("--gpu", action="store_true", help="the GPU plan (default: the CPU plan)")
    ap.add_argument("--grid", default="", help="WIDTHxHEIGHT for every variant instead of the plan's")
    ap.add_argument("--steps", type=int, default=0, help="steps for every variant instead of the plan's")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a run may take")
    ap.add_argument("--csv", default="", help="also write the table as CSV to this file")
    o = ap.parse_args()

    if o.grid and (o.grid.lower().count("x") != 1 or not all(x.isdigit() for x in o.grid.lower().split("x"))):
        ap.error(f"--grid {o.grid}: expected WIDTHxHEIGHT, e.g. 512x512")
    if o.steps < 0:
        ap.error("--steps must be positive")
    runs = [(v, o.grid or g, o.steps or s) for v, g, s in PLANS["gpu" if o.gpu else "cpu"]]
    # The baseline once for every (grid, steps) some variant uses, first.
    order = [("baseline", g, s) for g, s in dict.fromkeys((g, s) for _, g, s in runs)]
    order += [r for r in runs if r[0] != "baseline"]

    results, failed = {}, False
    started = time.monotonic()
    print(f"wa-tor: {len(order)} runs (slow allocators run a smaller problem; each is compared with "
          f"the baseline on the same problem)", flush=True)
    for k, (variant, grid, steps) in enumerate(order, 1):
        program = os.path.join(o.bin, "wator_" + variant)
        width, height = grid.lower().split("x")
        label = f"{variant}, {grid}, {steps} steps"
        print(f"[{k}/{len(order)}] {label}: {DESCRIPTION.get(variant, variant)} ...", flush=True)
        report, error, wall = run(program, ["--width", width, "--height", height, "--steps", str(steps)],
                                  o.timeout, label)
        if error:
            print(f"      failed: {error}", flush=True)
            failed = True
        else:
            print(f"      {report['total_ms']:.1f} ms simulated ({wall:.1f} s with start-up), "
                  f"checksum {report['checksum']}", flush=True)
        results[(variant, grid, steps)] = (report, error)

    device = next((r["device"] for r, _ in results.values() if r), "unknown device")
    rows = []
    for variant, grid, steps in runs:
        report, error = results[(variant, grid, steps)]
        base, _ = results[("baseline", grid, steps)]
        row = {"variant": variant, "what it is": DESCRIPTION.get(variant, variant), "grid": grid,
               "steps": steps, "time_ms": "", "vs_baseline": "", "checksum": ""}
        if error:
            row["checksum"] = "failed (see above)"
        else:
            row["time_ms"] = f"{report['total_ms']:.1f}"
            if base:
                row["vs_baseline"] = (f"{report['total_ms'] / base['total_ms']:.2f}x" if base["total_ms"] > 0
                                      else "n/a")
                same = report["checksum"] == base["checksum"]
                row["checksum"] = "same as baseline" if same else f"DIFFERS ({report['checksum']} vs {base['checksum']})"
                failed |= not same
            else:
                row["checksum"] = "baseline failed"
        rows.append(row)

    print(f"\nwa-tor, DynaSOAr paper Sec. 6, on {device}; time is the simulation loop "
          f"({'CUDA events' if o.gpu else 'wall clock'}), start-up excluded")
    cols = [("variant", "variant"), ("what it is", "what it is"), ("grid", "grid"), ("steps", "steps"),
            ("time_ms", "time (ms)"), ("vs_baseline", "vs. baseline"), ("checksum", "checksum")]
    widths = [max(len(title), *(len(str(r[key])) for r in rows)) for key, title in cols]
    print("  ".join(title.ljust(w) for (_, title), w in zip(cols, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(str(r[key]).ljust(w) for (key, _), w in zip(cols, widths)))
    print(f"\n{len(order)} runs in {time.monotonic() - started:.1f} s; "
          f"{'every checksum matched the baseline' if not failed else 'FAILED: see above'}")
    print(f"More: docs/guide/demo.md (what this shows), docs/results.md (full benchmarks), "
          f"{os.path.join(o.bin, 'wator_dynasoar')} --help (the program's options)")
    if o.csv:
        with open(o.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=[key for key, _ in cols] + ["device"])
            w.writeheader()
            for r in rows:
                w.writerow({**r, "device": device})
        print(f"table written to {o.csv}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
