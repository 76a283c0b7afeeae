#!/usr/bin/env python3
"""A grouped bar chart of kernel times from a CSV: one group per row (column 1 names it), one
bar per numeric column named in --columns; rows named in --lines are drawn as horizontal
lines instead (references such as torch or the copy kernel).

    python3 bench/plot_bars.py variants.csv out.png --columns f32_sum_us,i32_sum_us \
        --lines torch,copy --title '...'
"""
import argparse
import csv

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('csv')
    ap.add_argument('png')
    ap.add_argument('--columns', required=True, help='comma-separated numeric columns, one bar each')
    ap.add_argument('--lines', default='', help='comma-separated row names drawn as lines')
    ap.add_argument('--title', default='')
    ap.add_argument('--ylabel', default='GPU time, us (lower is better)')
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    key = list(rows[0].keys())[0]
    cols = a.columns.split(',')
    lines = [x for x in a.lines.split(',') if x]
    bars = [r for r in rows if r[key] not in lines]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(bars) + 2), 4.5))
    width = 0.8 / len(cols)
    for i, col in enumerate(cols):
        xs = [j + i * width for j, r in enumerate(bars) if r[col]]
        ys = [float(r[col]) for r in bars if r[col]]
        ax.bar(xs, ys, width, label=col, color=f'C{i}')
        for x, y in zip(xs, ys):
            ax.text(x, y, f'{y:.0f}', ha='center', va='bottom', fontsize=7)
        for k, r in enumerate(r for r in rows if r[key] in lines and r[col]):
            ax.axhline(float(r[col]), color=f'C{i}', linestyle=['--', ':', '-.'][k % 3], linewidth=1,
                       label=f'{r[key]} {col}')
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(bars))])
    ax.set_xticklabels([r[key] for r in bars], rotation=20)
    ax.set_ylabel(a.ylabel)
    ax.set_title(a.title, fontsize=9)
    ax.grid(True, axis='y', alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    print('wrote', a.png)


if __name__ == '__main__':
    main()
