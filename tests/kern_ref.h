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

/* The sequential reference's running state over a prefix of the input: what ref_scan_check
 * carries from element to element. A long check splits into parts (the benchmark's
 * threads): part k's starting state is the start combined with the folds of the parts before
 * it, each folded from the start over its own elements. */
struct ref_scan_state {
	long double acc, abs_sum; /* float sums and products */
	vkr_value exact;          /* every other op and dtype */
};
/* The state before the first element: the operator's neutral. */
struct ref_scan_state ref_scan_start(vkr_op op, vkr_dtype dtype);
/* Folds elements [begin, end) of data into s. */
void ref_scan_fold(vkr_op op, vkr_dtype dtype, const void *data, size_t begin, size_t end,
		   struct ref_scan_state *s);
/* s followed by t, where t was folded from ref_scan_start() over the elements after s's. */
void ref_scan_combine(vkr_op op, vkr_dtype dtype, struct ref_scan_state *s, const struct ref_scan_state *t);
/* ref_scan_check over elements [begin, end) of data and got (indices of the whole array),
 * s being the state after elements [0, begin). */
bool ref_scan_check_range(vkr_op op, vkr_dtype dtype, bool exclusive, const void *data, size_t begin,
			  size_t end, struct ref_scan_state s, const void *got, char *why, size_t why_size);

#endif
