#!/usr/bin/env bash
# Session 26 run 4: the plots of runs S26-1 and S26-2's tables (matplotlib on the GPU
# machine), and the final build's bench, which now checks a series of 2^28 alone against the
# CPU (before, only sizes up to 2^24 were checked, so 2^28-only series went unchecked), on
# the scans whose pipelines changed this session.
# Run as `. .gpu/env.sh; bash docs/data/session26/run4.sh $OUT` with .gpu/ and .exp/s26d.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s26d; mkdir -p $b; tar xJf .exp/s26d.txz -C $b
d=docs/data/session26
python3 bench/plot_bars.py $d/scan-s26-lookback.csv "$o/scan-s26-lookback.png" \
  --columns g_us,nolb_us,sgtree_us,torch_us \
  --title 'Scans at 2^28 on the H200 (run S26-1): 34e2bc7, without the look-back, tile fold by shuffles, torch'
python3 bench/plot_bars.py $d/scan-s26-park.csv "$o/scan-s26-park.png" \
  --columns default_us,park4_us,park8_us,torch_us \
  --title 'Scans at 2^28 on the H200 (run S26-2): parked rows 0, 4 and 8, torch'
echo "plots rc=$?"
timeout 120 $b/vkreduce-bench-final --scan-only --ops sum,prod --dtypes f64,i64 --min-log2 28 --max-log2 28 \
  --reps 10 --csv "$o/scan-final.csv" > "$o/scan-final.txt" 2>&1
echo "scan final rc=$? $(grep -c WRONG $o/scan-final.txt) wrong"; grep -E "^scan|WRONG" "$o/scan-final.txt"
