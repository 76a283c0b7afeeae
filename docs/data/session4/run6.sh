#!/usr/bin/env bash
# Session 4, run 6: tiles moved through shared memory with coalesced global accesses.
#  v1: single-pass, no stage (run 5); v7: single-pass, every whole tile staged; v8: v7 without
#  look-back (timing probe); v9: reduce-then-scan with coalesced loads in both passes and
#  staged tiles in the apply pass; rts: HEAD's reduce-then-scan.
set -u
O=${1:?}; o=$(mktemp -d)
sb() { local name=$1 bin=$2 algo=$3
  VKR_SCAN=$algo $bin --scan-only --ops sum,max --dtypes f32,i32,f64,i64 --min-log2 27 --max-log2 28 --reps 10 > $o/$name.txt 2>&1
  echo "$name rc=$? $(grep -E '^scan +(sum|max) +[a-z0-9]+ +2\^28' $o/$name.txt | awk '{printf "%s/%s %s  ", $2, $3, $5}')"; }
sb rts build-release/bench/vkreduce-bench reduce-then-scan
sb v9 .exp/bench-v9 reduce-then-scan
sb v7 .exp/bench-v7 single-pass
sb v8 .exp/bench-v8 single-pass
sb v1 .exp/bench-v1 single-pass
sb v9-again .exp/bench-v9 reduce-then-scan
tar czf $O/run6.tgz -C $o .
