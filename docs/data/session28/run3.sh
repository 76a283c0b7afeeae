#!/usr/bin/env bash
# Session 28 run 3: the final build: small jobs of more than 64 KiB (8-byte types above 8192
# elements) spread over a workgroup per 1024 vectors, one-part jobs folded with a constant
# stride as before (reduce.comp's SMALL_JOBS), against the build before (55c0a72), in one run:
# every reduction from 2^10 to 2^24 (the series' buffers of 2^24 keep the SM clock up in the
# warm-up, which run 1's 2^16 buffers did not), old / new, then old / new again for sums and
# count-if of f32, f64 and i64; the daemon of each build (32 clients pipelining corked
# 1,024-element reduces, and one synchronous client); the
# engine's reduction tests on the H200.
# Run as `. .gpu/env.sh; bash docs/data/session28/run3.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
for v in old new; do mkdir -p /tmp/s28$v; tar xJf .exp/s28$v.txz -C /tmp/s28$v; done
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
for v in old new; do
  timeout 200 /tmp/s28$v/bench/vkreduce-bench --reduce-only --min-log2 10 --max-log2 24 --reps 20 --times \
    --csv "$o/reduce-$v-1.csv" > "$o/reduce-$v-1.txt" 2>&1
  echo "reduce $v-1 rc=$? $(date +%T) $(grep -c WRONG $o/reduce-$v-1.txt) wrong"; pack
done
for v in old new; do
  timeout 80 /tmp/s28$v/bench/vkreduce-bench --reduce-only --ops sum,count --dtypes f32,f64,i64 --min-log2 10 --max-log2 24 \
    --reps 20 --times --csv "$o/reduce-$v-2.csv" > "$o/reduce-$v-2.txt" 2>&1
  echo "reduce $v-2 rc=$? $(date +%T) $(grep -c WRONG $o/reduce-$v-2.txt) wrong"; pack
done
cfgs=('cork32:::--no-latency --cork --clients 32' 'lat:::--no-throughput')
for v in old new; do
  BUILD=/tmp/s28$v NO_TAR=1 timeout 100 bash bench/run-daemon-h200.sh "$o/daemon-$v" "${cfgs[@]}" > "$o/daemon-$v.txt" 2>&1
  echo "daemon $v rc=$? $(date +%T)"; grep -E "^\| [0-9]|p50|p99" "$o/daemon-$v.txt" | tr -s ' ' | head -8; pack
done
timeout 90 /tmp/s28new/test_kern_reduce > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(date +%T)"; tail -n 1 "$o/test_kern_reduce.txt"
kill $smi; pack
