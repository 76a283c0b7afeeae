#!/usr/bin/env bash
# Session 18 run 2. The final build's daemon (dn) against b2d97a2's (do), each with its own
# daemon, client library and benchmark, three rounds interleaved with b2d97a2 first (run 1 had
# dn first), fresh daemons: the synchronous latency, 32 clients corked and not; torch's
# in-process x.sum().item() loop in the same run; the plot (plot_s18.py, drawn here). Run as
# `. .gpu/env.sh; bash docs/data/session18/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for round in 1 2 3; do
  for v in do dn; do
    BUILD=.exp/$v NO_TAR=1 timeout 100 bash bench/run-daemon-h200.sh "$o/$v-$round" 'lat:::--no-throughput' \
      'cork32:::--no-latency --cork --clients 32' 'plain32:::--no-latency --clients 32' > "$o/$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T): $(grep -E '^\| [0-9]' "$o/$v-$round.txt" | tr -s ' ' | tr '\n' ' ')"
  done
  pack
done
timeout 60 python3 bench/torch_bench.py --latency --kinds reduce --min-log2 10 --max-log2 10 > "$o/torch-latency.txt" 2>&1
echo "torch latency rc=$?"; tail -3 "$o/torch-latency.txt"
python3 docs/data/session18/plot_s18.py "$o" "$o/daemon-s18.png"; echo "plot rc=$?"
pack
