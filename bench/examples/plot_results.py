#!/usr/bin/env python3
"""Draws one PNG per results CSV of run_examples.py: the time of every
variant with the baseline marked; the phases stacked where the times are
within 20x of each other, the totals on a log scale where they are not.

    bench/examples/plot_results.py bench/results/<run>      # writes <name>.png next to each CSV

and wator-trace.png from the per-step traces of wa-tor (wator --trace).

    bench/examples/plot_results.py --summary OUT.png FOLDER...

draws one figure of every problem found in the folders' CSVs (searched
recursively): each variant's time as a multiple of the baseline's in the same
run, on a log scale (docs/results.md shows it).

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


def summary(out, folders):
    """Every problem's CSV under `folders` -> one figure of time / baseline
    per variant (the ratio comes from one run: the baseline row of the same
    CSV). Problems without a baseline row are left out, and say so."""
    paths = sorted({p for folder in folders
                    for p in glob.glob(os.path.join(folder, "**", "*.csv"), recursive=True)
                    if not os.path.basename(p).startswith("wator-trace-")})
    problems = []  # (name, {variant: ratio})
    variants = []
    for path in paths:
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r.get("total_ms") and r.get("variant")]
        base = next((float(r["total_ms"]) for r in rows if r["variant"] == "baseline"), None)
        if not rows:
            continue
        name = os.path.splitext(os.path.basename(path))[0]
        if not base:
            print(f"{path}: no baseline row; left out", file=sys.stderr)
            continue
        ratios = {r["variant"]: float(r["total_ms"]) / base for r in rows if r["variant"] != "baseline"}
        for v in ratios:
            if v not in variants:
                variants.append(v)
        problems.append((name, ratios))
    if not problems:
        sys.exit("no results CSV with a baseline row in " + ", ".join(folders))
    # One row per problem, one marker per variant: a dot plot stays readable
    # with a dozen variants, where grouped bars did not.
    markers = "osD^v<>pPX*h"
    cmap = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(problems) + 1.6))
    for k, v in enumerate(variants):
        pts = [(p[1][v], i) for i, p in enumerate(problems) if v in p[1]]
        ax.scatter([x for x, _ in pts], [y for _, y in pts], marker=markers[k % len(markers)],
                   color="black" if v == "dynasoar" else cmap(k % 20), s=40 if v == "dynasoar" else 22,
                   label=v, zorder=3 if v == "dynasoar" else 2)
        if v == "dynasoar":
            for x, y in pts:
                ax.annotate(f"{x:.2f}x", (x, y), textcoords="offset points", xytext=(0, 6),
                            ha="center", fontsize=7)
    ax.grid(axis="x", which="both", linewidth=0.3)
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(problems)))
    ax.set_yticklabels([p[0] for p in problems])
    ax.set_xscale("log")
    ax.set_xlabel("time of the simulation loop / the baseline's in the same run\n"
                  "(log scale; dashed: as fast as the baseline; black: the DynaSOAr heap)", fontsize=8)
    ax.set_ylim(len(problems) - 0.5, -0.5)
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--summary":
        print(summary(sys.argv[2], sys.argv[3:]))
        return
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
