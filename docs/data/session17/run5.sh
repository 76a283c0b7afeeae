#!/usr/bin/env bash
# Session 17 run 5. Run 4's daemon rows were below earlier sessions' (32 clients corked 1.45 M
# req/s, p99 1.31 ms, against 1.67 M and 0.97 ms in S8-2): the final build (.exp/dr, 2208a9d)
# against 211466a (.exp/do, before arrays in several buffers changed the batch path in session
# 10), each with its own daemon, client library and benchmark, two rounds interleaved, fresh
# daemons: the synchronous latency, 32 clients corked and not. Run as `. .gpu/env.sh; bash
# docs/data/session17/run5.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for round in 1 2; do
  for v in dr do; do
    BUILD=.exp/$v NO_TAR=1 timeout 100 bash bench/run-daemon-h200.sh "$o/$v-$round" 'lat:::--no-throughput' \
      'cork32:::--no-latency --cork --clients 32' 'plain32:::--no-latency --clients 32' > "$o/$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T): $(grep -E '^\| [0-9]' "$o/$v-$round.txt" | tr -s ' ' | tr '\n' ' ')"
  done
  pack
done
