#!/usr/bin/env python3
"""Session 38's plot, from the H200's CSVs under run2/ and run3/ (drawn on the development
machine with Debian's python3-matplotlib: `/usr/bin/python3 docs/data/session38/plots.py`).

h200-s38.png: left, every scan at 2^28 (rev, ca1a5e1) as a fraction of the copy kernel over
the same bytes, inclusive and exclusive, with torch's cumsum / cumprod (i32 for u32, i64 for
u64; torch has no cummin/cummax that is not a Python-level loop) and the 1.3x-torch target;
right, every reduction at 2^28 and 2^24 as a fraction of the read kernel over the same
bytes, with the 0.95 target. One H200, runs S38-2 and S38-3, torch in the same runs."""
import csv
import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
plots = os.path.join(here, "..", "..", "plots")
DTYPES = ["f32", "i32", "u32", "f64", "i64", "u64"]
OPS = ["sum", "prod", "min", "max"]


def rows(run, name, kind):
    with open(os.path.join(here, run, f"{name}.csv")) as f:
        return [r for r in csv.DictReader(f) if r["kind"] == kind]


def copy_us(run, name):
    with open(os.path.join(here, run, f"{name}.csv")) as f:
        return next(float(r["us"]) for r in csv.DictReader(f) if r["kind"] == "copy")


def main():
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 5.5))
    # Scans: bytes moved are 2 n size, the copy kernel moved 2 GiB (1 GiB read + written).
    copy_gbs = 2 * (1 << 30) / copy_us("run2", "scan-incl") / 1e3
    torch = {(r["op"], r["dtype"]): float(r["us"]) for r in rows("run2", "torch-scan", "scan")}
    incl = {(r["op"], r["dtype"]): r for r in rows("run2", "scan-incl", "scan")}
    excl = {(r["op"], r["dtype"]): r for r in rows("run2", "scan-excl", "scan_excl")}
    labels, xs = [], []
    for i, (d, op) in enumerate((d, op) for d in DTYPES for op in OPS):
        labels.append(f"{d} {op}")
        xs.append(i)
        for series, table, colour, dx in (("inclusive", incl, "tab:blue", -0.2),
                                           ("exclusive", excl, "tab:cyan", 0.0)):
            r = table[(op, d)]
            left.bar(i + dx, float(r["gbs"]) / copy_gbs, 0.2, color=colour,
                     label=series if i == 0 else None)
        t = torch.get((op, {"u32": "i32", "u64": "i64"}.get(d, d)))
        if t:
            n_bytes = 2 * int(incl[(op, d)]["n"]) * (4 if d.endswith("32") else 8)
            frac = n_bytes / t / 1e3 / copy_gbs
            left.bar(i + 0.2, frac, 0.2, color="tab:orange", label="torch" if i == 0 else None)
            left.plot([i - 0.3, i + 0.3], [1.3 * frac] * 2, color="tab:red", lw=1.5,
                      label="1.3x torch (target)" if i == 0 else None)
    left.set_xticks(xs)
    left.set_xticklabels(labels, rotation=90, fontsize=7)
    left.set_ylabel("fraction of the copy kernel's bandwidth")
    left.set_ylim(0, 1.1)
    left.set_title("scans at 2^28 on an H200 (S38-2)")
    left.legend(fontsize=8, loc="lower left")
    # Reductions.
    ops = ["sum", "prod", "min", "max", "count"]
    for k, colour, dx in ((28, "tab:blue", -0.2), (24, "tab:green", 0.2)):
        red = {(r["op"], r["dtype"]): float(r["of_read_same_bytes"]) for r in rows("run3", f"reduce-{k}", "reduce")}
        for i, (d, op) in enumerate((d, op) for d in DTYPES for op in ops):
            right.bar(i + dx, red[(op, d)], 0.4, color=colour, label=f"2^{k}" if i == 0 else None)
    names = [f"{d} {op}" for d in DTYPES for op in ops]
    right.axhline(0.95, color="tab:red", lw=1, label="0.95 of read (target)")
    right.set_xticks(range(len(names)))
    right.set_xticklabels(names, rotation=90, fontsize=7)
    right.set_ylim(0.85, 1.02)
    right.set_ylabel("fraction of the read kernel over the same bytes")
    right.set_title("reductions on an H200 (S38-3)")
    right.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    out = os.path.join(plots, "h200-s38.png")
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
