#!/usr/bin/env bash
# Session 34 run 5: the session's final build (d3bde3e: the host's fold by default, the NaN
# test once per invocation) end to end on the device it got: the daemon (32 clients
# pipelining corked 1,024-element reduces, window 32, two fresh daemons; one synchronous
# client), 1 GiB in a client's shared memory through the client library (reduce, and scan
# into a second region), torch's in-process latency and PCIe copies, then the sum and
# product scans of f32, f64 and i64 at 2^28 beside torch, and test_kern_scan last.
# .exp/s34final.txz holds the build (packed by hand from build-release: bench/vkreduce-bench,
# bench/vkreduce-daemon-bench, bench/vkreduce-shm-bench, tests/test_kern_scan, client/vkreduce,
# daemon/vkreduced, client/libvkreduce.so*).
# Run as `. .gpu/env.sh; bash docs/data/session34/run5.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/final; mkdir -p $b; tar xJf .exp/s34final.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
cfgs=('cork32-a:::--no-latency --cork --clients 32' 'cork32-b:::--no-latency --cork --clients 32' 'lat:::--no-throughput')
BUILD=$b NO_TAR=1 timeout 150 bash bench/run-daemon-h200.sh "$o/daemon" "${cfgs[@]}" > "$o/daemon.txt" 2>&1
echo "daemon rc=$? $(date +%T)"; pack
sock=/tmp/vkr-s34.sock; rm -f "$sock"
$b/daemon/vkreduced --socket "$sock" 2> "$o/daemon-shm.log" &
pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
timeout 60 $b/bench/vkreduce-shm-bench --socket "$sock" --mib 1024 --reps 10 > "$o/shm.txt" 2>&1
echo "shm rc=$? $(date +%T)"; kill $pid; wait $pid; pack
timeout 60 python3 bench/torch_bench.py --kinds reduce --dtypes f32 --min-log2 10 --max-log2 10 --reps 5 --latency \
  > "$o/torch-latency.txt" 2>&1; echo "torch latency rc=$? $(date +%T)"; pack
timeout 150 $b/bench/vkreduce-bench --scan-only --ops sum,prod --dtypes f32,f64,i64 --min-log2 28 --max-log2 28 \
  --reps 20 --csv "$o/scan.csv" > "$o/scan.txt" 2>&1; echo "scan rc=$? $(date +%T)"; pack
timeout 100 python3 bench/torch_bench.py --kinds scan --dtypes f32,f64,i64 --min-log2 28 --max-log2 28 --reps 20 \
  --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1; echo "torch scan rc=$? $(date +%T)"; pack
timeout 120 $b/tests/test_kern_scan > "$o/test_kern_scan.txt" 2>&1; echo "test_kern_scan rc=$? $(date +%T)"; pack
