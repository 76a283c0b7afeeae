#!/usr/bin/env python3
"""Session 37's plot, from the H100's CSVs under run1/ and run2/ (drawn on the development
machine with Debian's python3-matplotlib: `/usr/bin/python3 docs/data/session37/plots.py`).

scan-s37-lanes.png: left, scans at 2^28 with the default rows against blocked lanes (run
S37-1, one binary, both rounds' points); right, the default rows of the build with the blocked
branch compiled in and switched off (new) against its revert (rev), both rounds (run S37-2),
beside torch's cumsum / cumprod of run S37-1 (another start of an H100)."""
import csv
import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
plots = os.path.join(here, "..", "..", "plots")
SERIES = [("f32", "sum"), ("f64", "sum"), ("f64", "prod"), ("i64", "sum"), ("i64", "prod")]


def times(run, name, kind="scan"):
    """{(dtype, op): us} of one CSV."""
    path = os.path.join(here, run, f"{name}.csv")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {(r["dtype"], r["op"]): float(r["us"]) for r in csv.DictReader(f) if r["kind"] == kind}


def panel(ax, title, groups, torch):
    width = 0.8 / len(groups)
    for g, (label, color, names) in enumerate(groups):
        for x, key in enumerate(SERIES):
            vals = [t[key] for t in names if key in t]
            ax.scatter([x + (g - (len(groups) - 1) / 2) * width] * len(vals), vals, color=color,
                       label=label if x == 0 else None, zorder=3)
    for x, key in enumerate(SERIES):
        if key in torch:
            ax.hlines(torch[key], x - 0.4, x + 0.4, color="gray", ls="--", lw=1,
                      label="torch (S37-1)" if x == 0 else None)
    ax.set_xticks(range(len(SERIES)))
    ax.set_xticklabels([f"{d} {o}" for d, o in SERIES], fontsize=8)
    ax.set_ylabel("GPU time at 2^28, inclusive (us)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def main():
    torch = {}
    with open(os.path.join(here, "run1", "torch-scan.csv")) as f:
        torch = {(r["dtype"], r["op"]): float(r["us"]) for r in csv.DictReader(f) if r["kind"] == "scan"}
    rows1 = [times("run1", f"scan-rows64-{i}") for i in (1, 2)] + [times("run1", "scan-rows32")]
    blocked1 = [times("run1", f"scan-blocked64-{i}") for i in (1, 2)] + [times("run1", "scan-blocked32")]
    new2 = [times("run2", f"scan-new-{i}") for i in (1, 2)]
    rev2 = [times("run2", f"scan-rev-{i}") for i in (1, 2)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    panel(axes[0], "S37-1: default rows against blocked lanes (H100)",
          [("rows (default; blocked branch compiled in)", "tab:blue", rows1), ("blocked lanes", "tab:red", blocked1)], torch)
    panel(axes[1], "S37-2: rows with the blocked branch compiled in (off) against its revert",
          [("branch compiled in, off", "tab:orange", new2), ("revert (2dfcf52's shader)", "tab:green", rev2)],
          torch)
    fig.tight_layout()
    fig.savefig(os.path.join(plots, "scan-s37-lanes.png"), dpi=110)


if __name__ == "__main__":
    main()
