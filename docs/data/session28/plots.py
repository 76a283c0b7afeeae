#!/usr/bin/env python3
"""Session 28's plot: small reductions of the old build (55c0a72) and the final one, from run
S28-6 (sums and count-if, new / old / old / new on one machine) and run S28-4 (every op).
Drawn on the development machine from the H200's CSVs (the session's device time was spent).

    python3 docs/data/session28/plots.py docs/data/session28 docs/plots
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
                d[(r["op"], r["dtype"])][int(r["n"])] = float(r["us"])
    return d


def main():
    data, out = sys.argv[1], sys.argv[2]
    run6 = {v: [load(f"{data}/run6/reduce-{i}-{v}.csv") for i in idx]
            for v, idx in (("old", (2, 3)), ("new", (1, 4)))}
    run4 = {v: load(f"{data}/run4/reduce-{v}-1.csv") for v in ("old", "new")}
    sizes = list(range(10, 17))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    series = [
        (axes[0], run6, [("sum", "f32"), ("sum", "f64"), ("sum", "i64"), ("count", "f64"), ("count", "i64")],
         "run S28-6: sums and count-if (mean of two series each)"),
        (axes[1], run4, [("min", "f64"), ("max", "i64"), ("prod", "f64"), ("prod", "i32"), ("count", "f32")],
         "run S28-4: other ops (that build: one-part jobs +0.1 us, gone in the final)"),
    ]
    for ax, runs, keys, title in series:
        for c, key in enumerate(keys):
            color = f"C{c}"
            for v, style in (("old", "--"), ("new", "-")):
                r = runs[v]
                ys = []
                for e in sizes:
                    vals = [x[key][1 << e] for x in r] if isinstance(r, list) else [r[key][1 << e]]
                    ys.append(sum(vals) / len(vals))
                ax.plot(sizes, ys, style, color=color, marker="o", ms=3,
                        label=f"{key[0]} {key[1]} ({'55c0a72' if v == 'old' else 'final'})")
        ax.axvline(14.5, color="grey", lw=0.8)
        ax.text(14.55, 12.3, "normal path", fontsize=8, color="grey")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("elements (log2)")
        ax.set_xticks(sizes)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    axes[0].set_ylabel("GPU time, us (median of 20)")
    fig.suptitle("Small reductions on the H200: one workgroup per job (dashed) and 8-byte jobs over "
                 "64 KiB spread (solid)", fontsize=11)
    fig.tight_layout()
    fig.savefig(f"{out}/reduce-s28-small.png", dpi=110)
    print(f"wrote {out}/reduce-s28-small.png")


main()
