#!/usr/bin/env python3
"""Space efficiency under one memory budget (DynaSOAr paper Sec. 6.2 and
Fig. 12b): every variant of an example gets the same heap (--heap-mib), the
problem grows rung by rung, and the result is each variant's running time
per rung and the rung where it ran out of memory.

    bench/examples/memory_budget.py --bin build-gpu/example --example wator \\
        --heap-mib 2048 --steps 40 --timeout 600 --out bench/results/X \\
        --sizes 2048x2048,4096x4096,5793x5793,8192x8192,11585x11585

(bench/README.md proposes ladders for wa-tor and n-body.)

A rung is one or more numbers joined by "x"; they fill the placeholders
{0}, {1}, ... of --size-args, the example's own size options. Defaults:
wator and gol "--width {0} --height {1}", nbody and barnes_hut "--bodies
{0}", kdtree "--triangles {0}". The problem size on the plot's x axis is the
product of a rung's numbers (cells, bodies). Rungs run in increasing order
of that product.

Each run is `PROGRAM <size args> <--args> --heap-mib N --steps S --json`,
stopped after --timeout seconds, and ends in one of:

  ok             the program's own time (total_ms of its JSON: the simulation
                 loop, CUDA events on a GPU) and its checksum;
  out of memory  exit code 1 and the programs' out-of-memory message on
                 stderr ("error: ... is out of memory"): the heap or pool
                 could not hold the objects. A variant stops climbing at its
                 first such rung (a larger problem needs more memory); the
                 rungs above are recorded as "not run";
  timed out      with the step its progress output reached (the programs
                 print "name: step s / n" at most once a second). A slow run
                 says nothing about memory, so the variant goes on to the
                 next rung: an allocator that is slow near a full heap may
                 still run out higher up, and that is what this measures.
                 Each further timeout costs at most --timeout seconds;
                 --stop-after-timeouts K stops a variant after K timeouts
                 in a row (the rungs above: "not run"). The programs look
                 for a failed `new` every 64 steps and after the last, so a
                 run that ran out goes on until then: a timed-out run may
                 have run out unseen;
  failed         any other exit (with the end of stderr). This includes an
                 object registry array that filled between compactions (the
                 byte allocators' registry is not part of the heap budget,
                 so this is no answer about the budget).

--refine K bisects K times between a variant's largest rung that ran and its
first that ran out of memory (each number of the rung interpolated; rows
marked "refine"), to pin the largest problem that fits more closely.

At every size, all variants that finished must agree on the checksum
(floating-point ones, n-body's, within --rtol); the table says so. Output in
--out: <name>.csv (a row per run), <name>.md (per variant the largest size
that ran and the first that ran out of memory, and a time-by-rung matrix),
and <name>.png if matplotlib is installed (time against size, an x where a
variant ran out of memory). Exit code 0 when every run ended as recorded
(out of memory and timeouts are results), 1 if checksums differ or a run
failed.
"""
import argparse
import csv
import datetime
import json
import math
import os
import re
import shlex
import subprocess
import sys
import textwrap

# The progress, time-out and checksum rules of the example comparison (this
# script's folder is on sys.path when it runs).
from run_examples import checksums_agree, last_progress, timed_out

DEFAULT_SIZE_ARGS = {
    "wator": "--width {0} --height {1}",
    "gol": "--width {0} --height {1}",
    "nbody": "--bodies {0}",
    "barnes_hut": "--bodies {0}",
    "kdtree": "--triangles {0}",
}

# What guarded_main (example/common/cli.cpp) prints for dynasoar::OutOfMemory
# from a heap or pool: "error: dynasoar: the object heap is out of memory (...)",
# "error: dynasoar: the CMalloc pool of N bytes is out of memory; ...", the
# k-d tree's "error: k-d tree: the X pool of N MiB is out of memory (...)".
OUT_OF_MEMORY = re.compile(r"^error: .*\bis out of memory\b", re.M)


def parse_rung(text):
    """"1024x768" -> (1024, 768); "20000" -> (20000,)."""
    try:
        values = tuple(int(v) for v in text.lower().split("x"))
    except ValueError:
        sys.exit(f"--sizes: not a rung of whole numbers joined by 'x': {text!r}")
    if not values or any(v <= 0 for v in values):
        sys.exit(f"--sizes: rung {text!r} has a number below 1")
    return values


def rung_text(values):
    return "x".join(str(v) for v in values)


def amount(values):
    return math.prod(values)


def run_once(program, args, timeout):
    """One run -> (status, result JSON or None, detail, wall seconds)."""
    # Without --quiet the program reports its progress on stderr, so a run
    # stopped at the limit (or one that ran out of memory) says how far it got.
    cmd = [program] + args + ["--json"]
    start = datetime.datetime.now()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        wall = (datetime.datetime.now() - start).total_seconds()
        return "timed out", None, timed_out(e.stderr, timeout), wall
    wall = (datetime.datetime.now() - start).total_seconds()
    err = p.stderr.strip()
    if p.returncode == 1 and OUT_OF_MEMORY.search(err):
        line = OUT_OF_MEMORY.search(err).group(0)
        full = err[err.index(line):].splitlines()[0][len("error: "):]
        done = last_progress(err)
        where = f" (its progress output last showed step {done[0]} of {done[1]})" if done else ""
        return "out of memory", None, full + where, wall
    if p.returncode != 0:
        tail = " | ".join(l for l in err.splitlines() if not re.search(r": step \d+ / \d+$", l))
        return "failed", None, f"exit {p.returncode}: {tail[-300:]}", wall
    try:
        result = json.loads(p.stdout)
    except ValueError:
        return "failed", None, f"exit 0 but no JSON report on stdout: {p.stdout.strip()[-200:]}", wall
    return "ok", result, "", wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="folder with <example>_<variant> programs")
    ap.add_argument("--example", default="wator")
    ap.add_argument("--variants", default="",
                    help="comma-separated (default: every <example>_* program except baseline, which has no heap)")
    ap.add_argument("--heap-mib", type=int, required=True, help="the heap every variant gets (MiB)")
    ap.add_argument("--steps", type=int, required=True, help="simulation steps of every run")
    ap.add_argument("--sizes", required=True,
                    help="comma-separated rungs, numbers joined by 'x' (wa-tor: 1024x1024,2048x2048; n-body: 20000,40000)")
    ap.add_argument("--size-args", default="",
                    help="the size options with {0}, {1}, ... for a rung's numbers (default: by --example)")
    ap.add_argument("--args", default="", help="further arguments for every run (e.g. --collisions, --seed 7)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per run")
    ap.add_argument("--stop-after-timeouts", type=int, default=0, metavar="K",
                    help="a variant stops climbing after K timeouts in a row (default 0: never)")
    ap.add_argument("--refine", type=int, default=0, metavar="K",
                    help="bisection steps between the largest size that ran and the first out of memory (default 0)")
    ap.add_argument("--rtol", type=float, default=1e-4,
                    help="relative tolerance between floating-point checksums (n-body)")
    ap.add_argument("--out", default="", help="folder for <name>.csv, <name>.md and <name>.png")
    ap.add_argument("--name", default="", help="file name for the results (default: <example>-budget-<N>mib)")
    o = ap.parse_args()

    size_args = o.size_args or DEFAULT_SIZE_ARGS.get(o.example)
    if not size_args:
        sys.exit(f"--size-args: no default for {o.example}; give the size options, e.g. \"--bodies {{0}}\"")
    rungs = sorted({parse_rung(s.strip()) for s in o.sizes.split(",") if s.strip()}, key=lambda r: (amount(r), r))
    if not rungs:
        sys.exit("--sizes: no rung")
    slots = {int(k) for k in re.findall(r"\{(\d+)\}", size_args)}
    for r in rungs:
        if len(r) != len(slots) or slots != set(range(len(r))):
            sys.exit(f"--sizes: rung {rung_text(r)} does not fill --size-args {size_args!r} "
                     f"({len(slots)} number(s) expected)")

    prefix = o.example + "_"
    if o.variants:
        variants = [v for v in o.variants.split(",") if v]
    else:
        variants = sorted(f[len(prefix):] for f in os.listdir(o.bin)
                          if f.startswith(prefix) and f != prefix + "baseline"
                          and os.access(os.path.join(o.bin, f), os.X_OK))
    if not variants:
        sys.exit(f"no {prefix}* programs in {o.bin}")
    for v in variants:
        if not os.access(os.path.join(o.bin, prefix + v), os.X_OK):
            sys.exit(f"no program {prefix + v} in {o.bin}")
    fixed = shlex.split(o.args) + ["--heap-mib", str(o.heap_mib), "--steps", str(o.steps)]
    name = o.name or f"{o.example}-budget-{o.heap_mib}mib"
    command = " ".join(shlex.quote(a) for a in [sys.argv[0]] + sys.argv[1:])
    date = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")

    rows = []  # one per run (and per rung not run)

    def run(v, values, kind):
        program = os.path.join(o.bin, prefix + v)
        args = shlex.split(size_args.format(*values)) + fixed
        status, result, detail, wall = run_once(program, args, o.timeout)
        row = {"variant": v, "size": rung_text(values), "amount": amount(values), "rung": kind,
               "status": status, "time_ms": "", "checksum": "", "wall_s": f"{wall:.1f}", "detail": detail,
               "device": ""}
        if result is not None:
            row.update(time_ms=result["total_ms"], checksum=result["checksum"], device=result.get("device", ""),
                       config=result.get("config", {}))
        rows.append(row)
        shown = f"{row['time_ms']:.1f} ms, checksum {row['checksum']}" if status == "ok" else detail
        print(f"{v} {row['size']}: {status}" + (f": {shown}" if shown else ""), file=sys.stderr)
        return status

    for v in variants:
        timeouts, last_ok, first_oom, stop = 0, None, None, None
        for values in rungs:
            if stop:
                rows.append({"variant": v, "size": rung_text(values), "amount": amount(values), "rung": "ladder",
                             "status": "not run", "detail": stop})
                continue
            status = run(v, values, "ladder")
            timeouts = timeouts + 1 if status == "timed out" else 0
            if status == "ok":
                last_ok = values
            elif status == "out of memory":
                first_oom = values
                stop = f"out of memory at {rung_text(values)}"
            if o.stop_after_timeouts and timeouts >= o.stop_after_timeouts:
                stop = f"{timeouts} timeout(s) in a row (--stop-after-timeouts)"
        # Bisection between the largest size that ran and the first that did not fit.
        if o.refine and last_ok and first_oom:
            lo, hi = 0.0, 1.0
            for _ in range(o.refine):
                t = (lo + hi) / 2
                mid = tuple(round(a + t * (b - a)) for a, b in zip(last_ok, first_oom))
                if amount(mid) in (amount(last_ok), amount(first_oom)) or \
                        any(r["variant"] == v and r["size"] == rung_text(mid) for r in rows):
                    break
                status = run(v, mid, "refine")
                if status == "ok":
                    lo = t
                elif status == "out of memory":
                    hi = t
                else:
                    break  # a timeout or failure says nothing about memory

    # Checksums: every size that two or more variants finished.
    failed = any(r["status"] == "failed" for r in rows)
    agreement = {}  # size -> text
    for size in dict.fromkeys(r["size"] for r in rows):
        done = [r for r in rows if r["size"] == size and r["status"] == "ok"]
        if len(done) < 2:
            agreement[size] = "-" if not done else "1 run"
            continue
        if checksums_agree([r["checksum"] for r in done], o.rtol):
            agreement[size] = f"agree ({len(done)})"
        else:
            agreement[size] = "DIFFER: " + ", ".join(f"{r['variant']}={r['checksum']}" for r in done)
            print(f"{size}: checksums differ" + (f" by more than {o.rtol} (relative)"
                                                 if isinstance(done[0]["checksum"], float) else "")
                  + ": " + agreement[size][len("DIFFER: "):], file=sys.stderr)
            failed = True

    device = next((r["device"] for r in rows if r.get("device")), "unknown device")
    lines = [f"# {o.example}: every variant with a heap of {o.heap_mib} MiB, {o.steps} steps", "",
             f"{date}, {device}; per run at most {o.timeout:g} s", "",
             f"    {command}", "",
             "| variant | largest size that ran | first out of memory | other results |",
             "| --- | ---: | ---: | --- |"]
    for v in variants:
        mine = [r for r in rows if r["variant"] == v]
        ran = [r for r in mine if r["status"] == "ok"]
        oom = [r for r in mine if r["status"] == "out of memory"]
        best = max(ran, key=lambda r: r["amount"]) if ran else None
        first = min(oom, key=lambda r: r["amount"]) if oom else None
        other = [f"{r['size']}: {r['status']}" for r in mine if r["status"] in ("timed out", "failed")]
        lines.append(f"| {v} | {best['size'] + (' (refined)' if best['rung'] == 'refine' else '') if best else 'none'} "
                     f"| {first['size'] + (' (refined)' if first['rung'] == 'refine' else '') if first else 'none'} "
                     f"| {'; '.join(other) or '-'} |")

    def cell(r):
        if r is None:
            return ""
        if r["status"] == "ok":
            return f"{r['time_ms']:.1f}"
        if r["status"] == "timed out":
            done = re.search(r"at step (\d+) of (\d+)", r["detail"])
            return f"timed out (step {done.group(1)}/{done.group(2)})" if done else "timed out"
        return {"out of memory": "**out of memory**", "not run": "-"}.get(r["status"], r["status"])

    lines += ["", "Time of the simulation loop (ms) per size; \"-\": not run (the variant had run out of memory "
              "or stopped climbing).", "",
              "| size | " + " | ".join(variants) + " | checksums |",
              "| --- | " + " | ".join("---:" for _ in variants) + " | --- |"]
    sizes = sorted({(r["amount"], r["size"]) for r in rows})
    for n, size in sizes:
        by = {r["variant"]: r for r in rows if r["size"] == size}
        lines.append(f"| {size} | " + " | ".join(cell(by.get(v)) for v in variants) + f" | {agreement[size]} |")
    notes = [r for r in rows if r["status"] in ("out of memory", "failed", "timed out")]
    if notes:
        lines += ["", "Details:", ""] + [f"- {r['variant']} {r['size']}: {r['detail']}" for r in notes]
    table = "\n".join(lines) + "\n"
    print(table)

    if o.out:
        os.makedirs(o.out, exist_ok=True)
        with open(os.path.join(o.out, name + ".md"), "w") as f:
            f.write(table)
        keys = ["variant", "size", "amount", "rung", "status", "time_ms", "checksum", "wall_s", "detail", "device"]
        with open(os.path.join(o.out, name + ".csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
            w.writeheader()
            for r in sorted(rows, key=lambda r: (variants.index(r["variant"]), r["amount"])):
                w.writerow({k: r.get(k, "") for k in keys})
        png = plot(os.path.join(o.out, name + ".png"), rows, variants, o, device, date, command)
        if png:
            print(png, file=sys.stderr)
    return 1 if failed else 0


def plot(path, rows, variants, o, device, date, command):
    """Time against problem size per variant, an x where it ran out of memory."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no PNG: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, v in enumerate(variants):
        mine = sorted((r for r in rows if r["variant"] == v), key=lambda r: r["amount"])
        ran = [r for r in mine if r["status"] == "ok"]
        color = "black" if v == "dynasoar" else plt.get_cmap("tab10")(k % 10)
        line, = ax.plot([r["amount"] for r in ran], [r["time_ms"] for r in ran], marker="o", markersize=3,
                        color=color, label=v, linewidth=2 if v == "dynasoar" else 1)
        oom = [r for r in mine if r["status"] == "out of memory"]
        if oom:  # at the smallest size that did not fit, level with the last time that did
            first = oom[0]
            below = [r for r in ran if r["amount"] < first["amount"]]
            y = below[-1]["time_ms"] if below else (min(r["time_ms"] for r in rows if r["status"] == "ok")
                                                     if any(r["status"] == "ok" for r in rows) else 1.0)
            ax.plot([first["amount"]], [y], marker="x", markersize=9, markeredgewidth=2, color=color,
                    linestyle="none")
    ax.set_xscale("log")
    ax.set_yscale("log")
    unit = {"wator": "cells", "gol": "cells", "nbody": "bodies", "barnes_hut": "bodies",
            "kdtree": "triangles"}.get(o.example, "product of the size numbers")
    ax.set_xlabel(f"problem size ({unit}, log scale)")
    ax.set_ylabel("time of the simulation loop (ms, log scale)")
    ax.set_title(f"{o.example}: heap {o.heap_mib} MiB for every variant, {o.steps} steps; x: out of memory\n"
                 f"{device}, {date}\n" + textwrap.fill(command, 120), fontsize=7)
    ax.grid(which="both", linewidth=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


if __name__ == "__main__":
    sys.exit(main())
