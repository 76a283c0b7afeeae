#!/usr/bin/env bash
# Session 14 run 6: the single pass's patience (look-back rounds before a workgroup does a
# stalled predecessor's tile itself; default 8 on GPUs) at 4, 8, 16 and 64, for 2^28 f32 and
# i32 sum scans, two rounds interleaved, then torch.cumsum. .exp/vkreduce-bench-I is
# build-release's bench/vkreduce-bench at 46df8c3 (its scans are those of fece20e). Run as
# `. .gpu/env.sh; bash docs/data/session14/run6.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for round in 1 2; do
  for p in 8 4 16 64; do
    VKR_SCAN_PATIENCE=$p timeout 60 .exp/vkreduce-bench-I --scan-only --ops sum --dtypes f32,i32 --min-log2 28 --max-log2 28 \
      --reps 20 --csv "$o/p$p-$round.csv" > "$o/p$p-$round.txt" 2>&1
    echo "patience $p round $round rc=$? $(date +%T) $(grep -c WRONG $o/p$p-$round.txt) wrong: $(grep -E '^scan' $o/p$p-$round.txt | awk '{print $3, $5}' | tr '\n' ' ')"
    pack
  done
done
timeout 90 python3 bench/torch_bench.py --kinds scan --dtypes f32,i32 --min-log2 28 --max-log2 28 --reps 20 \
  --csv "$o/torch-scan.csv" > "$o/torch-scan.txt" 2>&1; echo "torch rc=$?"; pack
grep -iE "cumsum|scan" "$o/torch-scan.txt" | tail -4
