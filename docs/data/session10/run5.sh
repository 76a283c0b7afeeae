#!/usr/bin/env bash
# Session 10 run 5: scans of arrays in several buffers single-pass part after part (f32 and
# f64 sum, 2^28 to 2^30, device memory), the daemon's 1 and 4 GiB shared-memory scans beside
# the PCIe copies, the engine tests on this device, then every scan op of f32, f64 and i64 at 2^30.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
b=build-release
timeout 100 $b/bench/vkreduce-bench --scan-only --dtypes f32,f64 --ops sum --min-log2 28 --max-log2 30 --reps 5 \
  --csv "$o/scan.csv" > "$o/scan.txt" 2>&1; echo "scan rc=$?"
pack
sock=/tmp/vkr-s10.sock; rm -f "$sock"
$b/daemon/vkreduced --socket "$sock" 2> "$o/daemon.log" &
pid=$!
for _ in $(seq 1200); do $b/client/vkreduce --socket "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
for mib in 1024 4096 1024 4096; do
  timeout 40 $b/bench/vkreduce-shm-bench --socket "$sock" --mib $mib --reps 5 >> "$o/shm-$mib.txt" 2>&1; echo "shm $mib rc=$?"
done
timeout 40 $b/bench/vkreduce-bench --reduce-only --scan-only --pcie --max-log2 28 --reps 10 > "$o/pcie.txt" 2>&1; echo "pcie rc=$?"
kill $pid; wait $pid
pack
grep -h "^scan\|copy kernel" "$o/scan.txt"; cat "$o"/shm-*.txt; grep -i "pcie" "$o/pcie.txt"
for t in kern_reduce kern_scan; do timeout 90 $b/tests/test_$t > "$o/test_$t.txt" 2>&1; echo "test_$t rc=$?"; done
grep -h "several\|PASSED\|FAILED" "$o"/test_*.txt
pack
timeout 120 $b/bench/vkreduce-bench --scan-only --dtypes f32,f64,i64 --min-log2 30 --max-log2 30 --reps 3 \
  --csv "$o/scan30.csv" > "$o/scan30.txt" 2>&1; echo "scan30 rc=$?"
pack
grep -h "^scan\|copy kernel" "$o/scan30.txt"
