#!/usr/bin/env python3
"""Runs an example on several back ends and its baseline, checks that every
run computed the same checksum (floating-point ones within --rtol), and
writes a CSV (with the median time of every phase) and a Markdown table.

    bench/examples/run_examples.py --bin build-cuda/example --example wator \\
        --args "--width 2048 --height 2560 --steps 500" --reps 3 --out bench/results/X

Each program is run with --json; the time reported is the median of
--reps runs of the program's own measurement (the simulation loop, CUDA
events on a GPU). The table gives each variant's ratio to the baseline.
A run over --timeout is stopped and recorded as failed with the last step
its progress output reached. Exit code 1 if the checksums differ or a run
fails.
"""
import argparse
import csv
import json
import os
import re
import shlex
import statistics
import subprocess
import sys


def last_progress(stderr):
    """(step, steps) of the last "name: step s / n" line the program printed, or None."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode(errors="replace")
    found = re.findall(r": step (\d+) / (\d+)$", stderr or "", re.M)
    return (int(found[-1][0]), int(found[-1][1])) if found else None


def timed_out(stderr, timeout):
    """What a run stopped after `timeout` seconds reached, from its progress output."""
    done = last_progress(stderr)
    if not done or done[0] == 0:
        return f"timed out after {timeout:g} s"
    step, steps = done
    return (f"timed out after {timeout:g} s at step {step} of {steps} "
            f"(at that rate all steps take about {timeout * steps / step:.0f} s)")


def checksums_agree(values, rtol):
    """Whether checksums agree: floating-point ones within rtol (relative), others exactly."""
    values = list(values)
    if len(values) < 2:
        return True
    if all(isinstance(x, float) for x in values):
        lo, hi = min(values), max(values)
        return hi - lo <= rtol * max(abs(lo), abs(hi))
    return len(set(values)) == 1


def run_once(program, args, timeout):
    # Without --quiet the program reports its progress on stderr (at most once
    # a second; the JSON report stays alone on stdout), so a run stopped at
    # the limit still says how far it got.
    cmd = [program] + args + ["--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return None, timed_out(e.stderr, timeout)
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    return json.loads(p.stdout), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="folder with <example>_<variant> programs")
    ap.add_argument("--example", default="wator")
    ap.add_argument("--variants", default="", help="comma-separated (default: every program found)")
    ap.add_argument("--args", default="", help="arguments for every run")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600, help="seconds per run")
    ap.add_argument("--out", default="", help="folder for <name>.csv and <name>.md")
    ap.add_argument("--name", default="", help="file name for the results (default: the example)")
    ap.add_argument("--rtol", type=float, default=1e-4,
                    help="relative tolerance between floating-point checksums (n-body)")
    o = ap.parse_args()

    prefix = o.example + "_"
    if o.variants:
        variants = o.variants.split(",")
    else:
        variants = sorted(f[len(prefix):] for f in os.listdir(o.bin)
                          if f.startswith(prefix) and os.access(os.path.join(o.bin, f), os.X_OK))
    if not variants:
        sys.exit(f"no {prefix}* programs in {o.bin}")
    args = shlex.split(o.args)

    rows, failed = [], False
    for v in variants:
        program = os.path.join(o.bin, prefix + v)
        runs, error = [], None
        for _ in range(o.reps):
            result, error = run_once(program, args, o.timeout)
            if result is None:
                break
            runs.append(result)
            print(f"{v}: {result['total_ms']:.1f} ms, checksum {result['checksum']}", file=sys.stderr)
        if error:
            print(f"{v}: {error}", file=sys.stderr)
            rows.append({"variant": v, "error": error})
            failed = True
            continue
        last = runs[-1]
        rows.append({
            "variant": v,
            "device": last["device"],
            "total_ms": statistics.median(r["total_ms"] for r in runs),
            "min_ms": min(r["total_ms"] for r in runs),
            "reps": len(runs),
            "enumeration_ms": statistics.median(sum(r["extra_ms"].values()) for r in runs),
            "checksum": last["checksum"],
            "phases": "; ".join(f"{k}={statistics.median(r['phases_ms'][k] for r in runs):.2f}"
                               for k in last["phases_ms"]),
            "live": " ".join(f"{k}={n}" for k, n in last["live"].items()),
            "config": " ".join(f"{k}={x}" for k, x in last["config"].items()),
        })

    done = [r for r in rows if "error" not in r]
    if not checksums_agree((r["checksum"] for r in done), o.rtol):  # n-body's: up to rounding
        print(f"checksums differ (floating-point ones by more than {o.rtol}, relative): "
              + ", ".join(f"{r['variant']}={r['checksum']}" for r in done), file=sys.stderr)
        failed = True
    base = next((r["total_ms"] for r in done if r["variant"] == "baseline"), None)

    lines = [f"{o.example}: {done[0]['config'] if done else ''}, {done[0]['device'] if done else ''}, "
             f"median of {o.reps} run(s)", "",
             "| variant | time (ms) | vs. baseline | of which registry enumeration (ms) | checksum | live objects |",
             "| --- | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['variant']} | failed: {r['error']} | | | | |")
            continue
        ratio = f"{r['total_ms'] / base:.2f}x" if base else "n/a"
        enum = f"{r['enumeration_ms']:.1f}" if r["enumeration_ms"] else "-"
        lines.append(f"| {r['variant']} | {r['total_ms']:.1f} | {ratio} | {enum} | {r['checksum']} | {r['live']} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if o.out:
        name = o.name or o.example
        os.makedirs(o.out, exist_ok=True)
        with open(os.path.join(o.out, name + ".md"), "w") as f:
            f.write(table)
        keys = ["variant", "device", "config", "total_ms", "min_ms", "reps", "enumeration_ms", "checksum", "live",
                "phases", "error"]
        with open(os.path.join(o.out, name + ".csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            for r in rows:
                w.writerow({k: r.get(k, "") for k in keys})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
