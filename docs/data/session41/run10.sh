#!/usr/bin/env bash
# Session 41 run 10: the 1 GiB shm scan and reduce end to end on a default daemon and on one
# whose threads poll up to 40 ms (VKR_WAIT_SPIN_US=40000 VKR_LOOP_SPIN_US=40000), alternating,
# two rounds (.exp/s41stats.txz, as run 7's).
OUT=${1:?}; o=/tmp/r10; mkdir -p $o
b=/tmp/stats; mkdir -p $b; tar xJf .exp/s41stats.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
for round in 1 2; do
  for cfg in default spin; do
    sock=/tmp/vkr41-$cfg.sock; st=$(mktemp -d)
    if [ $cfg = spin ]; then export VKR_WAIT_SPIN_US=40000 VKR_LOOP_SPIN_US=40000; fi
    $b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon-$cfg-$round.log & pid=$!
    unset VKR_WAIT_SPIN_US VKR_LOOP_SPIN_US
    for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
    timeout 60 $b/bench/vkreduce-shm-bench --socket $sock --mib 1024 --reps 10 > $o/$cfg-$round.txt 2>&1
    echo "$cfg r$round: $(grep -o 'median [0-9.]* ms, [0-9.]* GB/s' $o/$cfg-$round.txt | tr '\n' ' ')"
    kill $pid; wait $pid
  done
done
tar czf $OUT/run10.tgz -C $o .
