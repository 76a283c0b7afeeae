#!/usr/bin/env python3
"""Plots vkreduce-bench and torch_bench.py CSVs side by side: one PNG per kind (reduce,
scan), a panel per op, bandwidth against size for each dtype, with the copy ceiling.

    python3 bench/plot_bench.py vkreduce.csv torch.csv OUTDIR
"""
import csv
import os
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    rows = list(csv.DictReader(open(path)))
    copy = next((float(r['gbs']) for r in rows if r['kind'] == 'copy'), None)
    return [r for r in rows if r['kind'] != 'copy'], copy


def main():
    vk, vk_copy = load(sys.argv[1])
    th, th_copy = load(sys.argv[2])
    outdir = sys.argv[3]
    os.makedirs(outdir, exist_ok=True)
    for kind, ops in (('reduce', ['sum', 'prod', 'min', 'max', 'count']), ('scan', ['sum', 'prod', 'min', 'max'])):
        if not any(r['kind'] == kind for r in vk):
            continue  # a run of one kind only (--scan-only or --reduce-only)
        fig, axes = plt.subplots(1, len(ops), figsize=(5 * len(ops), 4.5), sharey=True)
        for ax, op in zip(axes, ops):
            for i, dtype in enumerate(['f32', 'f64', 'i32', 'u32', 'i64', 'u64']):
                color = f'C{i}'
                for rows, style, who in ((vk, '-', 'vkreduce'), (th, '--', 'torch')):
                    pts = [(int(r['n']), float(r['gbs'])) for r in rows
                           if r['kind'] == kind and r['op'] == op and r['dtype'] == dtype]
                    if pts:
                        ax.plot(*zip(*sorted(pts)), style, color=color, label=f'{who} {dtype}')
            for copy, style in ((vk_copy, ':'), (th_copy, '-.')):
                if copy:
                    ax.axhline(copy, color='gray', linestyle=style, linewidth=1)
            ax.set_xscale('log', base=2)
            ax.set_title(f'{kind} {op}')
            ax.set_xlabel('elements')
            ax.grid(True, alpha=0.3)
        axes[0].set_ylabel('GB/s (reduce: n*size; scan: 2*n*size)')
        axes[-1].legend(fontsize=7, ncol=2)
        fig.suptitle(f'vkreduce (solid) vs torch (dashed); gray: copy bandwidth (vulkan dotted, torch dash-dot)')
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, f'{kind}.png'), dpi=110)
        print('wrote', os.path.join(outdir, f'{kind}.png'))


if __name__ == '__main__':
    main()
