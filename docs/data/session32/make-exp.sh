#!/usr/bin/env bash
# Makes the two builds that run1.sh and run2.sh carry in .exp/ (not in git): the base
# (c4f93e2: tails that await their atomic) and the new build (default: HEAD), each a release
# build in a git worktree of its own, packed as .exp/s31base.txz and .exp/s32new.txz.
# Run from the repository root on the development machine; takes a few minutes per build.
#   bash docs/data/session32/make-exp.sh [NEW_COMMIT]
set -euo pipefail
new=${1:-HEAD}
mkdir -p .exp
files="bench/vkreduce-bench tests/test_kern_reduce tests/test_gpu tests/test_client_e2e
  client/vkreduce daemon/vkreduced client/libvkreduce.so client/libvkreduce.so.0
  client/libvkreduce.so.0.1.0 bench/vkreduce-shm-bench"
build() { # commit archive
  local dir
  dir=$(mktemp -d /tmp/vkr-exp.XXXXXX)
  git worktree add --detach "$dir" "$1" > /dev/null
  (cd "$dir" && meson setup b --buildtype=release > /dev/null && meson compile -C b > /dev/null)
  # shellcheck disable=SC2086 # the list is split on purpose
  tar cJf "$2" -C "$dir/b" $files
  git worktree remove --force "$dir"
  echo "$2: $(git rev-parse --short "$1")"
}
[ -f .exp/s31base.txz ] || build c4f93e2 .exp/s31base.txz
build "$new" .exp/s32new.txz
