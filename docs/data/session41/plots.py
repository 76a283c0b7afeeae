#!/usr/bin/env python3
"""Session 41's plot (drawn on the development machine with Debian's python3-matplotlib:
`/usr/bin/python3 docs/data/session41/plots.py`).

h100-s41.png, from runs S41-1 and S41-2 on one H100 host:
left, PCIe GB/s per direction over 1 GiB (run S41-1, run1/pcie.txt and torch's copies in
run1/torch-latency.txt): each direction alone, one host-to-host transfer (both directions at
once), two transfers in opposite directions on one queue and on queues of their own, every
staged pipeline on one queue and on queues of their own, and torch's two CUDA streams;
right, the daemon A/B of run S41-2 (run2/): 32 corked clients' requests per second against
their p99, per build (ca1a5e1 base, a8d2a98 new) and round, with the issue's targets;
below, run S41-3 (run3/output-tail.txt): the copy kernel's GB/s per direction over 1 GiB
against its workgroups (one direction, one host-to-host transfer, and the up and down kernels
recorded together with no barrier), beside vkCmdCopyBuffer's, the in-place shm scan end to
end and torch's two streams in the same run."""
import os
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
plots = os.path.join(here, "..", "..", "plots")


def pcie_rows():
    """(label, GB/s per direction, kind) in the order of the bench's output."""
    rows = []
    with open(os.path.join(here, "run1", "pcie.txt")) as f:
        for line in f:
            m = re.match(r"pcie (host to device|device to host|host to host \(both directions at once\)|"
                         r"host to device \+ device to host, 2 copies)\s+1024 MiB: copy kernel .*?([\d.]+) GB/s, "
                         r"vkCmdCopyBuffer .*?([\d.]+) GB/s", line)
            if m:
                kind = "pair" if "2 copies" in m.group(1) else "both" if "host to host" in m.group(1) else "one"
                name = m.group(1).replace(" (both directions at once)", ", one transfer")
                rows.append((name + ", on one queue: copy kernel", float(m.group(2)), kind))
                rows.append((name + ", on one queue: vkCmdCopyBuffer", float(m.group(3)), kind))
                continue
            m = re.match(r"pcie staged on queues: (.+?), chunks of (\d+) MiB, 1024 MiB: .*?([\d.]+) GB/s each way",
                         line)
            if m:
                rows.append(("staged on queues: %s, %s MiB" % (m.group(1), m.group(2)), float(m.group(3)),
                             "staged queues"))
                continue
            m = re.match(r"pcie staged (.+?)\s+chunks of\s+(\d+) MiB, 1024 MiB: .*?([\d.]+) GB/s each way", line)
            if m:
                rows.append(("staged on one queue: %s, %s MiB" % (m.group(1), m.group(2)), float(m.group(3)),
                             "staged"))
                continue
            m = re.match(r"pcie queues up on (\d) \((.+?)\), down on (\d) \((.+?)\), 1024 MiB each: .*?([\d.]+) GB/s",
                         line)
            if m:
                rows.append(("dma pair: up on queue %s (%s), down on %s (%s)" % m.groups()[:4], float(m.group(5)),
                             "pair queues"))
    with open(os.path.join(here, "run1", "torch-latency.txt")) as f:
        for line in f:
            m = re.match(r"torch host to device and device to host at once.*?([\d.]+) GB/s each way", line)
            if m:
                rows.append(("torch, two CUDA streams", float(m.group(1)), "torch"))
    return rows


def daemon_rows():
    """{(build, round): [(req/s, p99 us), ...]} and {(build, round): lone p50 us}."""
    tp, lat = {}, {}
    for build in ["base", "new"]:
        for rnd in [1, 2]:
            for i in [1, 2]:
                with open(os.path.join(here, "run2", f"tp-{build}-{rnd}-{i}.txt")) as f:
                    for line in f:
                        m = re.match(r"\| 32 \| (\d+) \| [\d.]+ \| \d+ \| (\d+) \|", line)
                        if m:
                            tp.setdefault((build, rnd), []).append((int(m.group(1)) / 1e6, int(m.group(2))))
            with open(os.path.join(here, "run2", f"lat-{build}-{rnd}.txt")) as f:
                for line in f:
                    m = re.match(r"\| ([\d.]+) \| ([\d.]+) \|", line)
                    if m:
                        lat[(build, rnd)] = float(m.group(1))
    return tp, lat


colors = {"one": "tab:blue", "both": "tab:purple", "pair": "tab:orange", "staged": "tab:orange",
          "pair queues": "tab:brown", "staged queues": "tab:brown", "torch": "tab:green"}
def sweep():
    """{workgroups: {row: GB/s}} from run 3's console output (2112 twice: the mean), and the
    run's shm scan and torch figures."""
    rows, refs, w = {}, {}, None
    with open(os.path.join(here, "run3", "output-tail.txt")) as f:
        for line in f:
            m = re.match(r"workgroups (\d+) rc=0", line)
            if m:
                w = int(m.group(1))
                continue
            m = re.match(r"pcie (host to device \+ device to host|host to device|device to host|host to host)"
                         r".*?copy kernel .*?([\d.]+) GB/s, vkCmdCopyBuffer .*?([\d.]+) GB/s", line)
            if m:
                rows.setdefault(w, {}).setdefault(m.group(1), []).append(float(m.group(2)))
                refs.setdefault("dma " + m.group(1), []).append(float(m.group(3)))
                continue
            m = re.match(r"scan sum f32 of 1024 MiB.*?([\d.]+) GB/s each way", line)
            if m:
                refs["shm scan"] = [float(m.group(1))]
            m = re.match(r"torch host to device and device to host at once.*?([\d.]+) GB/s each way", line)
            if m:
                refs["torch"] = [float(m.group(1))]
    return {k: {r: sum(v) / len(v) for r, v in d.items()} for k, d in rows.items()}, \
        {r: sum(v) / len(v) for r, v in refs.items()}


fig = plt.figure(figsize=(16, 15))
grid = fig.add_gridspec(2, 2, width_ratios=[3, 2], height_ratios=[3, 2])
left, right, bottom = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])
rows = pcie_rows()
for i, (label, value, kind) in enumerate(rows):
    left.barh(i, value, color=colors[kind])
    left.text(value + 0.3, i, "%.1f" % value, va="center", fontsize=7)
left.set_yticks(range(len(rows)))
left.set_yticklabels([label for label, _, _ in rows], fontsize=7)
left.invert_yaxis()
left.axvline(0.8 * 55.3, color="gray", linestyle="--", label="shm scan target:\n0.8 of torch's one-way copy")
left.axvline(40.1, color="tab:red", linestyle=":", label="vkreduce's in-place shm scan,\nend to end (S34-5, an H100 host)")
left.set_xlabel("GB/s per direction, 1 GiB")
left.set_title("S41-1 (H100): Vulkan's queues do not overlap the two directions as CUDA's streams do", fontsize=10)
left.set_xlim(0, 62)
left.legend(loc="center right", fontsize=8)

tp, lat = daemon_rows()
marks = {"base": "o", "new": "s"}
for (build, rnd), points in tp.items():
    right.plot([p[0] for p in points], [p[1] / 1000 for p in points], marks[build],
               color="tab:blue" if rnd == 1 else "tab:orange", markersize=8,
               label="%s (%s), round %d; lone client p50 %.1f us" %
               (build, "ca1a5e1" if build == "base" else "a8d2a98", rnd, lat[(build, rnd)]))
right.axhline(1.0, color="gray", linestyle="--", label="p99 target 1 ms")
right.axvline(1.0, color="gray", linestyle=":", label="throughput target 1 M req/s")
right.set_xlim(0.8, 2.4)
right.set_ylim(0, 1.2)
right.set_xlabel("M requests/s, 32 corked clients, 1,024-element f32 reduces")
right.set_ylabel("p99 (ms)")
right.set_title("S41-2 (H100): ca1a5e1 against a8d2a98, one machine", fontsize=10)
right.legend(loc="lower left", fontsize=7)
rows3, refs3 = sweep()
ws = sorted(rows3)
for row, label, color in [("host to device", "copy kernel, host to device alone", "tab:blue"),
                          ("device to host", "copy kernel, device to host alone", "tab:cyan"),
                          ("host to host", "copy kernel, one host-to-host transfer", "tab:purple"),
                          ("host to device + device to host",
                           "copy kernels up and down, recorded together (no barrier)", "tab:orange")]:
    bottom.plot(ws, [rows3[w][row] for w in ws], "o-", color=color, label=label)
bottom.axhline(refs3["dma host to host"], color="tab:purple", linestyle=":",
               label="vkCmdCopyBuffer, one host-to-host transfer (mean over the run)")
bottom.axhline(refs3["dma host to device + device to host"], color="tab:orange", linestyle=":",
               label="vkCmdCopyBuffer, up and down recorded together")
bottom.axhline(refs3["shm scan"], color="tab:red", linestyle="-.", label="vkreduce's in-place shm scan, end to end")
bottom.axhline(refs3["torch"], color="tab:green", linestyle="--", label="torch, two CUDA streams")
bottom.axhline(0.8 * 55.1, color="gray", linestyle="--", label="shm scan target: 0.8 of torch's one-way copy")
bottom.set_xscale("log", base=2)
bottom.set_xticks(ws)
bottom.set_xticklabels([str(w) for w in ws])
bottom.set_xlabel("copy kernel's workgroups (VKR_REDUCE_WORKGROUPS; 1056 fill the H100 once, 2112 by default)")
bottom.set_ylabel("GB/s per direction, 1 GiB")
bottom.set_ylim(20, 56)
bottom.set_title("S41-3 (H100): the host-to-host ceiling is 42 GB/s each way at every grid; two kernels "
                 "reach it only where both fit on the GPU at once", fontsize=10)
bottom.legend(loc="lower left", fontsize=8, ncol=2)
fig.tight_layout()
fig.savefig(os.path.join(plots, "h100-s41.png"), dpi=110)
