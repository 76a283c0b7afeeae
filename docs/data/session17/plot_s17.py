#!/usr/bin/env python3
"""Session 17's plot (docs/plots/reduce-s17.png) from the runs' outputs.

    python3 docs/data/session17/plot_s17.py OUTDIR [RUN3DIR]   # writes OUTDIR/reduce-s17.png

RUN3DIR holds run 3's reduce-all.csv and torch-reduce.csv (default: run3/ beside this file;
on the GPU machine, the run's own output directory). Runs 1 and 2 are read from beside this
file.
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


def us(rows, op, dtype, lo, hi):
    return [lg for lg in range(lo, hi + 1) if (op, dtype, lg) in rows], \
           [float(rows[(op, dtype, lg)]['us']) for lg in range(lo, hi + 1) if (op, dtype, lg) in rows]


def mean_of_rounds(run, build):
    rounds = [load(os.path.join(HERE, run, f'r-{build}-{r}.csv')) for r in (1, 2)]
    return {k: sum(float(r[k]['us']) for r in rounds) / 2 for k in rounds[0]}


def main():
    out = sys.argv[1]
    run3 = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, 'run3')
    os.makedirs(out, exist_ok=True)
    final = load(os.path.join(run3, 'reduce-all.csv'))
    torch = load(os.path.join(run3, 'torch-reduce.csv'))
    fig, ax = plt.subplots(1, 4, figsize=(24, 5.2))

    # Run 2: summed arrivals (A) against the same binary with partials (A-p), two rounds.
    a = ax[0]
    summed, partials = mean_of_rounds('run2', 'A'), mean_of_rounds('run2', 'A-p')
    for op, dtype, colour in (('sum', 'i32', 'tab:green'), ('sum', 'u32', 'tab:olive'),
                              ('count', 'f32', 'tab:blue'), ('count', 'f64', 'tab:red'),
                              ('count', 'i32', 'tab:purple'), ('max', 'f32', 'tab:grey')):
        xs = sorted(lg for (o, d, lg) in partials if o == op and d == dtype)
        a.plot(xs, [partials[(op, dtype, lg)] - summed[(op, dtype, lg)] for lg in xs], marker='o',
               color=colour, label=f'{op} {dtype}' + (' (partials both ways)' if op == 'max' else ''))
    a.axhline(0, color='grey', lw=0.8)
    a.set_xlabel('log2 elements')
    a.set_ylabel('us saved per reduction')
    a.set_title('Summed arrivals (S17-2, two rounds)')
    a.legend(fontsize=7)

    # Run 1: workgroups of 256 with the shuffled last step (S), of 512 (W5) and 1024 (W10),
    # against U, mean time over sum, max and count of f32, i32 and f64.
    a = ax[1]
    base = mean_of_rounds('run1', 'U')
    for build, colour in (('S', 'tab:blue'), ('W5', 'tab:orange'), ('W10', 'tab:red')):
        other = mean_of_rounds('run1', build)
        xs = sorted({lg for (_, _, lg) in base})
        ys = []
        for lg in xs:
            keys = [k for k in base if k[2] == lg]
            ys.append(sum(other[k] / base[k] for k in keys) / len(keys))
        a.plot(xs, ys, marker='o', color=colour, label=build)
    a.axhline(1.0, color='grey', lw=0.8)
    a.set_xlabel('log2 elements')
    a.set_ylabel('time / U (mean over 9 reductions)')
    a.set_title('Larger workgroups (S17-1, not kept)')
    a.legend(fontsize=7)

    a = ax[2]
    for dtype, colour in (('f32', 'tab:blue'), ('i32', 'tab:green'), ('f64', 'tab:red'), ('i64', 'tab:purple')):
        for op, style in (('sum', '-'), ('max', '--'), ('count', ':')):
            xs = [lg for lg in range(16, 29) if (op, dtype, lg) in final]
            a.plot(xs, [float(final[(op, dtype, lg)]['of_read_same_bytes']) for lg in xs], style,
                   color=colour, marker='.', label=f'{op} {dtype}')
    a.axhline(0.95, color='grey', lw=0.8)
    a.set_xlabel('log2 elements')
    a.set_ylabel('rate / read kernel over the same bytes')
    a.set_title('Reductions against the read kernel (S17-3)')
    a.set_ylim(0.3, 1.05)
    a.legend(fontsize=7, ncol=4)

    a = ax[3]
    for dtype, colour in (('f32', 'tab:blue'), ('i32', 'tab:green'), ('f64', 'tab:red'), ('i64', 'tab:purple')):
        for op, style in (('sum', '-'), ('max', '--'), ('count', ':')):
            xs = [lg for lg in range(10, 29) if (op, dtype, lg) in final and (op, dtype, lg) in torch]
            a.plot(xs, [float(torch[(op, dtype, lg)]['us']) / float(final[(op, dtype, lg)]['us']) for lg in xs],
                   style, color=colour, marker='.', label=f'{op} {dtype}')
    a.axhline(1.0, color='grey', lw=0.8)
    a.set_yscale('log')
    a.set_xlabel('log2 elements')
    a.set_ylabel('torch time / vkreduce time (GPU time, same run)')
    a.set_title('Against torch (S17-3)')
    a.legend(fontsize=7, ncol=4)

    fig.suptitle('vkreduce reductions on the NVIDIA H200, session 17')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'reduce-s17.png'), dpi=110)


if __name__ == '__main__':
    main()
