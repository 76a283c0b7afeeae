#!/usr/bin/env python3
"""Session 13: reductions against the read kernel over the same bytes (run S13-1), by size.

    python3 docs/data/session13/plot_read.py docs/data/session13/run1/reduce-read.csv docs/plots/reduce-read.png
"""
import csv
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1])))
fig, ax = plt.subplots(figsize=(8, 4.5))
for dtype in ['f32', 'i32', 'f64']:
    for op in ['sum', 'max']:
        pts = [(int(r['n']).bit_length() - 1, float(r['of_read_same_bytes'])) for r in rows
               if r['kind'] == 'reduce' and r['dtype'] == dtype and r['op'] == op]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o', label=f'{op} {dtype}')
ax.axhline(0.95, color='grey', linestyle='--', linewidth=1, label='0.95 (issue 6)')
ax.set_xlabel('elements, log2')
ax.set_ylabel('reduction rate / read kernel rate, same bytes')
ax.set_title('H200, run S13-1: reductions against the device\'s read bandwidth at their size')
ax.set_ylim(0.6, 1.02)
ax.grid(True, alpha=0.3)
ax.legend(fontsize=8, ncol=2)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
