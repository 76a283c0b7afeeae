#!/usr/bin/env bash
# Session 40 run 1 (session 39's run 3, which no machine was left for): copies on two queues at once (vkreduce-bench --pcie's queue rows); then,
# did session 38's daemon changes cost throughput or p99? The daemon of ca1a5e1 (base: what
# S38-4 measured on an H200, 2.10 M req/s, p99 0.71 ms) against session 39's last (new: a8d2a98, session 39's last plus
# the staged pipeline on queues in the bench), alternating, two rounds, one fresh daemon
# per build and round: 32 corked clients twice, then a lone client (cut from three times to
# fit the device time left).
# Usage: `. .gpu/env.sh; bash docs/data/session40/run1.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}; o=/tmp/r1; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in base new; do mkdir -p /tmp/$v; tar xJf .exp/s40$v.txz -C /tmp/$v; done
# First, copies on queues of their own (new's bench): can two queues overlap the directions?
timeout 180 /tmp/new/bench/vkreduce-bench --reduce-only --scan-only --pcie --reps 10 > $o/pcie.txt 2>&1
echo "pcie rc=$?"; grep -E '^pcie (queue|staged on|host to host|host to device \+)' $o/pcie.txt
tar czf $OUT/run1.tgz -C $o .
for round in 1 2; do
  for v in base new; do
    b=/tmp/$v; sock=/tmp/vkr40-$v.sock; st=$(mktemp -d)
    LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH $b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon-$v-$round.log & pid=$!
    for _ in $(seq 600); do LD_LIBRARY_PATH=$b/client $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
    for i in 1 2; do
      LD_LIBRARY_PATH=$b/client timeout 40 $b/bench/vkreduce-daemon-bench --socket $sock --no-latency --cork --clients 32 \
        > $o/tp-$v-$round-$i.txt 2>&1
      echo "$v r$round tp$i rc=$? $(grep -E '^\| 32 ' $o/tp-$v-$round-$i.txt)"
    done
    LD_LIBRARY_PATH=$b/client timeout 40 $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput > $o/lat-$v-$round.txt 2>&1
    echo "$v r$round lat rc=$? $(grep -A2 'p50' $o/lat-$v-$round.txt | tail -1)"
    kill $pid; wait $pid
    tar czf $OUT/run1.tgz -C $o .
  done
done
# Last, torch's in-process x.sum().item() beside the lone client, and f64 min at 2^24 three
# times (0.949 of read on the H200 in S38-3, 0.96-0.98 on S39's H100).
timeout 120 python3 bench/torch_bench.py --latency --kinds reduce --dtypes f32 --min-log2 10 --max-log2 10 --reps 20 \
  > $o/torch-latency.txt 2>&1
echo "torch rc=$?"; grep -E 'item' $o/torch-latency.txt
for i in 1 2 3; do
  timeout 100 /tmp/new/bench/vkreduce-bench --reduce-only --ops sum,min,max --dtypes f64,i64 --min-log2 24 \
    --max-log2 24 --reps 50 --csv $o/minmax-$i.csv > $o/minmax-$i.txt 2>&1
  echo "minmax $i rc=$? $(grep -c WRONG $o/minmax-$i.txt) wrong"; grep -E '^reduce ' $o/minmax-$i.txt
done
tar czf $OUT/run1.tgz -C $o .
