#!/usr/bin/env bash
# Session 10 run 2: reductions of the 64-bit dtypes from 2^24 to 2^30 (2^29 in two 2 GiB
# buffers, 2^30 in four); f32 and f64 sum scans at 2^28 to 2^30 (in parts past one buffer:
# reduce-then-scan); the daemon on 1 GiB and 4 GiB of shared memory (4 GiB: regions imported
# in two pieces) beside the PCIe copies; the plot of run 1 and this run's reductions.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
b=build-release
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 500 > "$o/smi.csv" 2>&1 &
smi=$!
for d in f64 i64 u64; do
  timeout 110 $b/bench/vkreduce-bench --reduce-only --dtypes $d --min-log2 24 --max-log2 30 --reps 10 \
    --csv "$o/vkr-$d.csv" > "$o/vkr-$d.txt" 2>&1; echo "vkr $d rc=$? wrong=$(grep -c WRONG "$o/vkr-$d.txt")"
  pack
done
timeout 100 $b/bench/vkreduce-bench --scan-only --dtypes f32,f64 --ops sum --min-log2 28 --max-log2 30 --reps 5 \
  --csv "$o/scan.csv" > "$o/scan.txt" 2>&1; echo "scan rc=$?"
pack
sock=/tmp/vkr-s10.sock; rm -f "$sock"
$b/daemon/vkreduced --socket "$sock" 2> "$o/daemon.log" &
pid=$!
for _ in $(seq 1200); do $b/client/vkreduce --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
for mib in 1024 4096; do
  timeout 60 $b/bench/vkreduce-shm-bench --socket "$sock" --mib $mib --reps 5 > "$o/shm-$mib.txt" 2>&1; echo "shm $mib rc=$?"
done
timeout 60 $b/bench/vkreduce-bench --reduce-only --scan-only --pcie --max-log2 28 --reps 10 > "$o/pcie.txt" 2>&1; echo "pcie rc=$?"
$b/client/vkreduce --socket "$sock" stats > "$o/stats.txt" 2>&1
kill $pid; wait $pid
kill $smi
pack
{ head -1 .exp/s10/vkr-f32.csv; for f in .exp/s10/vkr-*.csv "$o"/vkr-*.csv; do tail -n +2 "$f"; done; } > "$o/vkr-all.csv"
timeout 60 python3 bench/plot_bench.py "$o/vkr-all.csv" .exp/s10/torch.csv "$o/plots"; echo "plot rc=$?"
pack
grep -h "copy kernel\|^reduce.*2^30\|skipped" "$o"/vkr-*.txt; grep -h "^scan\|copy kernel" "$o/scan.txt"
cat "$o"/shm-*.txt; grep -i "host\|GB/s" "$o/pcie.txt" | head -20; grep -i "dedicated\|imported" "$o/stats.txt"
