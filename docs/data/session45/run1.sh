#!/usr/bin/env bash
# Session 45 run 1: session 44's run 4 (never run: no H200 came) with the prefetch's second
# distance and two rounds, for a full device budget.
# On an H200: (1) session 43's int64 keys, f64 sum, min and max at 2^24, base
# (.exp/s42pages.txz) against f023021 (.exp/s43final.txz), three rounds alternating, torch's
# f64 reductions beside them; (2) session 44's prefetch, p0 against p32 at 264 and 396 tiles
# ahead, f64 and i64 sums and products at 2^28, two rounds; (3) session 44's run 3 probe (16
# MiB shm requests alone and beside 64, 256 and 1024 MiB ones). On any other GPU: (3) alone.
# Usage: `. .gpu/env.sh; bash docs/data/session45/run1.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}; o=/tmp/s45r1; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
pack() { tar czf $OUT/run1.tgz -C $o .; }
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
    pack
  done
  timeout 90 python3 bench/torch_bench.py --kinds reduce --dtypes f64 --min-log2 24 --max-log2 24 \
    --reps 20 --csv $o/keys-torch.csv > $o/keys-torch.txt 2>&1; echo "torch rc=$?"
  grep -E "f64 +2\^24 " $o/keys-torch.txt
  pack
  for v in p0 p32; do mkdir -p /tmp/$v; tar xJf .exp/s44$v.txz -C /tmp/$v; done
  for round in 1 2; do
    for b in "p0 0" "p32 264" "p32 396"; do
      set -- $b; name=scan-$1-a$2-r$round
      VKR_SCAN_PREFETCH=$2 VKR_PIPELINE_STATS=1 timeout 100 /tmp/$1/bench/vkreduce-bench --scan-only \
        --ops sum,prod --dtypes f64,i64 --min-log2 28 --max-log2 28 --reps 20 \
        --csv $o/$name.csv > $o/$name.txt 2>&1 || echo "$name rc=$?"
      echo "$name $(grep -c WRONG $o/$name.txt) wrong: $(grep -E '^scan' $o/$name.txt | awk '{print $2, $3, $5}' | tr '\n' ';')"
      pack
    done
  done
  grep -iE 'copy kernel' $o/scan-p0-a0-r1.txt | head -1
fi
PROBE_ONLY=1 bash docs/data/session44/run3.sh $o/probe > $o/probe.log 2>&1; echo "probe rc=$?"
cat /tmp/s44r3/summary.txt
pack
