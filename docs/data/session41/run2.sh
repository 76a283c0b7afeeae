#!/usr/bin/env bash
# Session 41 run 2: run S41-1 (session 40's run1.sh) lost its daemon A/B, because every
# client and bench line set LD_LIBRARY_PATH to the build's client/ alone, dropping the
# msgpack-c and libuv of .gpu/ (rc 127: libmsgpackc.so.2 not found). The same A/B again with
# the build's client/ put in front of the environment's path: the daemon of ca1a5e1 (base)
# against a8d2a98's (new), alternating, two rounds, one fresh daemon per build and round,
# 32 corked clients twice, then a lone client.
# Usage: `. .gpu/env.sh; bash docs/data/session41/run2.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}; o=/tmp/r2; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in base new; do mkdir -p /tmp/$v; tar xJf .exp/s40$v.txz -C /tmp/$v; done
env_path=$LD_LIBRARY_PATH
for round in 1 2; do
  for v in base new; do
    b=/tmp/$v; sock=/tmp/vkr41-$v.sock; st=$(mktemp -d)
    export LD_LIBRARY_PATH=$b/client:$env_path
    $b/daemon/vkreduced --socket $sock --state-dir $st 2> $o/daemon-$v-$round.log & pid=$!
    for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
    for i in 1 2; do
      timeout 40 $b/bench/vkreduce-daemon-bench --socket $sock --no-latency --cork --clients 32 \
        > $o/tp-$v-$round-$i.txt 2>&1
      echo "$v r$round tp$i rc=$? $(grep -E '^\| 32 ' $o/tp-$v-$round-$i.txt)"
    done
    timeout 40 $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput > $o/lat-$v-$round.txt 2>&1
    echo "$v r$round lat rc=$? $(grep -A2 'p50' $o/lat-$v-$round.txt | tail -1)"
    kill $pid; wait $pid
    tar czf $OUT/run2.tgz -C $o .
  done
done
