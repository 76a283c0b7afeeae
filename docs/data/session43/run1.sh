#!/usr/bin/env bash
# Session 43 run 1: f64 min and max at 2^24 (issue 6: 0.944-0.960 of the read kernel, target
# 0.95) with f64 keys as one int64 and the NaN probe on the keys' heads (f4621ff, `new`),
# against the build before it (`base`, the kernels of sessions 38-42) and two experiments:
# `v1` (new without the other side's probe: wrong for those NaNs, the probe's cost) and `v2`
# (base with the int64 keys alone), `v3` (new with an exact f64 probe of three operations, no
# second read). Variants in rotated order each round; torch once.
# Usage: `. .gpu/env.sh; [ROUNDS=2] bash docs/data/session43/run1.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}; o=/tmp/s43r1; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
for v in base new v1 v2 v3; do mkdir -p /tmp/$v; done
tar xJf .exp/s42pages.txz -C /tmp/base bench/vkreduce-bench
tar xJf .exp/s43new.txz -C /tmp/new
tar xJf .exp/s43v1.txz -C /tmp/v1
tar xJf .exp/s43v2.txz -C /tmp/v2
tar xJf .exp/s43v3.txz -C /tmp/v3
series() { # variant round dtypes ops
  timeout 150 /tmp/$1/bench/vkreduce-bench --reduce-only --ops $4 --dtypes $3 --min-log2 20 --max-log2 26 \
    --reps 20 --csv $o/$1-$2-${3//,/_}.csv > $o/$1-$2-${3//,/_}.txt 2>&1 || echo "$1 round $2 rc=$?"
  grep -E "^reduce +(min|max|sum|count) +(f64|f32|i64) +2\^24" $o/$1-$2-${3//,/_}.txt | sed "s/^/$1 r$2 /"
}
order=(base new v1 v2 v3)
for round in $(seq ${ROUNDS:-2}); do
  for k in 0 1 2 3 4; do
    v=${order[$(( (k + round) % 5 ))]}
    case $v in
      base|new) series $v $round f32,f64,i64 sum,min,max,count ;;
      *) series $v $round f64 sum,min,max,count ;;
    esac
  done
  tar czf $OUT/run1.tgz -C $o .
done
if [ -z "$NO_TORCH" ]; then
  timeout 200 python3 bench/torch_bench.py --kinds reduce --dtypes f32,f64,i64 --min-log2 20 --max-log2 26 \
    --reps 20 --csv $o/torch.csv > $o/torch.txt 2>&1; echo "torch rc=$?"
  grep -E "2\^24 " $o/torch.txt | head -16
fi
tar czf $OUT/run1.tgz -C $o .
