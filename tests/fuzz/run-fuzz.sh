#!/bin/sh
# Builds the libFuzzer harness with clang, ASan and UBSan in build-fuzz/ and runs it over the
# committed corpus for a bounded time. Fails on any crash, leak, sanitizer report or abort.
#
# Usage: tests/fuzz/run-fuzz.sh [SECONDS]   (default 120; run from anywhere in the tree)
set -eu
seconds=${1:-120}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
fi
meson compile -C "$build" fuzz_dispatch
# New inputs found go to a scratch corpus, never into the committed one.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export VKR_PIN_DRIVER=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp"
status=0
"$build/tests/fuzz/fuzz_dispatch" -max_total_time="$seconds" -max_len=8192 -timeout=30 \
	-rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$work/" \
	"$work" "$root/tests/fuzz/corpus" >"$work/log" 2>&1 || status=$?
tail -n 25 "$work/log"
if [ "$status" -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: ' "$work/log"; then
	echo "run-fuzz.sh: the fuzzer found a problem (exit $status); artifacts:" >&2
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -e "$f" ] && { mkdir -p "$root/$build/artifacts"; cp "$f" "$root/$build/artifacts/"; echo "  $build/artifacts/$(basename "$f")" >&2; }
	done
	exit 1
fi
echo "run-fuzz.sh: no findings in ${seconds}s"
