#!/usr/bin/env python3
"""Session 42's plot of run S42-1 (drawn on the development machine with Debian's
python3-matplotlib: `/usr/bin/python3 docs/data/session42/plots.py`).

h100-s42-polling.png, from run1/summary.txt: each shared-memory workload's median time end to
end, as a fraction of the same workload's with polling off (VKR_LOOP_PREDICT=0, the mean of its
two rounds), for the daemon with a rate per size class (6dd7548), the one with one rate per
kind (8b69200) and polling off; a marker per round."""
import os
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
plots = os.path.join(here, "..", "..", "plots")
line = re.compile(r"(\w+) r(\d) ([\w-]+): (reduce|scan) sum f32 of (\d+) MiB.*median ([\d.]+) ms")

times = {}  # (workload label, cfg) -> [ms per round]
order = []
for text in open(os.path.join(here, "run1", "summary.txt")):
    m = line.match(text)
    if not m:
        continue
    cfg, name, kind, mib, ms = m.group(1), m.group(3), m.group(4), int(m.group(5)), float(m.group(6))
    size = "1 GiB" if mib == 1024 else "%d MiB" % mib
    label = "%s %s\n%s" % (size, kind, "alternating" if name.startswith("mix") else "alone")
    if label not in order:
        order.append(label)
    times.setdefault((label, cfg), []).append(ms)

configs = [("classes", "rate per size class (6dd7548)", "tab:green", "o"),
           ("single", "one rate per kind (8b69200)", "tab:orange", "^"),
           ("off", "VKR_LOOP_PREDICT=0", "tab:red", "s")]
fig, ax = plt.subplots(figsize=(13, 6))
for i, (cfg, name, color, marker) in enumerate(configs):
    xs, ys = [], []
    for j, label in enumerate(order):
        base = times.get((label, "off"))
        if not base or (label, cfg) not in times:
            continue
        ref = sum(base) / len(base)
        for ms in times[(label, cfg)]:
            xs.append(j + (i - 1) * 0.22)
            ys.append(ms / ref)
    ax.plot(xs, ys, marker, color=color, linestyle="none", label=name + " (each round)")
ax.axhline(1.0, color="gray", linewidth=0.8)
ax.set_xticks(range(len(order)))
ax.set_xticklabels(order, fontsize=8)
ax.set_ylabel("median end to end / polling off's (mean of two rounds)")
ax.set_title("S42-1 (H100): polling around a batch's expected end, one rate against a rate per size class",
             fontsize=10)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(plots, "h100-s42-polling.png"), dpi=110)
