#!/usr/bin/env python3
"""Session 36's plot, from the H100's files under run1/ to run4/ (drawn on the development
machine with Debian's python3-matplotlib: `/usr/bin/python3 docs/data/session36/plots.py`).

daemon-s36.png: left, one synchronous client's p50 in every bench of runs S36-1, S36-2,
S36-5 and S36-6 (the last two's daemon-wide benches, not the spin settings),
by whether the client ran on the CPU that takes the GPU's interrupts (CPU 14) and whether
the daemon avoided that CPU; middle, 32 corked clients' requests per second of each build in
runs S36-2 and S36-3 (fresh daemons in rotation); right, the f64 scans at 2^28 of session
34's and session 35's builds beside torch (run S36-4)."""
import csv
import os
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
plots = os.path.join(here, "..", "..", "plots")


def bench(run, name):
    """(p50 us or None, requests/s or None, client CPU or None) of one bench's output."""
    text = open(os.path.join(here, run, f"{name}.txt")).read()
    lat = re.search(r"^latency.*\n.*\n.*\n\| ([0-9.]+) \|", text, re.M)
    tp = re.search(r"^\| 32 \| ([0-9]+) \|", text, re.M)
    cpu = re.search(r"on CPU (\d+), then (\d+)", text)
    return (float(lat.group(1)) if lat else None, int(tp.group(1)) if tp else None,
            int(cpu.group(2)) if cpu else None)


def latency(ax):
    groups = {("avoid", False): [], ("avoid", True): [], ("off", False): [], ("off", True): []}
    names = [("run1", f"{k}{i}", k) for i in range(1, 5) for k in ("avoid", "off")]
    names += [("run1", "avoid-tp", "avoid"), ("run1", "off-tp", "off")]
    names += [("run2", f"lat-{k}-{w}{i}", k) for i in (1, 2) for k in ("avoid", "off") for w in ("off", "on")]
    names += [(run, f"lat{i}", "avoid") for run in ("run5", "run6") for i in (1, 2, 3)]
    for run, name, kind in names:
        p50, _, cpu = bench(run, name)
        groups[(kind, cpu == 14)].append(p50)
    labels, colors = [], []
    for x, ((kind, on14), vals) in enumerate(groups.items()):
        ax.scatter([x] * len(vals), vals, color="tab:red" if on14 else "tab:blue", zorder=3)
        labels.append(f"daemon {kind}\nclient {'on' if on14 else 'off'} 14")
    ax.axhline(40, color="gray", ls="--", lw=1)
    ax.text(1.5, 40.5, "target: p50 < 40 us", fontsize=7, ha="center")
    ax.set_xticks(range(4))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("p50 of a synchronous 1024-f32 reduce (us)")
    ax.set_title("one client (S36-1, S36-2, S36-5, S36-6)", fontsize=9)


def throughput(ax):
    builds = [("base34", "tp-base"), ("new1", "tp-new"), ("new1 off", "tp-off"), ("noread", "tp-noread"),
              ("quiet", "tp-quiet")]
    for x, (label, prefix) in enumerate(builds):
        for run, marker in (("run2", "s"), ("run3", "o")):
            vals = []
            for i in (1, 2, 3):
                path = os.path.join(here, run, f"{prefix}{i}.txt")
                if os.path.exists(path):
                    vals.append(bench(run, f"{prefix}{i}")[1] / 1e6)
            if vals:
                ax.scatter([x + (0.12 if run == "run3" else -0.12)] * len(vals), vals, marker=marker,
                           color="tab:orange" if run == "run2" else "tab:green", zorder=3,
                           label=f"{'S36-2' if run == 'run2' else 'S36-3'}" if x == 0 else None)
    ax.set_xticks(range(len(builds)))
    ax.set_xticklabels([b[0] for b in builds], fontsize=7, rotation=20)
    ax.set_ylabel("M requests/s, 32 corked clients")
    ax.set_ylim(0, 2.4)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("throughput by build (two H100 hosts)", fontsize=9)


def scans(ax):
    def us(name):
        with open(os.path.join(here, "run4", f"scan-{name}.csv")) as f:
            return {r["op"]: float(r["us"]) for r in csv.DictReader(f) if r["kind"].startswith("scan")}
    with open(os.path.join(here, "run4", "torch-scan.csv")) as f:
        torch = {r["op"]: float(r["us"]) for r in csv.DictReader(f) if r["kind"].startswith("scan")}
    keys = ["sum", "prod"]
    series = [("base34 incl", ["base1", "base2"]), ("new1 incl", ["new1", "new2"]),
              ("base34 excl", ["base-x1", "base-x2"]), ("new1 excl", ["new-x1", "new-x2"])]
    width = 0.16
    for k, (label, names) in enumerate(series):
        vals = [min(us(n)[op] for n in names) for op in keys]
        ax.bar([i + (k - 2) * width for i in range(2)], vals, width, label=label)
    ax.bar([i + 2 * width for i in range(2)], [torch[op] for op in keys], width, label="torch")
    ax.set_xticks(range(2))
    ax.set_xticklabels(["f64 sum", "f64 prod"])
    ax.set_ylim(1400, 2150)
    ax.set_ylabel("us at 2^28 (best of two rounds)")
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    ax.set_title("f64 scans (S36-4)", fontsize=9)


fig, (a, b, c) = plt.subplots(1, 3, figsize=(14, 4.5), gridspec_kw={"width_ratios": [4, 4, 3]})
latency(a)
throughput(b)
scans(c)
fig.suptitle("vkreduced and the f64 scans on H100 80GB HBM3 hosts (KVM guests), session 36")
fig.tight_layout()
fig.savefig(os.path.join(plots, "daemon-s36.png"), dpi=110)
