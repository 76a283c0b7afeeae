#!/usr/bin/env python3
"""Plots the daemon's rows of one H200 run (bench/run-h200.sh): requests per second against
client count for each configuration, the synchronous latency beside torch's in-process
x.sum().item(), and the shared-memory transfers beside torch's PCIe copies.

    python3 bench/plot_daemon.py RUNDIR OUTDIR

RUNDIR holds daemon/NAME.txt (vkreduce-daemon-bench output), torch.txt and shm.txt.
"""
import glob
import os
import re
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

LABELS = {
    'batched': 'libvkreduce default (arena)',
    'batched-cork': 'arena, corked',
    'inline-cork': 'inline (arena off), corked',
    'shm-cork': 'one registered region, corked',
    'cork-window-16': 'arena, corked, window 16',
    'unbatched': '--max-batch-jobs 1, corked',
}


def table_rows(text, header_start):
    """The data rows of the markdown table whose header row starts with header_start."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith(header_start):
            inside = True
            continue
        if inside:
            if line.startswith('|---'):
                continue
            if not line.startswith('|'):
                inside = False
                continue
            rows.append([c.strip() for c in line.strip('|').split('|')])
    return rows


def main():
    run, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)

    throughput, latency = {}, {}
    for path in sorted(glob.glob(os.path.join(run, 'daemon', '*.txt'))):
        name = os.path.basename(path)[:-4]
        if name.endswith('-stats'):
            continue
        text = open(path).read()
        rows = table_rows(text, '| clients')
        if rows:
            throughput[name] = [(int(r[0]), float(r[1])) for r in rows]
        rows = table_rows(text, '| p50')
        if rows:
            latency[name] = (float(rows[0][0]), float(rows[0][1]))

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in throughput.items():
        ax.plot(*zip(*pts), 'o-', label=LABELS.get(name, name))
    ax.set_xscale('log', base=2)
    ax.set_xlabel('client processes (window of 32 requests each unless noted)')
    ax.set_ylabel('1,024-element f32 reduces per second')
    ax.axhline(1e6, color='gray', linestyle=':', linewidth=1)
    ax.set_title('vkreduced on the H200: throughput of small requests')
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, 'daemon-throughput.png'), dpi=110)

    torch_text = open(os.path.join(run, 'torch.txt')).read()
    m = re.search(r'x\.sum\(\)\.item\(\).*p50 ([\d.]+) us, p99 ([\d.]+) us', torch_text)
    bars = [(f'vkreduced {name}\n(through the socket)', p50, p99) for name, (p50, p99) in latency.items()]
    if m:
        bars.append(('torch x.sum().item()\n(in process)', float(m.group(1)), float(m.group(2))))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = range(len(bars))
    ax.bar([x - 0.2 for x in xs], [b[1] for b in bars], 0.4, label='p50')
    ax.bar([x + 0.2 for x in xs], [b[2] for b in bars], 0.4, label='p99')
    ax.set_xticks(list(xs), [b[0] for b in bars], fontsize=8)
    ax.set_ylabel('microseconds per synchronous 1,024-element sum')
    ax.set_title('Latency on the H200')
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, 'daemon-latency.png'), dpi=110)

    shm_text = open(os.path.join(run, 'shm.txt')).read()
    bw = [('reduce from\nshared memory', r'reduce .* ([\d.]+) GB/s'),
          ('scan, shared memory\nto shared memory', r'scan .* ([\d.]+) GB/s each way'),
          ('torch pinned\nhost to device', None), ('torch pinned\ndevice to host', None)]
    vals = []
    for label, pattern in bw:
        if pattern:
            m = re.search(pattern, shm_text)
        else:
            direction = 'host to device' if 'host to' in label else 'device to host'
            m = re.search(rf'torch {direction}, pinned of 1 GiB: [\d.]+ ms, ([\d.]+) GB/s', torch_text)
        if m:
            vals.append((label, float(m.group(1))))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.bar([v[0] for v in vals], [v[1] for v in vals], color=['C0', 'C0', 'gray', 'gray'][:len(vals)])
    ax.set_ylabel('GB/s (1 GiB of f32)')
    ax.set_title('Client shared memory over PCIe on the H200')
    plt.setp(ax.get_xticklabels(), fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, 'daemon-shm.png'), dpi=110)


if __name__ == '__main__':
    main()
