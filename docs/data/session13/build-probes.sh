#!/usr/bin/env bash
# Builds probe binaries of vkreduce-bench for the H200 from probes-reduce.patch, each in a copy
# of the tree at HEAD with one probe (a "### probe X" section) applied, into .exp/vkreduce-bench-X.
#
#   docs/data/session13/build-probes.sh G Rs Rsbd Rn Rn2     # the binaries run7.sh runs
set -euo pipefail
top=$(git rev-parse --show-toplevel)
patches="$top/docs/data/session13/probes-reduce.patch"
mkdir -p "$top/.exp"
for probe in "$@"; do
	dir=$(mktemp -d)
	git -C "$top" archive HEAD | tar x -C "$dir"
	awk -v want="### probe $probe" '/^### probe / { on = $0 == want || index($0, want " ") == 1 } on && !/^### probe /' \
		"$patches" > "$dir/probe.patch"
	[ -s "$dir/probe.patch" ] || { echo "build-probes: no probe $probe in $patches" >&2; exit 1; }
	(cd "$dir" && patch -s -p0 < probe.patch)
	(cd "$dir" && meson setup b --buildtype=release > /dev/null && meson compile -C b bench/vkreduce-bench > build.log) ||
		{ echo "build-probes: $probe did not build; see $dir/build.log" >&2; exit 1; }
	cp "$dir/b/bench/vkreduce-bench" "$top/.exp/vkreduce-bench-$probe"
	rm -rf "$dir"
	echo "built .exp/vkreduce-bench-$probe"
done
