#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the suite in a plain build, again
# under the Khronos validation layer (synchronization validation on), again built with
# AddressSanitizer + UndefinedBehaviorSanitizer (less the scan's shader variants, whose host
# code is the default run's), then the fuzzer for a bounded time.
# Ends with one line: "N passed, M failed" over all runs. Exit status 0 only if none failed.
#
#   scripts/test.sh            everything
#   FUZZ_SECONDS=0 scripts/test.sh   skip the fuzzer
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh || exit 1

passed=0
failed=0
# Each test's line as it ends, not a stage's lines at its end: meson (Python) and grep hold
# their output in blocks when it goes to a pipe, so a run cut off by CI's time limit showed
# nothing of the stage it was in.
export PYTHONUNBUFFERED=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Adds the counts of one `meson test` run (its summary lines) to the totals.
count() {
  local ok fail timeout xpass
  ok=$(awk '/^Ok:/ {print $2}' "$log" | tail -1)
  fail=$(awk '/^Fail:/ {print $2}' "$log" | tail -1)
  timeout=$(awk '/^Timeout:/ {print $2}' "$log" | tail -1)
  xpass=$(awk '/^Unexpected Pass:/ {print $3}' "$log" | tail -1)
  if [ -z "$ok" ]; then
    echo "test.sh: $1 produced no test summary" >&2
    failed=$((failed + 1))
    return
  fi
  passed=$((passed + ok))
  failed=$((failed + ${fail:-0} + ${timeout:-0} + ${xpass:-0}))
}

# run NAME COMMAND...: a build step; its failure counts as one failed test.
step() {
  local name=$1
  shift
  echo "== $name (at $SECONDS s)"
  if ! "$@"; then
    echo "test.sh: $name failed" >&2
    failed=$((failed + 1))
    return 1
  fi
}

suite() {
  local name=$1
  shift
  echo "== $name (at $SECONDS s)"
  meson test "$@" --print-errorlogs 2>&1 | tee "$log" | grep --line-buffered -vE '^\s*$'
  count "$name"
}

if step "build (plain)" bash -c '{ [ -d build ] || meson setup build; } && meson compile -C build'; then
  suite "tests" -C build --num-processes 2
  suite "tests under the validation layer" -C build --setup validation --num-processes 2
fi
if step "build (address,undefined sanitizers)" bash -c \
    '{ [ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false; } && meson compile -C build-asan'; then
  # Without the scan runs of suite shader_variant: tests/meson.build says why.
  suite "tests under ASan+UBSan" -C build-asan --num-processes 2 --no-suite shader_variant
fi
if [ -x tests/fuzz/run-fuzz.sh ] && [ "${FUZZ_SECONDS:-120}" != 0 ]; then
  echo "== fuzzing the decoder and dispatch path for ${FUZZ_SECONDS:-120} s (at $SECONDS s)"
  if tests/fuzz/run-fuzz.sh "${FUZZ_SECONDS:-120}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
fi

echo "== done in $SECONDS s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
