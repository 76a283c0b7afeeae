#!/usr/bin/env python3
"""Session 44's plots (drawn on the development machine with Debian's python3-matplotlib:
`/usr/bin/python3 docs/data/session44/plots.py`).

h100-s44-scan-probes.png, from run1/: GPU time at 2^28 of the f64 and i64 sums and products
for each build and prefetch distance, as a fraction of p0's (the mean of its rounds); a
marker per round, torch's cumsum/cumprod from the same run as a line, and the driver's
registers per invocation in each label."""
import csv
import glob
import os
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
plots = os.path.join(here, "..", "..", "plots")
SERIES = [("sum", "f64"), ("prod", "f64"), ("sum", "i64"), ("prod", "i64")]
VARIANTS = [("p0-a0", "p0 (default)", "tab:red", "s"),
            ("p32-a264", "p32, 264 tiles ahead", "tab:blue", "o"),
            ("p32-a396", "p32, 396 ahead", "tab:cyan", "o"),
            ("p32-a0", "p32, no prefetch", "tab:gray", "x"),
            ("p128-a264", "p128, 264 ahead", "tab:purple", "^"),
            ("d-a0", "d: row prefix by difference", "tab:orange", "v"),
            ("r-a0", "r: raked rows", "tab:brown", "D")]


def scan_times(run, variant):
    out = {}
    for path in sorted(glob.glob(os.path.join(here, run, "%s-r*.csv" % variant))):
        with open(path) as f:
            for r in csv.DictReader(f):
                if r["kind"] == "scan":
                    out.setdefault((r["op"], r["dtype"]), []).append(float(r["us"]))
    return out


def registers(run, variant):
    """The driver's registers of the f64 sum, i64 sum and i64 product kernels, from round 1."""
    path = os.path.join(here, run, "%s-r1.txt" % variant)
    found = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"pipeline scan_chained_(f64|i64)_(sum|prod) \[CS\]: Register Count=(\d+)", line)
            if m:
                found[(m.group(2), m.group(1))] = m.group(3)
    return "/".join(found.get(k, "?") for k in [("sum", "f64"), ("sum", "i64"), ("prod", "i64")])


def torch_times(run):
    out = {}
    with open(os.path.join(here, run, "torch.csv")) as f:
        for r in csv.DictReader(f):
            if r.get("kind") == "scan" and int(r["n"]) == 1 << 28:
                out[(r["op"], r["dtype"])] = float(r["us"])
    return out


def plot_run1():
    base = scan_times("run1", "p0-a0")
    torch = torch_times("run1")
    fig, ax = plt.subplots(figsize=(11, 6))
    for k, (v, name, color, marker) in enumerate(VARIANTS):
        us = scan_times("run1", v)
        xs, ys = [], []
        for i, s in enumerate(SERIES):
            ref = base[s]
            for t in us.get(s, []):
                xs.append(i + (k - 3) * 0.09)
                ys.append(t / (sum(ref) / len(ref)))
        ax.scatter(xs, ys, color=color, marker=marker,
                   label="%s (registers %s)" % (name, registers("run1", v)))
    for i, s in enumerate(SERIES):
        if s in torch:
            ref = base[s]
            ax.hlines(torch[s] / (sum(ref) / len(ref)), i - 0.4, i + 0.4, color="black", lw=1,
                      label="torch cumsum / cumprod" if i == 0 else None)
    ax.axhline(1.0, color="tab:red", lw=0.6)
    ax.set_xticks(range(len(SERIES)))
    ax.set_xticklabels(["%s %s" % (d, o) for o, d in SERIES])
    ax.set_ylabel("GPU time at 2^28 / p0's (mean of its rounds)")
    with open(os.path.join(here, "run1", "gpu.txt")) as f:
        gpu = f.readline().split(",")[0].strip()
    ax.set_title("Session 44 run 1 (%s): L2 prefetch, row prefix by difference, raked rows" % gpu)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(plots, "h100-s44-scan-probes.png"), dpi=110)


if __name__ == "__main__":
    plot_run1()
