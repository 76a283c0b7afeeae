#!/usr/bin/env python3
"""Session 35's plots, from the H100's files under run2/ and run3/ (drawn on the development
machine with Debian's python3-matplotlib: `/usr/bin/python3 docs/data/session35/plots.py`).

scan-s35-f64.png: the 64-bit scans at 2^28, session 34's build against rows scanned within
their chunk (16 rows for f64), two rounds each, beside torch (run S35-2).
daemon-s35-irq.png: one synchronous client's p50 by the CPU it was pinned to, and by where
the daemon's loop ran (run S35-3)."""
import csv
import glob
import os
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
plots = os.path.join(here, "..", "..", "plots")


def rows(path):
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r["kind"].startswith("scan")]


def scan_plot():
    series = {"base (14 rows f64)": ["base1", "base2"], "rows in chunk (16 rows f64)": ["new2-1", "new2-2"]}
    keys = [("sum", "f64"), ("prod", "f64"), ("sum", "i64"), ("prod", "i64"), ("sum", "u64"), ("prod", "u64")]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.27
    for k, (label, names) in enumerate(series.items()):
        t = {}
        for name in names:
            for r in rows(os.path.join(here, "run2", f"scan-{name}.csv")):
                t.setdefault((r["op"], r["dtype"]), []).append(float(r["us"]))
        ax.bar([i + (k - 1) * width for i in range(len(keys))], [min(t[x]) for x in keys], width, label=label)
    torch = {(r["op"], r["dtype"]): float(r["us"]) for r in rows(os.path.join(here, "run2", "torch-scan.csv"))}
    ax.bar([i + width for i in range(len(keys))], [torch.get(x, torch.get((x[0], "i64"))) for x in keys],
           width, label="torch cumsum / cumprod (u64: its i64)")
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([f"{o} {d}" for o, d in keys])
    ax.set_ylabel("us at 2^28 (lower is better; best of two rounds)")
    ax.set_title("Inclusive 64-bit scans, H100 80GB HBM3, run S35-2")
    ax.set_ylim(1400, 1950)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(plots, "scan-s35-f64.png"), dpi=110)


def daemon_plot():
    cpus, p50, colors = [], [], []
    for path in sorted(glob.glob(os.path.join(here, "run3", "lat-c*.txt")), key=lambda p: int(re.findall(r"c(\d+)", p)[-1])):
        text = open(path).read()
        m = re.search(r"^\| ([0-9.]+) \|", text, re.M)
        cpus.append(int(re.findall(r"c(\d+)\.txt", path)[0]))
        p50.append(float(m.group(1)))
    # The loop ran on CPU 14 for clients 0 to 13 and on CPU 6 for 14 and 15 (run3's output).
    colors = ["tab:red" if c < 14 else "tab:blue" for c in cpus]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [3, 1]})
    a.bar(cpus, p50, color=colors)
    a.set_xticks(cpus)
    a.set_xlabel("CPU the client was pinned to (GPU interrupts: all on CPU 14)")
    a.set_ylabel("p50 of a synchronous 1024-f32 reduce (us)")
    a.set_title("red: daemon's loop on CPU 14; blue: loop on CPU 6", fontsize=9)
    names = ["loop-hot1", "loop-hot2", "loop-cool1", "loop-cool2"]
    vals = []
    for n in names:
        m = re.search(r"^\| ([0-9.]+) \|", open(os.path.join(here, "run3", f"lat-{n}.txt")).read(), re.M)
        vals.append(float(m.group(1)))
    b.bar(range(4), vals, color=["tab:red", "tab:red", "tab:green", "tab:green"])
    b.set_xticks(range(4))
    b.set_xticklabels(["loop\non 14", "loop\non 14", "loop\non 3", "loop\non 3"], fontsize=8)
    b.set_title("client on CPU 7", fontsize=9)
    fig.suptitle("One synchronous client against vkreduced, H100 host (KVM guest), run S35-3")
    fig.tight_layout()
    fig.savefig(os.path.join(plots, "daemon-s35-irq.png"), dpi=110)


scan_plot()
daemon_plot()
