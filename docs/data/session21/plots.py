#!/usr/bin/env python3
"""Session 21's plots from runs S21-1 and S21-2 (made on the GPU machine, where matplotlib is):
reduce-s21.png, sums of i64 and u64 by an atomic add against partials, as a share of the read
kernel over the same bytes; daemon-s21.png, 32 corked clients' requests per second and p99
against the window per client.

    python3 docs/data/session21/plots.py docs/data/session21 OUTDIR
"""
import csv
import re
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402


def reduce_plot(data, out):
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for mode, style in (('atomics', '-'), ('partials', '--')):
        for rnd in (1, 2):
            rows = list(csv.DictReader(open(f'{data}/run1/sum64-{mode}-{rnd}.csv')))
            for dt, color in (('i64', 'C0'), ('u64', 'C1')):
                pts = [(int(r['n']), float(r['of_read_same_bytes'])) for r in rows
                       if r['kind'] == 'reduce' and r['dtype'] == dt]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, marker='o',
                        markersize=3, label=f'{dt} sum, {mode}' if rnd == 1 else None)
    ax.axhline(0.95, color='grey', linewidth=0.8, linestyle=':')
    ax.set_xscale('log', base=2)
    ax.set_xlabel('elements')
    ax.set_ylabel('of the read kernel over the same bytes')
    ax.set_title('i64/u64 sums on the H200, run S21-1: by an atomic add (a833700) against partials,\n'
                 'the same binary, two rounds each')
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def daemon_plot(data, out):
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax2 = ax.twinx()
    for rnd, marker in ((1, 'o'), (2, 's')):
        text = open(f'{data}/run2/daemon-{rnd}.txt').read()
        rows = re.findall(r'== w(\d+):.*?\n\| 32 \| (\d+) \| [\d.]+ \| \d+ \| (\d+) \|', text, re.S)
        ws = [int(r[0]) for r in rows]
        ax.plot(ws, [int(r[1]) / 1e6 for r in rows], color='C0', marker=marker,
                label=f'requests/s, round {rnd}')
        ax2.plot(ws, [int(r[2]) / 1e3 for r in rows], color='C3', marker=marker, linestyle='--',
                 label=f'p99, round {rnd}')
    ax.axhline(1.0, color='C0', linewidth=0.8, linestyle=':')
    ax2.axhline(1.0, color='C3', linewidth=0.8, linestyle=':')
    ax.set_xlabel('requests in flight per client (window)')
    ax.set_ylabel('M requests/s (32 clients, corked)', color='C0')
    ax2.set_ylabel('p99 latency, ms', color='C3')
    ax.set_ylim(0, 2.5)
    ax2.set_ylim(0, 1.2)
    ax.set_title('The daemon on the H200, run S21-2 (a833700): 1,024-element f32 reduces')
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc='lower right', fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == '__main__':
    data, outdir = sys.argv[1], sys.argv[2]
    reduce_plot(data, f'{outdir}/reduce-s21.png')
    daemon_plot(data, f'{outdir}/daemon-s21.png')
