#!/usr/bin/env bash
# The main job, end to end: install what is missing, build, start vkreduced on a private
# socket, run the vkreduce client on sample data (inline and through shared memory), show the
# results and the daemon's statistics, and stop the daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
[ -d build ] || meson setup build --buildtype=release >/dev/null
meson compile -C build >/dev/null

work=$(mktemp -d)
sock="$work/vkreduce.sock"
trap 'kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; rm -rf "$work"' EXIT
./build/daemon/vkreduced --socket "$sock" 2>"$work/daemon.log" &
daemon=$!
for _ in $(seq 300); do
  ./build/client/vkreduce --socket "$sock" ping >/dev/null 2>&1 && break
  kill -0 "$daemon" 2>/dev/null || { cat "$work/daemon.log"; exit 1; }
  sleep 0.1
done
vk() { ./build/client/vkreduce --socket "$sock" "$@"; }

echo "== daemon"
vk info | head -8
echo
echo "== 1..1000000 as i64 (text in)"
seq 1 1000000 > "$work/ints.txt"
printf 'sum   '; vk sum --text --dtype i64 "$work/ints.txt"
printf 'max   '; vk max --text --dtype i64 "$work/ints.txt"
printf 'count > 999000   '; vk count --text --dtype i64 --cmp gt --value 999000 "$work/ints.txt"
echo
echo "== 16M random f32 values (64 MiB binary, through shared memory)"
python3 - "$work/floats.bin" <<'PY'
import random, struct, sys
random.seed(7)
n = 1 << 24
with open(sys.argv[1], 'wb') as f:
    for _ in range(n // 65536):
        f.write(struct.pack('<65536f', *[random.uniform(-1, 1) for _ in range(65536)]))
PY
printf 'sum   '; vk sum --dtype f32 "$work/floats.bin"
printf 'min   '; vk min --dtype f32 "$work/floats.bin"
printf 'max   '; vk max --dtype f32 "$work/floats.bin"
echo
echo "== inclusive and exclusive prefix sums of 1..10"
seq 1 10 > "$work/ten.txt"
printf 'scan            '; vk scan --text --dtype i32 "$work/ten.txt" | tr '\n' ' '; echo
printf 'scan --exclusive '; vk scan --text --dtype i32 --exclusive "$work/ten.txt" | tr '\n' ' '; echo
echo
echo "== daemon statistics"
vk stats | head -20
