#!/usr/bin/env python3
"""Session 34's plots, drawn on the development machine (Debian's python3-matplotlib) from
the H100's CSVs.

reduce-s34-tails.png: run S34-1, GPU time differences from 2^16 to 2^25, mean of the two
rounds: c4f93e2 (awaited tails) minus ad5fd79 (posted tails) for min, max and 64-bit sums,
and ad5fd79's GPU fold minus its host fold (VKR_REDUCE_FOLD=host) for float sums and the
products. reduce-s34-torch.png: run S34-2, 0d75a9c (host fold by default) against torch,
torch's time over vkreduce's, 2^16 to 2^28, and vkreduce's fraction of the read kernel.

    /usr/bin/python3 docs/data/session34/plots.py docs/data/session34 docs/plots
"""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def load(path, column="us"):
    d = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["kind"] == "reduce":
                d[(r["op"], r["dtype"], int(r["n"]))] = float(r[column])
    return d


def mean_of_rounds(data, build):
    rounds = [load(f"{data}/run1/r-{build}-{k}.csv") for k in (1, 2)]
    return {key: sum(r[key] for r in rounds) / 2 for key in rounds[0]}


def tails(data, out):
    base, new, fold = (mean_of_rounds(data, b) for b in ("base", "new", "fold"))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    series = ((axes[0], base, new, "c4f93e2 minus ad5fd79: posted atomic tails",
               (("min", "f32"), ("max", "i32"), ("max", "f64"), ("min", "i64"), ("sum", "i64"), ("count", "f32"))),
              (axes[1], new, fold, "GPU's fold minus the host's (VKR_REDUCE_FOLD=host)",
               (("sum", "f32"), ("prod", "f32"), ("prod", "i32"), ("sum", "f64"), ("prod", "f64"), ("prod", "i64"))))
    for ax, before, after, title, keys in series:
        for op, dtype in keys:
            sizes = sorted(n for (o, t, n) in after if (o, t) == (op, dtype))
            ax.plot([n.bit_length() - 1 for n in sizes],
                    [before[(op, dtype, n)] - after[(op, dtype, n)] for n in sizes], marker="o",
                    label=f"{dtype} {op}")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_title(title)
        ax.set_xlabel("log2 elements")
        ax.grid(alpha=0.3)
        ax.legend()
    axes[0].set_ylabel("GPU time saved (us), mean of two rounds, H100")
    fig.tight_layout()
    fig.savefig(f"{out}/reduce-s34-tails.png", dpi=110)


def against_torch(data, out):
    ours = load(f"{data}/run2/reduce.csv")
    of_read = load(f"{data}/run2/reduce.csv", "of_read_same_bytes")
    torch = load(f"{data}/run2/torch.csv")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for op in ("sum", "prod", "min", "max", "count"):
        for dtype, style in (("f32", "-"), ("f64", "--")):
            sizes = sorted(n for (o, t, n) in ours if (o, t) == (op, dtype) and (o, t, n) in torch)
            x = [n.bit_length() - 1 for n in sizes]
            axes[0].plot(x, [torch[(op, dtype, n)] / ours[(op, dtype, n)] for n in sizes], style,
                         marker="o", markersize=3, label=f"{dtype} {op}")
            axes[1].plot(x, [of_read[(op, dtype, n)] for n in sizes], style, marker="o", markersize=3,
                         label=f"{dtype} {op}")
    axes[0].axhline(1, color="black", linewidth=0.8)
    axes[0].set_yscale("log")
    axes[0].set_ylabel("torch's time / vkreduce's (same run)")
    axes[0].set_title("vkreduce 0d75a9c against torch 2.11, H100")
    axes[1].axhline(0.95, color="black", linewidth=0.8)
    axes[1].set_ylabel("fraction of the read kernel over the same bytes")
    axes[1].set_title("vkreduce against the device's read bandwidth")
    for ax in axes:
        ax.set_xlabel("log2 elements")
        ax.grid(alpha=0.3)
    axes[1].legend(ncol=2, fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{out}/reduce-s34-torch.png", dpi=110)


def main():
    data, out = sys.argv[1], sys.argv[2]
    tails(data, out)
    against_torch(data, out)


if __name__ == "__main__":
    main()
