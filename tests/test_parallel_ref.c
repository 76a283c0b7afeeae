/* bench/parallel_ref.c: the benchmark's threaded scan check agrees with the serial reference
 * (tests/kern_ref.c) it splits, on correct outputs and on outputs with one wrong element in
 * any part; its threaded fill is gen_fill() part by part. No device. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kern_gen.h"
#include "kern_ref.h"
#include "parallel_ref.h"
#include "proto_names.h"

/* Past the 2^20 elements under which the check stays on one thread, and not a multiple of
 * any thread count. */
#define N (((size_t)1 << 20) + 12345)

/* The scan of data as the reference computes it, written in the dtype: floats rounded from
 * the long double prefix, every other op exact. */
static void reference_scan(vkr_op op, vkr_dtype dtype, bool exclusive, const void *data, size_t n, void *out)
{
	struct ref_scan_state s = ref_scan_start(op, dtype);
	bool fp = (dtype == VKR_DTYPE_F32 || dtype == VKR_DTYPE_F64) && (op == VKR_OP_SUM || op == VKR_OP_PROD);
	for (size_t i = 0; i < n; i++) {
		if (!exclusive)
			ref_scan_fold(op, dtype, data, i, i + 1, &s);
		vkr_value v = s.exact;
		if (fp) {
			memset(&v, 0, sizeof(v));
			if (dtype == VKR_DTYPE_F32)
				v.f32 = (float)s.acc;
			else
				v.f64 = (double)s.acc;
		}
		ref_set(dtype, out, i, v);
		if (exclusive)
			ref_scan_fold(op, dtype, data, i, i + 1, &s);
	}
}

/* Makes element i of out clearly wrong for the op: far outside any float bound, or another
 * integer (an infinite neutral becomes 1.5). */
static void spoil(vkr_dtype dtype, void *out, size_t i)
{
	vkr_value v = ref_get(dtype, out, i);
	switch (dtype) {
	case VKR_DTYPE_F32: v.f32 = isfinite(v.f32) ? v.f32 * 2.0f + 1e30f : 1.5f; break;
	case VKR_DTYPE_F64: v.f64 = isfinite(v.f64) ? v.f64 * 2.0 + 1e300 : 1.5; break;
	default: v.u64 ^= 1; break;
	}
	ref_set(dtype, out, i, v);
}

static void test_parallel_check_agrees_with_the_serial_one(void **state)
{
	(void)state;
	const vkr_dtype dtypes[] = { VKR_DTYPE_F32, VKR_DTYPE_F64, VKR_DTYPE_I32, VKR_DTYPE_U64 };
	const vkr_op ops[] = { VKR_OP_SUM, VKR_OP_PROD, VKR_OP_MIN, VKR_OP_MAX };
	void *data = malloc(N * 8), *got = malloc(N * 8);
	assert_non_null(data);
	assert_non_null(got);
	for (size_t d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++) {
		for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
			for (int exclusive = 0; exclusive < 2; exclusive++) {
				vkr_dtype dtype = dtypes[d];
				vkr_op op = ops[o];
				char why[256] = "";
				parallel_fill(dtype, op == VKR_OP_PROD ? VKR_OP_PROD : VKR_OP_SUM, data, N, 42 + d);
				reference_scan(op, dtype, exclusive, data, N, got);
				assert_true(ref_scan_check(op, dtype, exclusive, data, N, got, why, sizeof(why)));
				if (!parallel_scan_check(op, dtype, exclusive, data, N, got, why, sizeof(why)))
					fail_msg("%s %s%s: a correct scan failed: %s", proto_op_name(op),
						 proto_dtype_name(dtype), exclusive ? " exclusive" : "", why);
				/* One wrong element at the start, in the middle and at the end: the
				 * first and last parts and one between them, whatever the threads. */
				const size_t at[] = { 0, N / 2 + 7, N - 1 };
				for (size_t k = 0; k < 3; k++) {
					vkr_value keep = ref_get(dtype, got, at[k]);
					spoil(dtype, got, at[k]);
					char want[32];
					snprintf(want, sizeof(want), "element %zu:", at[k]);
					if (parallel_scan_check(op, dtype, exclusive, data, N, got, why, sizeof(why)))
						fail_msg("%s %s%s: element %zu wrong, yet the check passed",
							 proto_op_name(op), proto_dtype_name(dtype),
							 exclusive ? " exclusive" : "", at[k]);
					assert_non_null(strstr(why, want));
					ref_set(dtype, got, at[k], keep);
				}
			}
		}
	}
	free(data);
	free(got);
}

static void test_parallel_fill_is_gen_fill_part_by_part(void **state)
{
	(void)state;
	const size_t part = (size_t)1 << 20, n = 2 * part + 100;
	float *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	assert_non_null(a);
	assert_non_null(b);
	const uint64_t seed = 7;
	parallel_fill(VKR_DTYPE_F32, VKR_OP_SUM, a, n, seed);
	for (size_t k = 0; k * part < n; k++) {
		uint64_t rng = seed ^ (0x9E3779B97F4A7C15ull * (k + 1));
		size_t count = n - k * part < part ? n - k * part : part;
		gen_fill(VKR_DTYPE_F32, VKR_OP_SUM, b + k * part, count, &rng);
	}
	assert_memory_equal(a, b, n * sizeof(*a));
	parallel_fill(VKR_DTYPE_F32, VKR_OP_SUM, b, n, seed + 1);
	assert_memory_not_equal(a, b, n * sizeof(*a));
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parallel_check_agrees_with_the_serial_one),
		cmocka_unit_test(test_parallel_fill_is_gen_fill_part_by_part),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
