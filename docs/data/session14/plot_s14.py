#!/usr/bin/env python3
"""Session 14's plot (docs/plots/reduce-s14.png) from the runs' CSVs in this directory.

    python3 docs/data/session14/plot_s14.py OUTDIR     # writes OUTDIR/reduce-s14.png
"""
import csv
import math
import os
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    rows = {}
    with open(os.path.join(HERE, name)) as f:
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
    os.makedirs(out, exist_ok=True)
    final = load('run4/reduce-all.csv')
    final_count = load('run5/c-I-1.csv')
    fig, ax = plt.subplots(1, 3, figsize=(18, 5.2))

    a = ax[0]
    for dtype, colour in (('f32', 'tab:blue'), ('i32', 'tab:green'), ('f64', 'tab:red')):
        for op, style in (('sum', '-'), ('max', '--'), ('count', ':')):
            rows = final_count if op == 'count' else final
            xs, ys = series(rows, op, dtype, 'of_read_same_bytes', 16, 28)
            a.plot(xs, ys, style, color=colour, marker='.', label=f'{op} {dtype}')
    a.axhline(0.95, color='grey', lw=0.8)
    a.set_xlabel('log2 elements')
    a.set_ylabel('rate / read kernel over the same bytes')
    a.set_title('Reductions against the read kernel (S14-4, S14-5)')
    a.set_ylim(0.3, 1.05)
    a.legend(fontsize=7, ncol=3)

    a = ax[1]
    before, after = load('run3/c-N-1.csv'), load('run3/c-C-1.csv')
    before_i, after_i = load('run5/c-F-1.csv'), load('run5/c-I-1.csv')
    for dtype, colour, b, c in (('f64', 'tab:red', before, after), ('f32', 'tab:blue', before, after),
                                ('i32', 'tab:green', before_i, after_i)):
        xs, ys = series(b, 'count', dtype, 'of_read_same_bytes', 20, 28)
        a.plot(xs, ys, '--', color=colour, marker='.', label=f'count {dtype} before')
        xs, ys = series(c, 'count', dtype, 'of_read_same_bytes', 20, 28)
        a.plot(xs, ys, '-', color=colour, marker='o', label=f'count {dtype} by key ranges')
    a.axhline(0.95, color='grey', lw=0.8)
    a.set_xlabel('log2 elements')
    a.set_ylabel('rate / read kernel over the same bytes')
    a.set_title('Count-if by key ranges (S14-3 floats, S14-5 integers)')
    a.legend(fontsize=7)

    a = ax[2]
    # Both rounds of run 2 (interleaved), averaged: a round alone moves by up to 0.5 us.
    olds = [load(f'run2/s-Q0-{r}.csv') for r in (1, 2)]
    news = [load(f'run2/s-N-{r}.csv') for r in (1, 2)]
    for dtype, op, colour in (('f32', 'sum', 'tab:blue'), ('f32', 'max', 'tab:cyan'),
                              ('f64', 'sum', 'tab:red'), ('f64', 'max', 'tab:orange')):
        xs = series(olds[0], op, dtype, 'us', 20, 25)[0]
        saved = [0.0] * len(xs)
        for old, new in zip(olds, news):
            yo = series(old, op, dtype, 'us', 20, 25)[1]
            yn = series(new, op, dtype, 'us', 20, 25)[1]
            saved = [s + (o - n) / 2 for s, o, n in zip(saved, yo, yn)]
        a.plot(xs, saved, marker='o', color=colour, label=f'{op} {dtype}')
    a.axhline(0, color='grey', lw=0.8)
    a.set_xlabel('log2 elements')
    a.set_ylabel('us saved per reduction')
    a.set_title('Workgroup tree by subgroup shuffles (S14-2, two rounds)')
    a.legend(fontsize=7)

    fig.suptitle('vkreduce reductions on the NVIDIA H200, session 14')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'reduce-s14.png'), dpi=110)


if __name__ == '__main__':
    main()
