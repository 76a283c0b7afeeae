/* parallel_ref.h: the benchmark's host-side work on long arrays, spread over the CPU's
 * cores: generating inputs and checking scan outputs against the CPU reference. At 2^28
 * elements both ran serially for 8 to 10 s per series on the H200's host, four times a
 * series' GPU time (docs/BENCHMARKS.md, session 27). */
#ifndef VKR_BENCH_PARALLEL_REF_H
#define VKR_BENCH_PARALLEL_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkreduce_types.h"

/* Fills n elements as gen_fill() does (tests/kern_gen.h), in parts of 2^20 elements, part k
 * generated from its own seed (derived from seed and k): the same data whatever the number
 * of threads. */
void parallel_fill(vkr_dtype dtype, vkr_op op, void *out, size_t n, uint64_t seed);

/* ref_scan_check() (tests/kern_ref.h) of got against data, in one part per thread: the
 * parts' states are folded first, then each part is checked from the state before it. why
 * receives the first mismatch by index. Arrays under 2^20 elements are checked on this
 * thread, as are all of them where no thread can be started. */
bool parallel_scan_check(vkr_op op, vkr_dtype dtype, bool exclusive, const void *data, size_t n,
			 const void *got, char *why, size_t why_size);

#endif
