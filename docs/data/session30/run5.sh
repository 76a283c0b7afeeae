#!/usr/bin/env bash
# Session 30 runs 5 and 9: the engine's reduction tests on the H200, of the build with the
# limbs reverted and their edge test kept (run 5, e0b86f2), and of the final build with three
# flagged loads ahead (run 9, 1d6b348).
# Run as `. .gpu/env.sh; bash docs/data/session30/run5.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
mkdir -p /tmp/s30final; tar xJf .exp/s30final.txz -C /tmp/s30final
timeout 100 /tmp/s30final/tests/test_kern_reduce > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(date +%T)"; grep -E "FAILED|PASSED|got" "$o/test_kern_reduce.txt" | head -5
