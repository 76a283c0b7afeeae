#!/usr/bin/env python3
"""Draws reduce-waves.csv (session 12, run S12-2): a reduction's time on one wave of workgroups
(1056 on the H200) over its time on two (2112), per op and dtype, against size.

    python3 docs/data/session12/plot_waves.py docs/data/session12/reduce-waves.csv out.png
"""
import csv
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    dtypes = sorted({r['dtype'] for r in rows})
    fig, axes = plt.subplots(1, len(dtypes), figsize=(5 * len(dtypes), 4.2), sharey=True)
    for ax, dtype in zip(axes, dtypes):
        for op in ('sum', 'max', 'count'):
            rs = sorted((r for r in rows if r['dtype'] == dtype and r['op'] == op), key=lambda r: int(r['n']))
            ax.plot([int(r['n']) for r in rs], [float(r['one_over_two']) for r in rs], 'o-', label=op)
        ax.axhline(1.0, color='gray', ls=':')
        ax.set_xscale('log', base=2)
        ax.set_xlabel('elements')
        ax.set_title(dtype)
        ax.grid(True, alpha=0.3)
        ax.legend()
    axes[0].set_ylabel('time on one wave / time on two (lower: one wave faster)')
    fig.suptitle('Reductions on the H200: 1056 workgroups against 2112, best of two rounds each (run S12-2)')
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == '__main__':
    main()
