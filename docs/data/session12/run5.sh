#!/usr/bin/env bash
# Session 12 run 5: the plots of session 12's tables (matplotlib on the GPU machine); no GPU work.
out=${1:?}; d=docs/data/session12
python3 $d/plot_waves.py $d/reduce-waves.csv "$out/reduce-waves.png"; echo "waves rc=$?"
python3 bench/plot_bars.py $d/scan-lookback.csv "$out/scan-lookback.png" --columns before_us,after_us \
  --title 'Single-pass scans at 2^28 on the H200: look-back before and after session 12 (run S12-4, best of two)'; echo "bars rc=$?"
python3 bench/plot_bars.py $d/scan-lookback-variants.csv "$out/scan-lookback-variants.png" \
  --columns before_us,ballots_and_shuffle_tree_us,ballots_us,shuffle_tree_us \
  --title 'Look-back variants, 32-bit scans at 2^28 on the H200 (run S12-2, best of two)'; echo "variants rc=$?"
python3 bench/plot_bench.py $d/run3/reduce-new.csv $d/run3/torch-reduce.csv "$out/sweep"; echo "sweep rc=$?"
ls -la "$out" "$out/sweep"
