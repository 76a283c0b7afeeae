#!/usr/bin/env python3
"""Summarises the timeline probe's dumps (tl-OP-DTYPE-K.bin, written by the probe build of
vkreduce-bench with VKR_TIMELINE_DIR set): per workgroup of the last timed run, lid 0's
realtime clock (ns) at the kernel's start (t0), after its strided fold (t1), after its
workgroup tree (t2), after its arrival (t3) and, for the last workgroup, after its fold of
the partials (t4) and at the end (t5); the read kernel's workgroups at start and after the
loop, over the same array. Usage: timeline.py DIR..."""
import glob, os, struct, sys

def load(path):
    d = open(path, 'rb').read()
    def region(base, fields):
        wgs = []
        for wg in range(4096):
            v = [struct.unpack_from('<Q', d, base + (wg * 8 + k) * 8)[0] for k in range(fields)]
            if v[0] == 0:
                break
            wgs.append(v)
        return wgs
    ticks = struct.unpack_from('<4Q', d, 2 * 4096 * 64) if len(d) >= 2 * 4096 * 64 + 32 else (0, 0, 0, 0)
    return region(0, 6), region(4096 * 64, 2), ticks

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]

def row(name, xs):
    return f"{name:>22}: min {min(xs)/1e3:6.2f}  p50 {pct(xs,50)/1e3:6.2f}  p90 {pct(xs,90)/1e3:6.2f}  max {max(xs)/1e3:6.2f} us"

for d in sys.argv[1:]:
    for path in sorted(glob.glob(os.path.join(d, 'tl-*.bin')), key=lambda p: (p.split('-')[1:3], int(p.split('-')[-1][:-4]))):
        red, rd, ticks = load(path)
        if not red:
            continue
        print(f"== {os.path.basename(path)}: {len(red)} reduce workgroups, {len(rd)} read")
        s = min(w[0] for w in red)
        end = max(max(w[3] for w in red), max(w[5] for w in red))
        # The command buffer's timestamps (the last timed run's), where they share the
        # shaders' clock: how long before the first workgroup starts and after the last ends.
        if ticks[0] and ticks[0] <= s <= end <= ticks[1]:
            print(f"{'reduce timestamps':>22}: {(ticks[1]-ticks[0])/1e3:.2f} us; first start +{(s-ticks[0])/1e3:.2f}, "
                  f"last end {(end-s)/1e3:.2f}, then +{(ticks[1]-end)/1e3:.2f} to the end timestamp")
        if rd and ticks[2] and ticks[2] <= min(w[0] for w in rd) <= max(w[1] for w in rd) <= ticks[3]:
            r0, r1 = min(w[0] for w in rd), max(w[1] for w in rd)
            print(f"{'read timestamps':>22}: {(ticks[3]-ticks[2])/1e3:.2f} us; first start +{(r0-ticks[2])/1e3:.2f}, "
                  f"last end {(r1-r0)/1e3:.2f}, then +{(ticks[3]-r1)/1e3:.2f} to the end timestamp")
        last = [w for w in red if w[4]]
        print(row("reduce start", [w[0] - s for w in red]))
        print(row("fold (t1-t0)", [w[1] - w[0] for w in red]))
        print(row("fold done (t1)", [w[1] - s for w in red]))
        print(row("tree (t2-t1)", [w[2] - w[1] for w in red]))
        print(row("arrival (t3-t2)", [w[3] - w[2] for w in red]))
        print(row("arrived (t3)", [w[3] - s for w in red]))
        for w in last:
            print(f"{'last workgroup':>22}: started {(w[0]-s)/1e3:.2f}, fold done {(w[1]-s)/1e3:.2f}, arrived {(w[3]-s)/1e3:.2f}, "
                  f"partials folded {(w[4]-s)/1e3:.2f} (+{(w[4]-w[3])/1e3:.2f}), end {(w[5]-s)/1e3:.2f} (+{(w[5]-w[4])/1e3:.2f}) us")
        if rd:
            r0 = min(w[0] for w in rd)
            print(row("read start", [w[0] - r0 for w in rd]))
            print(row("read loop (t1-t0)", [w[1] - w[0] for w in rd]))
            print(row("read done (t1)", [w[1] - r0 for w in rd]))
