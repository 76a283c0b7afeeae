#!/usr/bin/env bash
# Session 18 run 1. The daemon with the completion thread's hand-offs outside its mutex, the
# array part size computed once and the record's phase count taken in one pass (dn: b2d97a2 +
# those changes) against b2d97a2 (do), each with its own daemon, client library and benchmark,
# three rounds interleaved, fresh daemons: the synchronous latency and 32 clients corked. Run
# as `. .gpu/env.sh; bash docs/data/session18/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi -L > "$o/smi-L.txt" 2>&1
for round in 1 2 3; do
  for v in dn do; do
    BUILD=.exp/$v NO_TAR=1 timeout 100 bash bench/run-daemon-h200.sh "$o/$v-$round" 'lat:::--no-throughput' \
      'cork32:::--no-latency --cork --clients 32' > "$o/$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T): $(grep -E '^\| [0-9]' "$o/$v-$round.txt" | tr -s ' ' | tr '\n' ' ')"
  done
  pack
done
