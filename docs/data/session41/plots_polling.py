#!/usr/bin/env python3
"""Session 41's second plot (drawn on the development machine with Debian's python3-matplotlib:
`/usr/bin/python3 docs/data/session41/plots_polling.py`).

h100-s41-polling.png, from runs S41-9, S41-11 and S41-12 (run*/summary.txt): a shared-memory
reduce's time end to end over its batch's GPU time, against its size, for the daemon that
polls around the expected end of long batches (the default since 30d9e6a), the one with
VKR_LOOP_PREDICT=0, and (S41-9) a daemon of the earlier build with both threads polling 6 ms."""
import os
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
plots = os.path.join(here, "..", "..", "plots")
line = re.compile(r"(\w+) r(\d) (\d+) MiB: median ([\d.]+) ms end to end;.*GPU time per batch ([\d.]+)")

series = {}
for run in ["run9", "run11", "run12"]:
    with open(os.path.join(here, run, "summary.txt")) as f:
        for text in f:
            m = line.match(text)
            if not m:
                continue
            cfg, rnd, mib, e2e, gpu = m.group(1), m.group(2), int(m.group(3)), float(m.group(4)), float(m.group(5))
            name = {"default": "S41-9 defaults (2a2a883)", "spin": "S41-9 both threads polling 6 ms (2a2a883)",
                    "predict": "%s predicting" % run.replace("run", "S41-"),
                    "off": "%s VKR_LOOP_PREDICT=0" % run.replace("run", "S41-")}[cfg]
            series.setdefault(name, []).append((mib, e2e - gpu))

style = {"predicting": ("tab:green", "o-"), "VKR_LOOP_PREDICT=0": ("tab:red", "s--"),
         "defaults": ("tab:orange", "^:"), "polling 6 ms": ("tab:blue", "v:")}
fig, ax = plt.subplots(figsize=(11, 6.5))
for name, points in sorted(series.items()):
    color, fmt = next(v for k, v in style.items() if k in name)
    by_size = {}
    for mib, over in points:
        by_size.setdefault(mib, []).append(over * 1000)
    sizes = sorted(by_size)
    ax.plot(sizes, [sum(by_size[s]) / len(by_size[s]) for s in sizes], fmt, color=color, alpha=0.8,
            label=name + " (mean of two rounds; ticks: each)")
    for s in sizes:
        ax.plot([s] * len(by_size[s]), by_size[s], "_", color=color, markersize=12)
ax.set_xscale("log", base=2)
ax.set_xticks([1, 4, 16, 64, 256])
ax.set_xticklabels(["1 MiB", "4 MiB", "16 MiB", "64 MiB", "256 MiB"])
ax.set_xlabel("shared-memory reduce (f32 sum) per request; GPU time per batch 0.028, 0.089, 0.334, 1.31, 5.23 ms")
ax.set_ylabel("end to end (median) minus the batch's GPU time, us")
ax.set_title("S41-9, S41-11, S41-12 (H100): polling around a long batch's expected end saves the wake-ups", fontsize=10)
ax.legend(fontsize=8, loc="upper left")
fig.tight_layout()
fig.savefig(os.path.join(plots, "h100-s41-polling.png"), dpi=110)
