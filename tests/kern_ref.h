/* kern_ref.h: CPU references for reductions and scans, and the tolerances the GPU results
 * are held to. */
#ifndef VKR_KERN_REF_H
#define VKR_KERN_REF_H

#include <stdbool.h>
#include <stddef.h>

#include "vkreduce_types.h"

/* Element i of data as a vkr_value of dtype. */
vkr_value ref_get(vkr_dtype dtype, const void *data, size_t i);
void ref_set(vkr_dtype dtype, void *data, size_t i, vkr_value v);

/* The operator's neutral. */
vkr_value ref_neutral(vkr_op op, vkr_dtype dtype);

/* Exact results for integers (wrapping in the input type) and for float min/max (NaN
 * propagating); float sum and prod are computed in long double. count returns u64. */
vkr_value ref_reduce(vkr_op op, vkr_dtype dtype, vkr_cmp cmp, vkr_value cmp_value,
		     const void *data, size_t n);
/* Whether got is within the documented bound of the reference for this input: integers
 * and min/max exact, f32/f64 sum within (ceil(log2 n) + 4) * eps * sum|x|, prod within
 * (n + 4) * eps relative. why receives a description on failure. */
bool ref_reduce_check(vkr_op op, vkr_dtype dtype, vkr_cmp cmp, vkr_value cmp_value,
		      const void *data, size_t n, vkr_value got, char *why, size_t why_size);
/* Checks a whole scan output against the sequential reference, element by element, with
 * the same bounds applied to each prefix. */
bool ref_scan_check(vkr_op op, vkr_dtype dtype, bool exclusive, const void *data, size_t n,
		    const void *got, char *why, size_t why_size);

#endif
