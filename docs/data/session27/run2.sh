#!/usr/bin/env bash
# Session 27 run 2: the final build (00f24df, whose code this session leaves unchanged)
# measured again end to end, everything in one run: every reduction (count-if too) of every
# dtype from 2^10 to 2^28 against the read kernel, torch's reductions over the same sizes,
# the daemon (32 clients pipelining corked 1,024-element reduces, window 32, two fresh
# daemons; one synchronous client), 1 GiB in a client's shared memory through the client
# library (reduce, and scan into a second region), the engine's reduction tests on the H200,
# and the plots (run 1's and this run's), drawn here.
# Run as `. .gpu/env.sh; bash docs/data/session27/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s27b; mkdir -p $b; tar xJf .exp/s27b.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
timeout 280 $b/bench/vkreduce-bench --reduce-only --min-log2 10 --max-log2 28 --reps 20 --times \
  --csv "$o/reduce-all.csv" > "$o/reduce-all.txt" 2>&1
echo "reduce-all rc=$? $(date +%T) $(grep -c WRONG $o/reduce-all.txt) wrong"; pack
grep -E "^reduce" "$o/reduce-all.txt" | awk '$4 == "2^16" || $4 == "2^24" || $4 == "2^28" {print $2, $3, $4, $5, $NF}' | tr '\n' ';'; echo
timeout 150 python3 bench/torch_bench.py --kinds reduce --min-log2 10 --max-log2 28 --reps 10 \
  --csv "$o/torch-reduce.csv" > "$o/torch-reduce.txt" 2>&1; echo "torch rc=$? $(date +%T)"; pack
python3 docs/data/session27/plots.py "$o" "$o" > "$o/plot.txt" 2>&1; echo "plot rc=$? $(tail -2 $o/plot.txt)"; pack
cfgs=('cork32-a:::--no-latency --cork --clients 32' 'cork32-b:::--no-latency --cork --clients 32' 'lat:::--no-throughput')
BUILD=$b NO_TAR=1 timeout 100 bash bench/run-daemon-h200.sh "$o/daemon" "${cfgs[@]}" > "$o/daemon.txt" 2>&1
echo "daemon rc=$? $(date +%T)"; grep -E "^\| [0-9]|p50|p99" "$o/daemon.txt" | tr -s ' ' | head -12; pack
sock=/tmp/vkr-s27.sock; rm -f "$sock"
$b/daemon/vkreduced --socket "$sock" 2> "$o/daemon-shm.log" &
pid=$!
for _ in $(seq 600); do $b/client/vkreduce --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
timeout 60 $b/bench/vkreduce-shm-bench --socket "$sock" --mib 1024 --reps 10 > "$o/shm.txt" 2>&1
echo "shm rc=$? $(date +%T)"; cat "$o/shm.txt"; kill $pid; wait $pid; pack
timeout 60 python3 bench/torch_bench.py --kinds reduce --dtypes f32 --min-log2 10 --max-log2 10 --reps 5 --latency \
  > "$o/torch-latency.txt" 2>&1; echo "torch latency rc=$?"; grep -iE "item|host to device|device to host" "$o/torch-latency.txt"; pack
timeout 60 $b/test_kern_reduce > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(date +%T)"; tail -n 1 "$o/test_kern_reduce.txt"
kill $smi; pack
