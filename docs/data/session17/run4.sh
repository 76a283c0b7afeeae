#!/usr/bin/env bash
# Session 17 run 4. The final build (2208a9d's kernels; build-release's binaries in .exp/: the
# kernel benchmark, and the daemon, client and daemon benchmark under .exp/dr): every scan op
# and dtype at 2^28 with torch's cumsum/cumprod over the same arrays; the daemon's latency and
# throughput (bench/run-daemon-h200.sh: two fresh daemons by default, one corked) and torch's
# in-process x.sum().item() loop. Run as `. .gpu/env.sh; bash docs/data/session17/run4.sh $OUT`
# with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
timeout 150 .exp/vkreduce-bench-A --scan-only --min-log2 28 --max-log2 28 --reps 20 \
  --csv "$o/scan.csv" > "$o/scan.txt" 2>&1
echo "scan rc=$? $(date +%T) $(grep -c WRONG $o/scan.txt) wrong"; pack
timeout 120 python3 bench/torch_bench.py --kinds scan --min-log2 28 --max-log2 28 --reps 20 \
  --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1; echo "torch scan rc=$? $(date +%T)"; pack
grep -E "^scan" "$o/scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
grep -E "^scan" "$o/torch-scan.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
BUILD=.exp/dr NO_TAR=1 timeout 200 bash bench/run-daemon-h200.sh "$o/daemon" 'default:::' 'default-again:::' \
  'corked:::--cork --no-latency' > "$o/daemon.txt" 2>&1; echo "daemon rc=$? $(date +%T)"; pack
grep -E "p50|req/s|clients" "$o/daemon.txt" | head -30
timeout 60 python3 bench/torch_bench.py --latency --kinds reduce --min-log2 10 --max-log2 10 > "$o/torch-latency.txt" 2>&1
echo "torch latency rc=$?"; tail -3 "$o/torch-latency.txt"; pack
