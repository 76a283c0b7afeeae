#!/usr/bin/env bash
# Session 6, run 6: the chunked single pass (8 rows) at other patiences: are its slow
# operators and 64-bit types fallback storms?
set -u
O=${1:?}; o=$(mktemp -d); b=build-release/bench/vkreduce-bench
sb() { name=$1; shift; env "$@" $b --scan-only --ops sum,max --dtypes f32,f64,i64 --min-log2 28 --max-log2 28 --reps 10 > $o/$name.txt 2>&1; echo "$name rc=$?"; grep -E "^scan|WRONG|spread" $o/$name.txt; }
for p in 32 256 4096; do sb c8-p$p VKR_SCAN=single-pass VKR_SCAN_TILE=subgroup VKR_SCAN_PATIENCE=$p; done
tar czf $O/run6.tgz -C $o .
