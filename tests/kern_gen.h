/* kern_gen.h: random test inputs per dtype and op, including each dtype's extreme values. */
#ifndef VKR_KERN_GEN_H
#define VKR_KERN_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "vkreduce_types.h"

/* Fills n elements of dtype suited to op: products stay near 1 for floats (no overflow
 * over a million elements) and odd for integers (so wrapping products stay non-zero);
 * count inputs repeat small values so that eq/ne match often; a few elements take the
 * dtype's extreme values (for sums of floats, only moderate ones, so the error bound stays
 * meaningful). */
void gen_fill(vkr_dtype dtype, vkr_op op, void *out, size_t n, uint64_t *rng);
/* xorshift64*: the tests' and benchmarks' deterministic generator. */
uint64_t gen_rand(uint64_t *state);
/* An element of data (or 0 when empty), used as the comparison value of count. */
vkr_value gen_pick(vkr_dtype dtype, const void *data, size_t n, uint64_t *rng);

#endif
