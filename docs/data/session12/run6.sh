#!/usr/bin/env bash
# Session 12 run 6: the engine's reduction and scan tests on the H200, the session's final build
# (one wave of workgroups; the shuffle tree for 32-bit types), default and with every scan
# single-pass at a patience of one round (fallbacks all the time).
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
timeout 100 build-release/tests/test_kern_reduce > "$o/test_kern_reduce.txt" 2>&1; echo "reduce rc=$?"
timeout 110 build-release/tests/test_kern_scan > "$o/test_kern_scan.txt" 2>&1; echo "scan rc=$?"
VKR_SCAN=single-pass VKR_SCAN_PATIENCE=1 timeout 110 build-release/tests/test_kern_scan > "$o/test_kern_scan_single.txt" 2>&1; echo "scan single-pass patience 1 rc=$?"
for f in "$o"/*.txt; do echo "== $f: $(grep -c '\[       OK \]' "$f") ok, $(grep -c '\[  FAILED  \]' "$f") failed"; grep -E 'FAILED|Error|error' "$f" | head -5; done
tar czf "$out/run.tgz" -C "$o" .
