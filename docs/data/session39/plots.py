#!/usr/bin/env python3
"""Session 39's plot, from run 1's console output (run1/output-tail.txt) and run 2's CSVs
(drawn on the development machine with Debian's python3-matplotlib:
`/usr/bin/python3 docs/data/session39/plots.py`).

h100-s39.png: left, PCIe GB/s per direction on the H100 host of run S39-1 (two runs each):
each direction alone, one host-to-host copy (both directions at once), two copies in opposite
directions on one queue, every staged pipeline, torch's two streams, and the in-place shm
scan end to end; right, f64/i64 sum, min and max at 2^24 as a fraction of the read kernel over
the same bytes, three repeats and two workgroup counts (run S39-2), with the 0.95 target."""
import csv
import os
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
plots = os.path.join(here, "..", "..", "plots")


def pcie_rows():
    """(label, [GB/s of each run]) in the order of the console output."""
    found = {}
    with open(os.path.join(here, "run1", "output-tail.txt")) as f:
        for line in f:
            m = re.match(r"pcie (host to device|device to host|host to host \(both directions at once\)|"
                         r"host to device \+ device to host, 2 copies)\s+1024 MiB: copy kernel .*?([\d.]+) GB/s, "
                         r"vkCmdCopyBuffer .*?([\d.]+) GB/s", line)
            if m:
                found.setdefault(m.group(1) + ", vkCmdCopyBuffer", []).append(float(m.group(3)))
                continue
            m = re.match(r"pcie staged (.+?)\s+chunks of\s+(\d+) MiB, 1024 MiB: .*?([\d.]+) GB/s each way", line)
            if m:
                found.setdefault("staged: %s, %s MiB" % (m.group(1), m.group(2)), []).append(float(m.group(3)))
                continue
            m = re.match(r"torch host to device and device to host at once.*?([\d.]+) GB/s each way", line)
            if m:
                found.setdefault("torch, two streams", []).append(float(m.group(1)))
            m = re.match(r"scan sum f32 of 1024 MiB.*?([\d.]+) GB/s each way", line)
            if m:
                found.setdefault("vkreduce shm scan, end to end", []).append(float(m.group(1)))
    return list(found.items())


def minmax():
    out = {}
    for name in ["default-1", "default-2", "default-3", "wg2112", "wg528"]:
        with open(os.path.join(here, "run2", f"minmax-{name}.csv")) as f:
            for r in csv.DictReader(f):
                if r["kind"] == "reduce":
                    out.setdefault(f"{r['dtype']} {r['op']}", []).append((name, float(r["of_read_same_bytes"])))
    return out


fig, (left, right) = plt.subplots(1, 2, figsize=(15, 7), gridspec_kw={"width_ratios": [3, 2]})
rows = pcie_rows()
for i, (label, values) in enumerate(rows):
    color = "tab:green" if label.startswith("torch") else "tab:red" if label.startswith("vkreduce") else \
        "tab:orange" if label.startswith("staged") or "2 copies" in label else "tab:blue"
    left.barh(i, sum(values) / len(values), color=color)
    left.plot(values, [i] * len(values), "k|", markersize=10)
left.set_yticks(range(len(rows)))
left.set_yticklabels([label for label, _ in rows], fontsize=8)
left.invert_yaxis()
left.axvline(0.8 * 55.0, color="gray", linestyle="--", label="0.8 of torch's one-way copy (shm-scan target)")
left.set_xlabel("GB/s per direction, 1 GiB (bars: mean of two runs; ticks: each run)")
left.set_title("S39-1 (H100): one Vulkan queue runs the two directions one after the other")
left.legend(loc="lower right", fontsize=8)

mm = minmax()
labels = list(mm)
markers = {"default-1": "o", "default-2": "o", "default-3": "o", "wg2112": "^", "wg528": "v"}
for i, label in enumerate(labels):
    for name, v in mm[label]:
        right.plot(v, i, markers[name], color="tab:blue" if name.startswith("default") else "tab:purple",
                   label={"default-1": "default (1056 workgroups), three repeats", "wg2112": "2112 workgroups",
                          "wg528": "528 workgroups"}.get(name) if i == 0 else None)
right.set_yticks(range(len(labels)))
right.set_yticklabels(labels)
right.invert_yaxis()
right.axvline(0.95, color="gray", linestyle="--", label="target 0.95")
right.set_xlabel("fraction of the read kernel over the same bytes")
right.set_title("S39-2 (H100): reductions at 2^24, 50 reps each")
right.legend(fontsize=8)
fig.tight_layout()
out = os.path.join(plots, "h100-s39.png")
fig.savefig(out, dpi=110)
print(out)
