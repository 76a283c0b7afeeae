#!/usr/bin/env bash
# Session 9 run 1: the packed 64-bit look-back probe beside HEAD, torch; PCIe copies on two queues.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 200 > "$o/smi.csv" 2>&1 &
smi=$!
b=build-release/bench/vkreduce-bench
p=.exp/bins/packed64/vkreduce-bench
args="--scan-only --dtypes f64,i64,u64 --ops sum,prod,min,max --min-log2 28 --max-log2 28 --reps 10 --times"
timeout 120 env VKR_SCAN=single-pass $p $args --csv "$o/packed-sp.csv" > "$o/packed-sp.txt" 2>&1; echo "packed-sp rc=$?"
timeout 120 env VKR_SCAN=single-pass $b $args --csv "$o/head-sp.csv" > "$o/head-sp.txt" 2>&1; echo "head-sp rc=$?"
timeout 120 $b $args --csv "$o/head-default.csv" > "$o/head-default.txt" 2>&1; echo "head-default rc=$?"
timeout 120 env VKR_SCAN=single-pass $p $args --csv "$o/packed-sp2.csv" > "$o/packed-sp2.txt" 2>&1; echo "packed-sp2 rc=$?"
timeout 100 env VKR_SCAN=single-pass $p --scan-only --dtypes f64,i64,u64 --ops sum,prod,min,max --min-log2 24 --max-log2 24 --reps 3 > "$o/packed-check.txt" 2>&1
echo "packed check rc=$? wrong=$(grep -c WRONG "$o/packed-check.txt")"
timeout 120 python3 bench/torch_bench.py --min-log2 28 --max-log2 28 --dtypes f64,i64 --reps 10 --cummin-max-log2 10 --csv "$o/torch.csv" > "$o/torch.txt" 2>&1; echo "torch rc=$?"
timeout 120 .exp/pcie/pcie2q 1024 > "$o/pcie2q.txt" 2>&1; echo "pcie2q rc=$?"
kill $smi
for f in packed-sp head-sp head-default packed-sp2; do echo "== $f"; grep -E "^scan|copy kernel" "$o/$f.txt"; done
grep -E "scan|copy" "$o/torch.txt"; cat "$o/pcie2q.txt"
tar czf "$out/run.tgz" -C "$o" . && rm -rf "$o"
