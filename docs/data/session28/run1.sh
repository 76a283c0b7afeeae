#!/usr/bin/env bash
# Session 28 run 1: small jobs (reductions of at most 16384 elements, one workgroup each) with
# eight loads ahead in pipelines of their own (reduce.comp's SMALL_JOBS), against the build
# before (55c0a72), in the same run: every reduction from 2^10 to 2^16 (the small path ends at
# 2^14), old / new / old / new for the ops the change moves most; the driver's registers of
# the new pipelines; the daemon (32 clients pipelining corked 1,024-element reduces, and one
# synchronous client) of each build; one 2^28 scan series timed on the host (threaded inputs
# and checks since session 27); the engine's reduction tests on the H200.
# Run as `. .gpu/env.sh; bash docs/data/session28/run1.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for v in old new; do mkdir -p /tmp/s28$v; tar xJf .exp/s28$v.txz -C /tmp/s28$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
for v in old new; do
  timeout 150 /tmp/s28$v/bench/vkreduce-bench --reduce-only --min-log2 10 --max-log2 16 --reps 20 --times \
    --csv "$o/small-$v-1.csv" > "$o/small-$v-1.txt" 2>&1
  echo "small $v-1 rc=$? $(date +%T) $(grep -c WRONG $o/small-$v-1.txt) wrong"; pack
done
for v in old new; do
  timeout 60 /tmp/s28$v/bench/vkreduce-bench --reduce-only --ops sum,count --dtypes f32,f64,i64 --min-log2 12 --max-log2 15 \
    --reps 20 --csv "$o/small-$v-2.csv" > "$o/small-$v-2.txt" 2>&1
  echo "small $v-2 rc=$? $(date +%T) $(grep -c WRONG $o/small-$v-2.txt) wrong"; pack
done
sock=/tmp/vkr-s28.sock; rm -f "$sock"
VKR_PIPELINE_STATS=1 /tmp/s28new/daemon/vkreduced --socket "$sock" 2> "$o/stats-new.log" &
pid=$!
for _ in $(seq 600); do /tmp/s28new/client/vkreduce --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
kill $pid; wait $pid; grep -iE "reduce_(f32|f64)_sum|count_f64" "$o/stats-new.log" | head -20; pack
cfgs=('cork32:::--no-latency --cork --clients 32' 'lat:::--no-throughput')
for v in old new; do
  BUILD=/tmp/s28$v NO_TAR=1 timeout 80 bash bench/run-daemon-h200.sh "$o/daemon-$v" "${cfgs[@]}" > "$o/daemon-$v.txt" 2>&1
  echo "daemon $v rc=$? $(date +%T)"; grep -E "^\| [0-9]|p50|p99" "$o/daemon-$v.txt" | tr -s ' ' | head -8; pack
done
s=$(date +%s%N)
timeout 60 /tmp/s28new/bench/vkreduce-bench --scan-only --ops sum --dtypes f32 --min-log2 28 --max-log2 28 --reps 20 \
  > "$o/scan-series.txt" 2>&1
echo "scan series rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms $(grep -c WRONG $o/scan-series.txt) wrong"; tail -3 "$o/scan-series.txt"; pack
timeout 90 /tmp/s28new/test_kern_reduce > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(date +%T)"; tail -n 1 "$o/test_kern_reduce.txt"
kill $smi; pack
