#!/usr/bin/env python3
"""Session 15's plot (docs/plots/reduce-s15.png) from the runs' CSVs.

    python3 docs/data/session15/plot_s15.py OUTDIR [RUN3DIR]   # writes OUTDIR/reduce-s15.png

RUN3DIR holds run 3's reduce-all.csv and torch-reduce.csv (default: run3/ beside this file;
on the GPU machine, the run's own output directory).
"""
import csv
import math
import os
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


def main():
    out = sys.argv[1]
    run3 = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, 'run3')
    os.makedirs(out, exist_ok=True)
    final = load(os.path.join(run3, 'reduce-all.csv'))
    torch = load(os.path.join(run3, 'torch-reduce.csv'))
    fig, ax = plt.subplots(1, 3, figsize=(18, 5.2))

    a = ax[0]
    for dtype, colour in (('f32', 'tab:blue'), ('i32', 'tab:green'), ('f64', 'tab:red'), ('i64', 'tab:purple')):
        for op, style in (('sum', '-'), ('max', '--'), ('count', ':')):
            xs, ys = series(final, op, dtype, 'of_read_same_bytes', 16, 28)
            a.plot(xs, ys, style, color=colour, marker='.', label=f'{op} {dtype}')
    a.axhline(0.95, color='grey', lw=0.8)
    a.set_xlabel('log2 elements')
    a.set_ylabel('rate / read kernel over the same bytes')
    a.set_title('Reductions against the read kernel (S15-3)')
    a.set_ylim(0.3, 1.05)
    a.legend(fontsize=7, ncol=4)

    a = ax[1]
    # Run 2's J (fenced partials, f73cc14) against L2 (flagged partials where the accumulator
    # is 4 bytes: the build that landed; 8-byte accumulators shown flagged, as probed), both
    # rounds averaged: a round alone moves by up to 0.5 us.
    olds = [load(os.path.join(HERE, f'run2/r-J-{r}.csv')) for r in (1, 2)]
    news = [load(os.path.join(HERE, f'run2/r-L2-{r}.csv')) for r in (1, 2)]
    for dtype, op, colour, style in (('f32', 'sum', 'tab:blue', '-'), ('i32', 'max', 'tab:green', '-'),
                                     ('f32', 'count', 'tab:cyan', '-'), ('f64', 'count', 'tab:olive', '-'),
                                     ('f64', 'sum', 'tab:red', '--'), ('f64', 'max', 'tab:orange', '--'),
                                     ('i64', 'max', 'tab:purple', '--')):
        xs = series(olds[0], op, dtype, 'us', 16, 25)[0]
        saved = [0.0] * len(xs)
        for old, new in zip(olds, news):
            yo = series(old, op, dtype, 'us', 16, 25)[1]
            yn = series(new, op, dtype, 'us', 16, 25)[1]
            saved = [s + (o - n) / 2 for s, o, n in zip(saved, yo, yn)]
        kind = '4-byte, kept' if style == '-' else '8-byte, not kept'
        a.plot(xs, saved, style, marker='o', color=colour, label=f'{op} {dtype} ({kind})')
    a.axhline(0, color='grey', lw=0.8)
    a.set_xlabel('log2 elements')
    a.set_ylabel('us saved per reduction')
    a.set_title('Flagged partials, no fences (S15-2, two rounds)')
    a.legend(fontsize=7)

    a = ax[2]
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
    a.set_title('Against torch (S15-3)')
    a.legend(fontsize=7, ncol=4)

    fig.suptitle('vkreduce reductions on the NVIDIA H200, session 15')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'reduce-s15.png'), dpi=110)


if __name__ == '__main__':
    main()
