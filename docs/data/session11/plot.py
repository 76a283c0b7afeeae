#!/usr/bin/env python3
"""Draws reduce-one-dispatch.csv (session 11, run S11-1): per dtype, the time of a sum by one
dispatch and by two passes and torch.sum's against size (left), and each op's rate as a share
of the copy kernel moving the same bytes in the same run (right).

    python3 docs/data/session11/plot.py docs/data/session11/reduce-one-dispatch.csv out.png
"""
import csv
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    for i, dtype in enumerate(('f32', 'f64')):
        sums = sorted((r for r in rows if r['dtype'] == dtype and r['op'] == 'sum'), key=lambda r: int(r['n']))
        n = [int(r['n']) for r in sums]
        ax = axes[i][0]
        ax.plot(n, [float(r['one_min_us']) for r in sums], 'o-', label='one dispatch (best of 2 rounds)')
        ax.plot(n, [float(r['two_min_us']) for r in sums], 's--', label='two passes (best of 2 rounds)')
        ax.plot(n, [float(r['torch_us']) for r in sums], '^:', label='torch.sum (same run)')
        ax.set_xscale('log', base=2)
        ax.set_yscale('log')
        ax.set_xlabel('elements')
        ax.set_ylabel('GPU time, us (lower is better)')
        ax.set_title(f'{dtype} sum')
        ax.grid(True, which='both', alpha=0.3)
        ax.legend()
        ax = axes[i][1]
        for op in ('sum', 'prod', 'min', 'max', 'count'):
            rs = sorted((r for r in rows if r['dtype'] == dtype and r['op'] == op), key=lambda r: int(r['n']))
            ax.plot([int(r['n']) for r in rs], [float(r['one_of_same_size_copy']) for r in rs], 'o-', ms=3, label=op)
        ax.axhline(0.95, color='gray', ls=':', label='0.95')
        ax.set_xscale('log', base=2)
        ax.set_xlabel('elements')
        ax.set_ylabel('rate / copy kernel moving the same bytes')
        ax.set_title(f'{dtype}, one dispatch, against the copy kernel')
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle('Reductions in one dispatch on the H200 (run S11-1)')
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == '__main__':
    main()
