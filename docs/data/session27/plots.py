#!/usr/bin/env python3
"""Session 27's plots from the runs' outputs, drawn with matplotlib on the GPU machine.

    python3 docs/data/session27/plots.py OUTDIR [RUN2DIR]

writes OUTDIR/scan-s27-keys.png (run 1: float min and max scans on integer-held keys against
session 26's build, and the i64/u64 sums at 10, 12 and 14 rows) and, where RUN2DIR holds run
2's reduce-all.csv and torch-reduce.csv, OUTDIR/reduce-s27.png (every reduction of the final
build against the read kernel and against torch, same run).
"""
import csv
import math
import os
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path, kinds=('reduce', 'scan', 'scan_excl')):
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for r in csv.DictReader(f):
            if r['kind'] in kinds:
                rows[(r['kind'], r['op'], r['dtype'], int(math.log2(int(r['n']))))] = r
    return rows


def scan_us(name, kind, op, dtype):
    r = load(os.path.join(HERE, 'run1', f'scan-{name}.csv')).get((kind, op, dtype, 28))
    return float(r['us']) if r else None


def plot_keys(out):
    fig, ax = plt.subplots(1, 2, figsize=(17, 6), gridspec_kw={'width_ratios': [2, 1]})
    a = ax[0]
    bars = [  # label, run, kind, op, dtype
        ('f64 min\nbase reduce-then-scan', 'base-def', 'scan', 'min', 'f64'),
        ('f64 min\nbase single-pass 8 rows', 'base-sp', 'scan', 'min', 'f64'),
        ('f64 min\nint keys 8 rows', 'new-f64-8', 'scan', 'min', 'f64'),
        ('f64 min\nint keys 9 rows', 'new-f64-9', 'scan', 'min', 'f64'),
        ('f64 min\nint keys 10 rows', 'new-f64-10', 'scan', 'min', 'f64'),
        ('f64 min\nint keys 14 rows', 'new-f64-14', 'scan', 'min', 'f64'),
        ('i64 min\n9 rows (reference)', 'new-i64ref', 'scan', 'min', 'i64'),
        ('f32 min\nbase 9 rows', 'base-def', 'scan', 'min', 'f32'),
        ('f32 min\nint keys 9 rows', 'new-f32', 'scan', 'min', 'f32'),
        ('f32 min\nint keys 8 rows', 'new-f32-8', 'scan', 'min', 'f32'),
    ]
    labels, values, colours = [], [], []
    for label, run, kind, op, dtype in bars:
        v = scan_us(run, kind, op, dtype)
        if v is None:
            continue
        labels.append(label)
        values.append(v)
        colours.append('tab:grey' if run.startswith('base') or 'reference' in label else 'tab:orange')
    a.bar(range(len(values)), values, color=colours)
    for i, v in enumerate(values):
        a.text(i, v + 15, f'{v:.0f}', ha='center', fontsize=8)
    a.set_xticks(range(len(values)))
    a.set_xticklabels([x.replace('\n', ', ') for x in labels], fontsize=8, rotation=30, ha='right')
    a.set_ylabel('us at 2^28 (median of 20)')
    a.set_title('Min scans: keys held as integers (orange) against session 26 (grey), run S27-1')

    a = ax[1]
    labels, values = [], []
    for rows, run in ((10, 'new-i64ref'), (12, 'new-sum-12'), (14, 'new-sum-14')):
        for dtype in ('i64', 'u64'):
            v = scan_us(run, 'scan', 'sum', dtype)
            if v is not None:
                labels.append(f'{dtype} sum\n{rows} rows')
                values.append(v)
    a.bar(range(len(values)), values, color='tab:blue')
    for i, v in enumerate(values):
        a.text(i, v + 10, f'{v:.0f}', ha='center', fontsize=8)
    a.set_xticks(range(len(values)))
    a.set_xticklabels(labels, fontsize=8)
    a.set_ylabel('us at 2^28 (median of 20)')
    a.set_title('i64 and u64 sum scans by tile rows, run S27-1')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'scan-s27-keys.png'), dpi=110)


def plot_reduce(out, run2):
    final = load(os.path.join(run2, 'reduce-all.csv'), ('reduce',))
    torch = load(os.path.join(run2, 'torch-reduce.csv'), ('reduce',))
    if not final:
        return
    fig, ax = plt.subplots(1, 2, figsize=(16, 5.2))
    ops = ('sum', 'prod', 'min', 'max', 'count')
    styles = {'sum': '-', 'prod': '-.', 'min': (0, (1, 1)), 'max': '--', 'count': ':'}
    colours = {'f32': 'tab:blue', 'i32': 'tab:green', 'u32': 'tab:olive', 'f64': 'tab:red',
               'i64': 'tab:purple', 'u64': 'tab:brown'}
    for dtype, colour in colours.items():
        for op in ops:
            xs = [lg for lg in range(16, 29) if ('reduce', op, dtype, lg) in final]
            ax[0].plot(xs, [float(final[('reduce', op, dtype, lg)]['of_read_same_bytes']) for lg in xs],
                       linestyle=styles[op], color=colour, marker='.', lw=1, label=f'{op} {dtype}')
            xs = [lg for lg in range(10, 29) if ('reduce', op, dtype, lg) in final and ('reduce', op, dtype, lg) in torch]
            ax[1].plot(xs, [float(torch[('reduce', op, dtype, lg)]['us']) / float(final[('reduce', op, dtype, lg)]['us'])
                            for lg in xs], linestyle=styles[op], color=colour, marker='.', lw=1, label=f'{op} {dtype}')
    ax[0].axhline(0.95, color='grey', lw=0.8)
    ax[0].set_ylim(0.3, 1.05)
    ax[0].set_xlabel('log2 elements')
    ax[0].set_ylabel('rate / read kernel over the same bytes (same run)')
    ax[0].set_title('Reductions against the read kernel (S27-2)')
    ax[0].legend(fontsize=6, ncol=5)
    ax[1].axhline(1.0, color='grey', lw=0.8)
    ax[1].set_yscale('log')
    ax[1].set_xlabel('log2 elements')
    ax[1].set_ylabel('torch time / vkreduce time (GPU time, same run)')
    ax[1].set_title('Against torch (S27-2)')
    ax[1].legend(fontsize=6, ncol=5)
    fig.suptitle('vkreduce reductions on the NVIDIA H200, session 27 (00f24df)')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'reduce-s27.png'), dpi=110)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    plot_keys(out)
    if len(sys.argv) > 2:
        plot_reduce(out, sys.argv[2])


if __name__ == '__main__':
    main()
