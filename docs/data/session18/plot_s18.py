#!/usr/bin/env python3
"""Session 18's daemon plot (docs/plots/daemon-s18.png) from run 2's output directory.

    python3 docs/data/session18/plot_s18.py RUNDIR OUTPNG

RUNDIR holds VARIANT-ROUND/{lat,cork32,plain32}.txt (bench/run-daemon-h200.sh's rows) and
torch-latency.txt (bench/torch_bench.py --latency). Left: the synchronous p50 and p99 of each
daemon per round, with torch's in-process x.sum().item() loop; right: requests per second and
p99 of 32 clients, corked and not.
"""
import os
import re
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

NAMES = {'dn': 'this session (dn)', 'do': 'b2d97a2 (do)'}


def table_row(path):
    """The first data row of a markdown table in path, as floats (None if there is none)."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            if re.match(r'^\| [0-9]', line):
                return [float(x) for x in line.strip().strip('|').split('|') if x.strip()]
    return None


def main():
    run, png = sys.argv[1], sys.argv[2]
    rows = {}
    for d in sorted(os.listdir(run)):
        m = re.match(r'^(d[a-z])-([0-9]+)$', d)
        if m and os.path.isdir(os.path.join(run, d)):
            rows.setdefault(m.group(1), []).append((int(m.group(2)), os.path.join(run, d)))
    torch = None
    tpath = os.path.join(run, 'torch-latency.txt')
    if os.path.exists(tpath):
        m = re.search(r'p50\D*([0-9.]+)', open(tpath).read())
        torch = float(m.group(1)) if m else None
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.35
    for k, (v, lst) in enumerate(sorted(rows.items())):
        lst.sort()
        xs = [r + (k - 0.5) * width for r, _ in lst]
        lat = [table_row(os.path.join(p, 'lat.txt')) or [0, 0] for _, p in lst]
        a.bar(xs, [l[0] for l in lat], width, label=NAMES.get(v, v) + ' p50')
        a.scatter(xs, [l[1] for l in lat], marker='_', s=200, color='k')
        for j, row in enumerate(['cork32', 'plain32']):
            t = [table_row(os.path.join(p, row + '.txt')) or [0, 0, 0, 0, 0] for _, p in lst]
            bx = [r + j * 3.2 + (k - 0.5) * width for r, _ in lst]
            b.bar(bx, [x[1] / 1e6 for x in t], width, label=f'{NAMES.get(v, v)} {row}')
            for x, y, p99 in zip(bx, [x[1] / 1e6 for x in t], [x[4] for x in t]):
                b.annotate(f'{p99:.0f}', (x, y), ha='center', va='bottom', fontsize=7)
    if torch:
        a.axhline(torch, color='r', linestyle='--', label=f'torch x.sum().item() p50 {torch:.1f} us')
    a.axhline(40, color='g', linestyle=':', label='target p50 40 us')
    a.set_xlabel('round')
    a.set_ylabel('us (bars p50, ticks p99)')
    a.set_title('synchronous 1,024-element reduce, 1 client')
    a.legend(fontsize=7)
    b.axhline(1.0, color='g', linestyle=':', label='target 1 M req/s')
    b.set_xlabel('round (left: corked, right: not corked)')
    b.set_ylabel('M requests/s (labels: p99 us)')
    b.set_title('32 clients, window 32, 1,024-element reduces')
    b.legend(fontsize=7)
    fig.suptitle('vkreduced on the H200, session 18 run 2')
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == '__main__':
    main()
