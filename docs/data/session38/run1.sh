#!/usr/bin/env bash
# Session 38 run 1: session 37's run 3, not run there (does PARK_ROWS, a specialization
# constant that is 0 by default, cost the scan_chained_rows build's default path as the blocked
# lanes' dead branch did in S37-2?): rev (ca1a5e1, HEAD) against nopark (the same with
# PARK_ROWS a plain constant 0: an uncommitted one-line patch), alternating, two rounds, sums
# and products of f64, i64 and f32 at 2^28 and exclusive f64, with VKR_PIPELINE_STATS=1;
# torch's cumsum and cumprod in the same run. Then session 37's pipeline pruning, never run on
# a GPU: test_kern_scan and test_client_e2e on rev, and one rev daemon's start log ("built N
# of M pipelines"), a lone client's latency and 32 corked clients' throughput.
# Run as `. .gpu/env.sh; bash docs/data/session38/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; o=/tmp/r1; mkdir -p $o
for v in rev nopark; do mkdir -p /tmp/$v; tar xJf .exp/s38$v.txz -C /tmp/$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
scan() { # name build dtypes extra...
  local name=$1 build=$2 dtypes=$3; shift 3
  VKR_PIPELINE_STATS=1 timeout 120 /tmp/$build/bench/vkreduce-bench --scan-only "$@" --ops sum,prod \
    --dtypes $dtypes --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$name.csv" > "$o/scan-$name.txt" 2>&1
  echo "$name rc=$? $(grep -c WRONG $o/scan-$name.txt) wrong: $(grep -E '^scan' $o/scan-$name.txt | awk '{print $2, $3, $5}' | tr '\n' ';')"
  pack
}
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader
for round in 1 2; do
  scan rev-$round rev f64,i64,f32
  scan nopark-$round nopark f64,i64,f32
done
scan rev-x rev f64 --exclusive
scan nopark-x nopark f64 --exclusive
grep -iE 'copy kernel' $o/scan-rev-1.txt | head -1
for b in rev nopark; do grep -E 'pipeline scan_chained_(f64|i64|f32)_(sum|prod)(_excl)? ' $o/scan-$b-1.txt $o/scan-$b-x.txt | awk -F'[][]' '{print $1, $3}' | cut -c1-160; done
timeout 150 python3 bench/torch_bench.py --kinds scan --dtypes f32,f64,i64 --min-log2 28 --max-log2 28 --reps 20 \
  --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1
echo "torch rc=$? $(grep -E 'cum' $o/torch-scan.txt | tr '\n' ';')"
pack
b=/tmp/rev
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
timeout 90 $b/tests/test_kern_scan > "$o/test_kern_scan.txt" 2>&1
echo "test_kern_scan rc=$? $(tail -n 1 $o/test_kern_scan.txt)"
VKREDUCED=$b/daemon/vkreduced timeout 90 $b/tests/test_client_e2e > "$o/test_client_e2e.txt" 2>&1
echo "test_client_e2e rc=$? $(tail -n 1 $o/test_client_e2e.txt)"
pack
cache=$(mktemp -d); sock=/tmp/vkr38.sock; rm -f $sock
t0=$(date +%s%N)
$b/daemon/vkreduced --log-level debug --socket $sock --state-dir $cache 2> "$o/daemon.log" &
pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket $sock ping >/dev/null 2>&1 && break; sleep 0.05; done
echo "daemon answered ping after $(( ($(date +%s%N) - t0) / 1000000 )) ms; $(grep -E 'built [0-9]+ of' $o/daemon.log)"
timeout 60 $b/bench/vkreduce-daemon-bench --socket $sock --no-throughput > "$o/lat.txt" 2>&1
echo "lat $(grep -A3 '^latency' $o/lat.txt | grep -E '^\| [0-9]') $(grep '^client:' $o/lat.txt)"
timeout 60 $b/bench/vkreduce-daemon-bench --socket $sock --no-latency --cork --clients 32 > "$o/tp.txt" 2>&1
echo "tp $(grep -E '^\| 32' $o/tp.txt)"
$b/client/vkreduce --socket $sock stats > "$o/stats.txt" 2>&1
kill $pid; wait $pid
rm -rf $cache; pack
