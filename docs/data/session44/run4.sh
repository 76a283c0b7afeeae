#!/usr/bin/env bash
# Session 44 run 4, the short form of runs 2 and 3 for the device time left (about 600 s).
# On an H200: (1) session 43's keys, f64 sum, min and max at 2^24, base
# (.exp/s42pages.txz) against f023021's int64 keys (.exp/s43final.txz), three rounds
# alternating, torch's f64 reductions beside them; then (3) below; then (2) run 1's
# prefetch, p0 against p32 at 264 tiles ahead, one round. On any other GPU: (3) alone.
# (3) is run3.sh's 16 MiB probe.
# Usage: `. .gpu/env.sh; bash docs/data/session44/run4.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}; o=/tmp/s44r4; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
if grep -q H200 $o/gpu.txt; then
  mkdir -p /tmp/base /tmp/final
  tar xJf .exp/s42pages.txz -C /tmp/base bench/vkreduce-bench
  tar xJf .exp/s43final.txz -C /tmp/final bench/vkreduce-bench
  for round in 1 2 3; do
    order="base final"; [ $((round % 2)) = 0 ] && order="final base"
    for v in $order; do
      timeout 60 /tmp/$v/bench/vkreduce-bench --reduce-only --ops sum,min,max --dtypes f64 \
        --min-log2 24 --max-log2 24 --reps 20 --csv $o/keys-$v-$round.csv > $o/keys-$v-$round.txt 2>&1 || echo "$v $round rc=$?"
      grep -E "^reduce +(min|max|sum) +f64 +2\^24" $o/keys-$v-$round.txt | sed "s/^/$v r$round /"
    done
    tar czf $OUT/run4.tgz -C $o .
  done
  timeout 90 python3 bench/torch_bench.py --kinds reduce --dtypes f64 --min-log2 24 --max-log2 24 \
    --reps 20 --csv $o/keys-torch.csv > $o/keys-torch.txt 2>&1; echo "torch rc=$?"
  grep -E "f64 +2\^24 " $o/keys-torch.txt
  tar czf $OUT/run4.tgz -C $o .
fi
OUT3=$o/probe; mkdir -p $OUT3
PROBE_ONLY=1 bash docs/data/session44/run3.sh $OUT3
tar czf $OUT/run4.tgz -C $o .
if grep -q H200 $o/gpu.txt; then
  for v in p0 p32; do mkdir -p /tmp/$v; tar xJf .exp/s44$v.txz -C /tmp/$v; done
  for b in "p0 0" "p32 264"; do
    set -- $b
    VKR_SCAN_PREFETCH=$2 VKR_PIPELINE_STATS=1 timeout 60 /tmp/$1/bench/vkreduce-bench --scan-only \
      --ops sum,prod --dtypes f64,i64 --min-log2 28 --max-log2 28 --reps 20 \
      --csv $o/scan-$1-a$2.csv > $o/scan-$1-a$2.txt 2>&1 || echo "$1 rc=$?"
    echo "$1 a$2: $(grep -E '^scan' $o/scan-$1-a$2.txt | awk '{print $2, $3, $5}' | tr '\n' ';')"
    tar czf $OUT/run4.tgz -C $o .
  done
fi
