#!/usr/bin/env python3
"""Session 30's plots. reduce-s30-limbs.png: f32 and f64 sums of the old build (f17c446) against each limb tail
(runs S30-1, S30-2 and S30-4: old / new / old / new on one machine each; medians of 20),
as the new build's time minus the old's in the same run. reduce-s30-ahead.png: three flagged
loads ahead (a3, kept) minus f17c446, four pairs of run S30-8. Drawn on the development
machine from the H200's CSVs.

    /usr/bin/python3 docs/data/session30/plots.py docs/data/session30 docs/plots
"""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def load(path):
    d = defaultdict(dict)
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["kind"] == "reduce":
                d[r["dtype"]][int(r["n"])] = float(r["us"])
    return d


def main():
    data, out = sys.argv[1], sys.argv[2]
    runs = (("run1", "limbs in local arrays (S30-1)"),
            ("run2", "shared memory, two barriers (S30-2)"),
            ("run4", "first subgroup, double-double (S30-4)"))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, dtype in zip(axes, ("f32", "f64")):
        for run, label in runs:
            old = [load(f"{data}/{run}/sum-old-{k}.csv")[dtype] for k in (1, 2)]
            new = [load(f"{data}/{run}/sum-new-{k}.csv")[dtype] for k in (1, 2)]
            sizes = sorted(old[0])
            delta = [sum(n[s] - o[s] for o, n in zip(old, new)) / 2 for s in sizes]
            ax.plot([s.bit_length() - 1 for s in sizes], delta, marker="o", label=label)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_title(f"{dtype} sum: limb tail minus the old tail, same run")
        ax.set_xlabel("log2 elements")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("GPU time difference (us), mean of two pairs")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(f"{out}/reduce-s30-limbs.png", dpi=110)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for op, dtype in (("sum", "f32"), ("prod", "f32"), ("prod", "i32"), ("sum", "i32")):
        diffs = defaultdict(list)
        for k in (1, 2, 3, 4):
            runs8 = {}
            for v in ("old", "a3"):
                with open(f"{data}/run8/r-{v}-{k}.csv") as f:
                    runs8[v] = {int(r["n"]): float(r["us"]) for r in csv.DictReader(f)
                                if r["kind"] == "reduce" and r["op"] == op and r["dtype"] == dtype}
            for n, t in runs8["a3"].items():
                diffs[n].append(t - runs8["old"][n])
        sizes = sorted(diffs)
        label = f"{dtype} {op}" + (" (control: same module)" if (op, dtype) == ("sum", "i32") else "")
        ax.plot([n.bit_length() - 1 for n in sizes], [sum(diffs[n]) / len(diffs[n]) for n in sizes],
                marker="o", label=label)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_title("three flagged loads ahead minus two, same run (S30-8, mean of 4 pairs)")
    ax.set_xlabel("log2 elements")
    ax.set_ylabel("GPU time difference (us)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(f"{out}/reduce-s30-ahead.png", dpi=110)


if __name__ == "__main__":
    main()
