#!/usr/bin/env bash
# Session 42 run 3, for an H200 only (issue 6's figures are the H200's): its three kernel
# misses measured again beside torch in the same run, with this build: f64 min (and max,
# sum) at 2^24 against the read kernel (S38-3: 0.949, 0.955, 0.98); the scans of f64 and
# i64 at 2^28, sum and prod, against torch.cumsum/cumprod and the copy kernel (S38-2:
# 1.19x, prod of i64 1.09x); then run 2 (pages and patience) on the same machine.
# Usage: `. .gpu/env.sh; [KERNEL_ROUNDS=2] [ROUNDS=1] bash docs/data/session42/run3.sh $OUT` with .gpu/ and .exp/ carried
# (KERNEL_ROUNDS, 1 by default, for the kernels; ROUNDS, 2 by default, goes on to run 2).
OUT=${1:?}; o=/tmp/r3; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
b=/tmp/pages; mkdir -p $b; tar xJf .exp/s42pages.txz -C $b
export LD_LIBRARY_PATH=$b/client:$LD_LIBRARY_PATH
grep -q H200 $o/gpu.txt || { echo "not an H200: run 2 alone"; bash docs/data/session42/run2.sh $OUT; exit; }
for round in $(seq ${KERNEL_ROUNDS:-1}); do
  timeout 200 $b/bench/vkreduce-bench --reduce-only --ops sum,min,max --dtypes f64 --min-log2 24 --max-log2 24 \
    --reps 20 --csv $o/reduce-$round.csv > $o/reduce-$round.txt 2>&1; echo "reduce rc=$?"
  grep -E "^(f64|reduce)|of read" $o/reduce-$round.txt | head -8
  timeout 250 $b/bench/vkreduce-bench --scan-only --ops sum,prod --dtypes f64,i64 --min-log2 28 --max-log2 28 \
    --reps 20 --csv $o/scan-$round.csv > $o/scan-$round.txt 2>&1; echo "scan rc=$?"
  tail -8 $o/scan-$round.txt
  timeout 200 python3 bench/torch_bench.py --dtypes f64,i64 --min-log2 24 --max-log2 28 --cummin-max-log2 10 \
    --reps 20 --csv $o/torch-$round.csv > $o/torch-$round.txt 2>&1; echo "torch rc=$?"
  grep -E "2\^(24|28) " $o/torch-$round.txt | head -24
  tar czf $OUT/run3.tgz -C $o .
done
bash docs/data/session42/run2.sh $OUT
