#!/usr/bin/env bash
# Session 21 run 2. The daemon of a833700 ("cur"): 32 clients pipelining corked 1,024-element
# reduces with windows of 8, 12, 16, 24 and 32 requests per client, two rounds, a fresh daemon
# per row, and one synchronous-latency row.
# Run as `. .gpu/env.sh; bash docs/data/session21/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
tar xJf .exp/bins.txz -C .exp
pack() { tar czf "$out/run.tgz" -C "$o" .; }
b=.exp/cur
for round in 1 2; do
  cfgs=()
  for w in 8 12 16 24 32; do cfgs+=("w$w:::--no-latency --cork --clients 32 --window $w"); done
  [ $round = 1 ] && cfgs+=('lat:::--no-throughput')
  BUILD=$b NO_TAR=1 timeout 150 bash bench/run-daemon-h200.sh "$o/daemon-$round" "${cfgs[@]}" > "$o/daemon-$round.txt" 2>&1
  echo "daemon $round rc=$? $(date +%T)"; grep -E "^\| [0-9]" "$o/daemon-$round.txt" | tr -s ' '; pack
done
