#!/usr/bin/env python3
"""Session 43's plots (drawn on the development machine with Debian's python3-matplotlib:
`/usr/bin/python3 docs/data/session43/plots.py`).

h100-s43-keys.png, from run1/: GPU time of f64 min, max and count-if from 2^20 to 2^26 as a
fraction of `base`'s (the mean of its rounds), for each variant; a marker per round. With
run 2's data present, also s43-final.png (the GPU in run2/gpu.txt): the kept change against
base, every op of f32, f64 and i64 at 2^24, as a fraction of the read kernel."""
import csv
import glob
import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
plots = os.path.join(here, "..", "..", "plots")


def rows(path):
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r["kind"] == "reduce"]


def times(run, variant, key):
    """key(row) -> list of one value per round, for every csv of variant in run."""
    out = {}
    for path in sorted(glob.glob(os.path.join(here, run, "%s-*.csv" % variant))):
        for r in rows(path):
            out.setdefault((r["op"], r["dtype"], int(r["n"])), []).append(key(r))
    return out


def plot_run1():
    variants = [("base", "base (two-word keys)", "tab:red", "s"),
                ("v2", "v2: int64 keys, old probe (kept)", "tab:green", "o"),
                ("new", "new: int64 keys, heads' probe", "tab:blue", "^"),
                ("v3", "v3: int64 keys, exact 3-op probe", "tab:purple", "v"),
                ("v1", "v1: int64 keys, no other-side probe (wrong)", "tab:gray", "x")]
    us = {v: times("run1", v, lambda r: float(r["us"])) for v, _, _, _ in variants}
    ops = ["min", "max", "count"]
    sizes = [20, 22, 24, 26]
    fig, axes = plt.subplots(1, 3, figsize=(15, 5), sharey=True)
    for ax, op in zip(axes, ops):
        for k, (v, name, color, marker) in enumerate(variants):
            xs, ys = [], []
            for s in sizes:
                ref = us["base"].get((op, "f64", 1 << s))
                for t in us[v].get((op, "f64", 1 << s), []):
                    xs.append(s + (k - 2) * 0.08)
                    ys.append(t / (sum(ref) / len(ref)))
            ax.scatter(xs, ys, color=color, marker=marker, label=name)
        ax.axhline(1.0, color="tab:red", lw=0.6)
        ax.set_title("f64 %s" % op)
        ax.set_xticks(sizes)
        ax.set_xticklabels(["2^%d" % s for s in sizes])
        ax.set_xlabel("elements")
    axes[0].set_ylabel("GPU time / base's (mean of its rounds)")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle("Run S43-1, NVIDIA H100 80GB HBM3: f64 keys as one int64, and the NaN probes")
    fig.tight_layout()
    fig.savefig(os.path.join(plots, "h100-s43-keys.png"), dpi=110)


def plot_run2():
    gpu = open(os.path.join(here, "run2", "gpu.txt")).read().split(",")[0].strip()
    of_read = {v: times("run2", v, lambda r: float(r["of_read_same_bytes"])) for v in ("base", "final")}
    labels = []
    for dtype in ("f32", "f64", "i64"):
        for op in ("sum", "min", "max", "count"):
            labels.append((op, dtype))
    fig, ax = plt.subplots(figsize=(13, 5))
    for k, (v, name, color, marker) in enumerate([("base", "base (sessions 38-42)", "tab:red", "s"),
                                                  ("final", "f023021 (int64 keys)", "tab:green", "o")]):
        xs, ys = [], []
        for i, key in enumerate(labels):
            for y in of_read[v].get(key + (1 << 24,), []):
                xs.append(i + (k - 0.5) * 0.25)
                ys.append(y)
        ax.scatter(xs, ys, color=color, marker=marker, label=name)
    ax.axhline(0.95, color="black", lw=0.8, ls="--", label="issue 6's target (0.95 of read)")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(["%s\n%s" % (d, o) for o, d in labels])
    ax.set_ylabel("of the read kernel over the same bytes")
    ax.set_title("Run S43-2, %s: reductions at 2^24, a marker per round" % gpu)
    ax.legend(fontsize=8)
    fig.tight_layout()
    name = "h200" if "H200" in gpu else "h100"
    fig.savefig(os.path.join(plots, "%s-s43-reduce.png" % name), dpi=110)


plot_run1()
if os.path.exists(os.path.join(here, "run2", "gpu.txt")):
    plot_run2()
