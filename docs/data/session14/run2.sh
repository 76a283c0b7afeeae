#!/usr/bin/env bash
# Session 14 run 2: the final build (N, 7dfbfb3: the reductions' workgroup tree by subgroup
# shuffles) on the H200: the reduction tests (both trees); f32/f64 sum and max beside the
# build before it (Q0, fece20e), 2^20 to 2^25, two rounds interleaved; every op of every
# dtype 2^20 to 2^28 against the read kernel; torch's reductions over the same sizes.
# .exp/vkreduce-bench-N and .exp/test_kern_reduce-N are build-release's bench/vkreduce-bench
# and tests/test_kern_reduce at 7dfbfb3; .exp/vkreduce-bench-Q0 is probe Q0 of run 1.
# Run as `. .gpu/env.sh; bash docs/data/session14/run2.sh $OUT` with .gpu/ and .exp/ carried.
out=${1:?}; mkdir -p "$out/r"; o="$out/r"
pack() { tar czf "$out/run.tgz" -C "$o" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$o/gpu.txt" 2>&1
VKR_COMPILE_ON_FIRST_USE=1 timeout 120 .exp/test_kern_reduce-N > "$o/test_kern_reduce.txt" 2>&1
echo "test_kern_reduce rc=$? $(grep -E 'PASSED|FAILED|tree under test' "$o/test_kern_reduce.txt" | tr '\n' ' ')"
VKR_COMPILE_ON_FIRST_USE=1 VKR_PIPELINE_STATS=1 timeout 30 .exp/vkreduce-bench-N --reduce-only --ops sum --dtypes f32,f64 \
  --min-log2 20 --max-log2 20 --reps 2 2>&1 | grep -E "pipeline reduce|^device" | cut -c1-160
for round in 1 2; do
  for v in Q0 N; do
    timeout 60 .exp/vkreduce-bench-$v --reduce-only --ops sum,max --dtypes f32,f64 --min-log2 20 --max-log2 25 --reps 20 \
      --csv "$o/s-$v-$round.csv" > "$o/s-$v-$round.txt" 2>&1
    echo "$v $round rc=$? $(date +%T) $(grep -c WRONG $o/s-$v-$round.txt) wrong"
  done
done
pack
timeout 280 .exp/vkreduce-bench-N --reduce-only --min-log2 20 --max-log2 28 --reps 20 \
  --csv "$o/reduce-all.csv" > "$o/reduce-all.txt" 2>&1; echo "reduce-all rc=$? $(date +%T) $(grep -c WRONG $o/reduce-all.txt) wrong"; pack
timeout 150 python3 bench/torch_bench.py --kinds reduce --min-log2 20 --max-log2 28 --reps 20 \
  --csv "$o/torch-reduce.csv" > "$o/torch-reduce.txt" 2>&1; echo "torch rc=$? $(date +%T)"; pack
for round in 1 2; do for v in Q0 N; do echo "== $v $round"; grep -E "^reduce" "$o/s-$v-$round.txt" | awk '{print $2, $3, $4, $5, $NF}' | tr '\n' ' '; echo; done; done
grep -E "^reduce" "$o/reduce-all.txt" | awk '$4 == "2^24" || $4 == "2^28" {print $2, $3, $4, $5, $NF}' | tr '\n' ';'
