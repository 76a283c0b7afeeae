#!/usr/bin/env bash
# Session 26 run 3: parked rows with the second part's loads fenced behind the parked part
# ("q": the second part's tile index read back from shared memory behind a barrier, and the
# parked rows stored after the second part's, behind a barrier), registers and shared memory
# with 0, 4 and 8 parked rows, and the main ops at 2^28.
# Run as `. .gpu/env.sh; bash docs/data/session26/run3.sh $OUT` with .gpu/ and .exp/s26c.txz
# carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
b=/tmp/s26c; mkdir -p $b; tar xJf .exp/s26c.txz -C $b
pack() { tar czf "$out/run.tgz" -C "$o" .; }
for p in 0 4 8; do
  VKR_SCAN_PARK_ROWS=$p VKR_PIPELINE_STATS=1 timeout 60 $b/vkreduce-bench-q --scan-only --ops sum --dtypes f32 \
    --min-log2 10 --max-log2 10 --reps 1 2>&1 | grep scan_chained_ | sed 's/Binary.*Local/Local/' > "$o/stats-park$p.txt"
  echo "park $p:"; grep -E "(f32|i32|f64|i64)_(sum|max) " "$o/stats-park$p.txt" | sed 's/pipeline scan_chained_//; s/Local Memory Size=687194767/spill+/' | tr '\n' ' '; echo
done
pack
scan() { # name park
  VKR_SCAN_PARK_ROWS=$2 timeout 100 $b/vkreduce-bench-q --scan-only --ops sum,max --dtypes f32,i32,f64,i64 \
    --min-log2 28 --max-log2 28 --reps 20 --csv "$o/scan-$1.csv" > "$o/scan-$1.txt" 2>&1
  echo "scan $1 rc=$? $(date +%T) $(grep -c WRONG $o/scan-$1.txt) wrong"
  grep -E "^scan" "$o/scan-$1.txt" | awk '{print $2, $3, $5}' | tr '\n' ';'; echo
  pack
}
scan q0 0
scan q8 8
scan q4 4
