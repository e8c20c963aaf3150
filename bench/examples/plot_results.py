#!/usr/bin/env python3
"""Draws one PNG per results CSV of run_examples.py: the time of every
variant with the baseline marked; the phases stacked where the times are
within 20x of each other, the totals on a log scale where they are not.

    bench/examples/plot_results.py bench/results/<run>      # writes <name>.png next to each CSV

and wator-trace.png from the per-step traces of wa-tor (wator --trace).

Needs matplotlib (pip install matplotlib).
"""
import csv
import glob
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def phase_times(text):
    """"a=1.5; fish prepare=2.0" (or space-separated, as older runs wrote it) -> {name: ms}."""
    return {k.strip(" ;"): float(v) for k, v in re.findall(r"([^=]+?)=([0-9.]+)", text or "")}


def plot(path):
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if r.get("total_ms")]
    if not rows:
        return None
    name = os.path.splitext(os.path.basename(path))[0]
    phases = []
    for r in rows:
        for k in phase_times(r.get("phases")):
            if k not in phases:
                phases.append(k)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    variants = [r["variant"] for r in rows]
    totals = [float(r["total_ms"]) for r in rows]
    # Times far apart: a log scale, totals only (stacked phases would be
    # distorted); otherwise a linear scale with the phases stacked.
    log = max(totals) > 20 * min(totals)
    bottom = [0.0] * len(rows)
    if phases and not log:
        for k in phases:
            vals = []
            for r in rows:
                vals.append(phase_times(r.get("phases")).get(k, 0.0))
            ax.barh(variants, vals, left=bottom, label=k)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.legend(fontsize=7, loc="lower right")
    else:
        ax.barh(variants, totals)
    base = next((float(r["total_ms"]) for r in rows if r["variant"] == "baseline"), None)
    if base:
        ax.axvline(base, color="black", linestyle="--", linewidth=1)
    for i, r in enumerate(rows):
        ax.text(float(r["total_ms"]), i, f" {float(r['total_ms']):.0f} ms", va="center", fontsize=7)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("time of the simulation loop (ms" + (", log scale" if log else "") + "; dashed: baseline)")
    ax.set_title(f"{name}: {rows[0]['config']}\n{rows[0]['device']}", fontsize=8)
    ax.invert_yaxis()
    fig.tight_layout()
    out = os.path.join(os.path.dirname(path), name + ".png")
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def plot_traces(folder):
    """wator-trace-<variant>.csv (wator --trace) -> wator-trace.png, after
    DynaSOAr paper Fig. 12a and 12d: time per step of every variant, and the
    agents and the DynaSOAr heap's fragmentation per step."""
    paths = sorted(glob.glob(os.path.join(folder, "wator-trace-*.csv")))
    traces = {}
    for path in paths:
        with open(path) as f:
            rows = list(csv.DictReader(f))
        if rows:
            traces[os.path.basename(path)[len("wator-trace-"):-len(".csv")]] = rows
    if not traces:
        return None
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for variant, rows in traces.items():
        steps = [int(r["step"]) for r in rows]
        ax.plot(steps, [float(r["ms"]) for r in rows], label=variant, linewidth=1,
                linestyle="--" if variant == "baseline" else "-")
    ax.set_yscale("log")
    ax.set_ylabel("ms per step (log scale)")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("wa-tor per step: time (registry compaction included), agents, fragmentation", fontsize=8)
    rows = traces.get("dynasoar") or next(iter(traces.values()))
    steps = [int(r["step"]) for r in rows]
    bx.plot(steps, [int(r["fish"]) for r in rows], label="fish", color="tab:blue")
    bx.plot(steps, [int(r["sharks"]) for r in rows], label="sharks", color="tab:red")
    bx.set_ylabel("agents")
    bx.set_xlabel("step")
    bx.legend(fontsize=7, loc="upper left")
    frag = [(int(r["step"]), float(r["fragmentation"])) for r in traces.get("dynasoar", []) if r["fragmentation"]]
    if frag:
        cx = bx.twinx()
        cx.fill_between([s for s, _ in frag], [100 * v for _, v in frag], color="gray", alpha=0.3)
        cx.set_ylabel("DynaSOAr heap: unused slots in\nthe agents' blocks (%, gray)")
        cx.set_ylim(0, 100)
    fig.tight_layout()
    out = os.path.join(folder, "wator-trace.png")
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
        if os.path.basename(path).startswith("wator-trace-"):
            continue
        out = plot(path)
        if out:
            print(out)
    out = plot_traces(sys.argv[1])
    if out:
        print(out)


if __name__ == "__main__":
    main()
