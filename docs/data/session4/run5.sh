#!/usr/bin/env bash
# Session 4, run 5: what limits the single-pass scan's tile pass (all without the stage).
#  v1: the single-pass scan; v2: no look-back; d2: no look-back, no tile scan (blocked slots);
#  d3: no look-back, no tile scan, coalesced vectors; v5: one vector per slot (coalesced),
#  v6: v5 without look-back. Only v1 and v5 compute scans; the others are timing probes.
set -u
O=${1:?}; o=$(mktemp -d)
for v in v1 v2 d2 d3 v5 v6; do
  VKR_SCAN=single-pass .exp/bench-$v --scan-only --ops sum,max --dtypes f32,i32,f64 --min-log2 26 --max-log2 28 --reps 10 > $o/$v.txt 2>&1
  echo "$v rc=$? $(grep -E '^scan +(sum|max) +(f32|i32|f64) +2\^28' $o/$v.txt | awk '{printf "%s/%s %s  ", $2, $3, $5}')"
done
VKR_SCAN=reduce-then-scan build-release/bench/vkreduce-bench --scan-only --ops sum,max --dtypes f32,i32,f64 --min-log2 28 --max-log2 28 --reps 10 > $o/rts.txt 2>&1
echo "rts $(grep -E '^scan' $o/rts.txt | awk '{printf "%s/%s %s  ", $2, $3, $5}')"
tar czf $O/run5.tgz -C $o .
