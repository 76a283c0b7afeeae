#!/usr/bin/env python3
"""Session 16's plot (docs/plots/reduce-s16.png) from the runs' outputs.

    python3 docs/data/session16/plot_s16.py OUTDIR [RUN6DIR]   # writes OUTDIR/reduce-s16.png

RUN6DIR holds run 6's reduce-all.csv and torch-reduce.csv (default: run6/ beside this file;
on the GPU machine, the run's own output directory). Runs 4 and 5 are read from beside this
file.
"""
import csv
import math
import os
import re
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r['kind'] == 'reduce':
                rows[(r['op'], r['dtype'], int(math.log2(int(r['n']))))] = r
    return rows


def series(rows, op, dtype, key, lo, hi):
    xs, ys = [], []
    for lg in range(lo, hi + 1):
        r = rows.get((op, dtype, lg))
        if r and r.get(key) not in (None, '', '-'):
            xs.append(lg)
            ys.append(float(r[key]))
    return xs, ys


def timeline(path, name):
    """The launch, workgroup window and drain of one dump in a timeline summary (the
    reduction's and the read kernel's), in us."""
    found = {}
    with open(path) as f:
        inside = False
        for line in f:
            if line.startswith('== '):
                inside = line.startswith(f'== {name}:')
                continue
            m = re.search(r'(reduce|read) timestamps: ([\d.]+) us; first start \+([\d.]+), '
                          r'last end ([\d.]+), then \+([\d.]+)', line)
            if inside and m:
                found[m.group(1)] = [float(m.group(i)) for i in (3, 4, 5)]
    return found


def main():
    out = sys.argv[1]
    run6 = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, 'run6')
    os.makedirs(out, exist_ok=True)
    final = load(os.path.join(run6, 'reduce-all.csv'))
    torch = load(os.path.join(run6, 'torch-reduce.csv'))
    fig, ax = plt.subplots(1, 4, figsize=(24, 5.2))

    # Where the time of one 64 MiB f32 sum goes (run 4, round 1): the command buffer's
    # timestamps against the workgroups' own clocks.
    a = ax[0]
    bars = []
    for label, build in (('read kernel', 'T'), ('all passes, one pipeline (T)', 'T'),
                         ('pass 3 alone (Ts)', 'Ts')):
        t = timeline(os.path.join(HERE, f'run4/timeline-{build}-1.txt'), 'tl-sum-f32-24.bin')
        bars.append((label, t['read' if label == 'read kernel' else 'reduce']))
    for i, (label, (launch, window, drain)) in enumerate(bars):
        a.barh(i, launch, color='tab:orange', label='timestamp to first workgroup' if i == 0 else None)
        a.barh(i, window, left=launch, color='tab:blue', label='first start to last end' if i == 0 else None)
        a.barh(i, drain, left=launch + window, color='tab:grey', label='last end to timestamp' if i == 0 else None)
        a.text(launch + window + drain + 0.2, i, f'{launch + window + drain:.2f} us', va='center', fontsize=8)
    a.set_yticks(range(len(bars)))
    a.set_yticklabels([b[0] for b in bars], fontsize=8)
    a.set_xlabel('us')
    a.set_xlim(0, 28)
    a.set_title('f32 sum of 2^24, timeline probe (S16-4)')
    a.legend(fontsize=7, loc='lower right')

    a = ax[1]
    # Run 5's O (9330da7) against U2 (one-dispatch pipelines), both rounds averaged.
    olds = [load(os.path.join(HERE, f'run5/r-O-{r}.csv')) for r in (1, 2)]
    news = [load(os.path.join(HERE, f'run5/r-U2-{r}.csv')) for r in (1, 2)]
    for dtype, op, colour in (('f32', 'sum', 'tab:blue'), ('f32', 'max', 'tab:cyan'),
                              ('i32', 'count', 'tab:green'), ('f64', 'sum', 'tab:red'),
                              ('f64', 'max', 'tab:orange'), ('f64', 'count', 'tab:olive')):
        xs = series(olds[0], op, dtype, 'us', 16, 26)[0]
        saved = [0.0] * len(xs)
        for old, new in zip(olds, news):
            yo = series(old, op, dtype, 'us', 16, 26)[1]
            yn = series(new, op, dtype, 'us', 16, 26)[1]
            saved = [s + (o - n) / 2 for s, o, n in zip(saved, yo, yn)]
        a.plot(xs, saved, marker='o', color=colour, label=f'{op} {dtype}')
    a.axhline(0, color='grey', lw=0.8)
    a.set_xlabel('log2 elements')
    a.set_ylabel('us saved per reduction')
    a.set_title('One-dispatch pipelines (S16-5, two rounds)')
    a.legend(fontsize=7)

    a = ax[2]
    for dtype, colour in (('f32', 'tab:blue'), ('i32', 'tab:green'), ('f64', 'tab:red'), ('i64', 'tab:purple')):
        for op, style in (('sum', '-'), ('max', '--'), ('count', ':')):
            xs, ys = series(final, op, dtype, 'of_read_same_bytes', 16, 28)
            a.plot(xs, ys, style, color=colour, marker='.', label=f'{op} {dtype}')
    a.axhline(0.95, color='grey', lw=0.8)
    a.set_xlabel('log2 elements')
    a.set_ylabel('rate / read kernel over the same bytes')
    a.set_title('Reductions against the read kernel (S16-6)')
    a.set_ylim(0.3, 1.05)
    a.legend(fontsize=7, ncol=4)

    a = ax[3]
    for dtype, colour in (('f32', 'tab:blue'), ('i32', 'tab:green'), ('f64', 'tab:red'), ('i64', 'tab:purple')):
        for op, style in (('sum', '-'), ('max', '--'), ('count', ':')):
            xs, ys = [], []
            for lg in range(10, 29):
                v, t = final.get((op, dtype, lg)), torch.get((op, dtype, lg))
                if v and t:
                    xs.append(lg)
                    ys.append(float(t['us']) / float(v['us']))
            a.plot(xs, ys, style, color=colour, marker='.', label=f'{op} {dtype}')
    a.axhline(1.0, color='grey', lw=0.8)
    a.set_yscale('log')
    a.set_xlabel('log2 elements')
    a.set_ylabel('torch time / vkreduce time (GPU time, same run)')
    a.set_title('Against torch (S16-6)')
    a.legend(fontsize=7, ncol=4)

    fig.suptitle('vkreduce reductions on the NVIDIA H200, session 16')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'reduce-s16.png'), dpi=110)


if __name__ == '__main__':
    main()
