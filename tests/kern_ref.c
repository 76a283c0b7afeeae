#include "kern_ref.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "proto_names.h"

/* Element i of data whose elements are size (4 or 8) bytes, the size fixed by the caller so
 * that in the scans' long loops the copy is a load, not a call. */
static inline vkr_value get_sized(const void *data, size_t i, size_t size)
{
	vkr_value v;
	memset(&v, 0, sizeof(v));
	if (size == 4)
		memcpy(&v, (const char *)data + i * 4, 4);
	else
		memcpy(&v, (const char *)data + i * 8, 8);
	return v;
}

vkr_value ref_get(vkr_dtype dtype, const void *data, size_t i)
{
	return get_sized(data, i, proto_dtype_size(dtype));
}

void ref_set(vkr_dtype dtype, void *data, size_t i, vkr_value v)
{
	size_t size = proto_dtype_size(dtype);
	memcpy((char *)data + i * size, &v, size);
}

static long double as_ld(vkr_dtype dtype, vkr_value v)
{
	return dtype == VKR_DTYPE_F32 ? (long double)v.f32 : (long double)v.f64;
}

vkr_value ref_neutral(vkr_op op, vkr_dtype dtype)
{
	vkr_value v;
	memset(&v, 0, sizeof(v));
	switch (dtype) {
	case VKR_DTYPE_F32:
		v.f32 = op == VKR_OP_PROD ? 1.0f : op == VKR_OP_MIN ? INFINITY : op == VKR_OP_MAX ? -INFINITY : 0.0f;
		break;
	case VKR_DTYPE_F64:
		v.f64 = op == VKR_OP_PROD ? 1.0 : op == VKR_OP_MIN ? INFINITY : op == VKR_OP_MAX ? -INFINITY : 0.0;
		break;
	case VKR_DTYPE_I32:
		v.i32 = op == VKR_OP_PROD ? 1 : op == VKR_OP_MIN ? INT32_MAX : op == VKR_OP_MAX ? INT32_MIN : 0;
		break;
	case VKR_DTYPE_U32:
		v.u32 = op == VKR_OP_PROD ? 1 : op == VKR_OP_MIN ? UINT32_MAX : 0;
		break;
	case VKR_DTYPE_I64:
		v.i64 = op == VKR_OP_PROD ? 1 : op == VKR_OP_MIN ? INT64_MAX : op == VKR_OP_MAX ? INT64_MIN : 0;
		break;
	case VKR_DTYPE_U64:
		v.u64 = op == VKR_OP_PROD ? 1 : op == VKR_OP_MIN ? UINT64_MAX : 0;
		break;
	default:
		break;
	}
	return v;
}

static bool is_nan_value(vkr_dtype dtype, vkr_value v)
{
	return (dtype == VKR_DTYPE_F32 && isnan(v.f32)) || (dtype == VKR_DTYPE_F64 && isnan(v.f64));
}

/* a op b for integers and for float min/max, exactly as the kernels define it. */
static vkr_value exact_op(vkr_op op, vkr_dtype dtype, vkr_value a, vkr_value b)
{
	vkr_value r;
	memset(&r, 0, sizeof(r));
#define MINMAX(m)                                                                                  \
	r.m = op == VKR_OP_MIN ? (a.m < b.m ? a.m : b.m) : (a.m > b.m ? a.m : b.m)
	switch (dtype) {
	case VKR_DTYPE_F32:
	case VKR_DTYPE_F64:
		if (is_nan_value(dtype, a))
			return a;
		if (is_nan_value(dtype, b))
			return b;
		if (dtype == VKR_DTYPE_F32) {
			if (op == VKR_OP_SUM)
				r.f32 = a.f32 + b.f32;
			else if (op == VKR_OP_PROD)
				r.f32 = a.f32 * b.f32;
			else
				MINMAX(f32);
		} else {
			if (op == VKR_OP_SUM)
				r.f64 = a.f64 + b.f64;
			else if (op == VKR_OP_PROD)
				r.f64 = a.f64 * b.f64;
			else
				MINMAX(f64);
		}
		break;
	case VKR_DTYPE_I32:
	case VKR_DTYPE_U32:
		if (op == VKR_OP_SUM)
			r.u32 = a.u32 + b.u32;
		else if (op == VKR_OP_PROD)
			r.u32 = a.u32 * b.u32;
		else if (dtype == VKR_DTYPE_I32)
			MINMAX(i32);
		else
			MINMAX(u32);
		break;
	default:
		if (op == VKR_OP_SUM)
			r.u64 = a.u64 + b.u64;
		else if (op == VKR_OP_PROD)
			r.u64 = a.u64 * b.u64;
		else if (dtype == VKR_DTYPE_I64)
			MINMAX(i64);
		else
			MINMAX(u64);
		break;
	}
#undef MINMAX
	return r;
}

static bool compare(vkr_dtype dtype, vkr_cmp cmp, vkr_value x, vkr_value v)
{
	int order; /* -1, 0, 1, or 2 for unordered */
	switch (dtype) {
	case VKR_DTYPE_F32:
	case VKR_DTYPE_F64: {
		long double a = as_ld(dtype, x), b = as_ld(dtype, v);
		order = isnan(a) || isnan(b) ? 2 : a < b ? -1 : a > b ? 1 : 0;
		break;
	}
	case VKR_DTYPE_I32: order = x.i32 < v.i32 ? -1 : x.i32 > v.i32; break;
	case VKR_DTYPE_U32: order = x.u32 < v.u32 ? -1 : x.u32 > v.u32; break;
	case VKR_DTYPE_I64: order = x.i64 < v.i64 ? -1 : x.i64 > v.i64; break;
	default: order = x.u64 < v.u64 ? -1 : x.u64 > v.u64; break;
	}
	if (order == 2)
		return cmp == VKR_CMP_NE;
	switch (cmp) {
	case VKR_CMP_EQ: return order == 0;
	case VKR_CMP_NE: return order != 0;
	case VKR_CMP_LT: return order < 0;
	case VKR_CMP_LE: return order <= 0;
	case VKR_CMP_GT: return order > 0;
	default: return order >= 0;
	}
}

static bool float_sum_or_prod(vkr_op op, vkr_dtype dtype)
{
	return proto_dtype_is_float(dtype) && (op == VKR_OP_SUM || op == VKR_OP_PROD);
}

vkr_value ref_reduce(vkr_op op, vkr_dtype dtype, vkr_cmp cmp, vkr_value cmp_value,
		     const void *data, size_t n)
{
	vkr_value r;
	memset(&r, 0, sizeof(r));
	if (op == VKR_OP_COUNT) {
		for (size_t i = 0; i < n; i++)
			r.u64 += compare(dtype, cmp, ref_get(dtype, data, i), cmp_value);
		return r;
	}
	if (float_sum_or_prod(op, dtype)) {
		long double acc = op == VKR_OP_SUM ? 0.0L : 1.0L;
		for (size_t i = 0; i < n; i++) {
			long double x = as_ld(dtype, ref_get(dtype, data, i));
			acc = op == VKR_OP_SUM ? acc + x : acc * x;
		}
		if (dtype == VKR_DTYPE_F32)
			r.f32 = (float)acc;
		else
			r.f64 = (double)acc;
		return r;
	}
	r = ref_neutral(op, dtype);
	for (size_t i = 0; i < n; i++)
		r = exact_op(op, dtype, r, ref_get(dtype, data, i));
	return r;
}

static int ceil_log2(size_t n)
{
	int k = 0;
	while (((size_t)1 << k) < n)
		k++;
	return k;
}

/* Compares a float result with a long double reference within the documented bound. log2_n
 * is ceil_log2(n), which a scan's check keeps up to date rather than recomputing it at every
 * element. */
static bool float_close(vkr_op op, vkr_dtype dtype, long double want, long double abs_sum,
			size_t n, int log2_n, vkr_value got_v, char *why, size_t why_size, size_t index)
{
	long double got = as_ld(dtype, got_v);
	long double eps = dtype == VKR_DTYPE_F32 ? 0x1p-24L : 0x1p-53L;
	if (isnan(want) || isinf(want)) {
		bool same = (isnan(want) && isnan(got)) || got == want;
		if (!same)
			snprintf(why, why_size, "element %zu: got %Lg, want %Lg", index, got, want);
		return same;
	}
	long double bound = op == VKR_OP_SUM ? (log2_n + 4) * eps * abs_sum
					     : (long double)(n + 4) * eps * fabsl(want);
	/* The reference rounded to the dtype is itself off by half an ulp. */
	bound += eps * fabsl(want);
	if (fabsl(got - want) > bound) {
		snprintf(why, why_size, "element %zu: got %.17Lg, want %.17Lg, error %Lg > bound %Lg",
			 index, got, want, fabsl(got - want), bound);
		return false;
	}
	return true;
}

static bool exact_equal(vkr_dtype dtype, vkr_value a, vkr_value b)
{
	if (is_nan_value(dtype, a) || is_nan_value(dtype, b))
		return is_nan_value(dtype, a) && is_nan_value(dtype, b);
	if (dtype == VKR_DTYPE_F32)
		return a.f32 == b.f32;
	if (dtype == VKR_DTYPE_F64)
		return a.f64 == b.f64;
	return memcmp(&a, &b, proto_dtype_size(dtype)) == 0;
}

static void describe_mismatch(vkr_dtype dtype, vkr_value got, vkr_value want, size_t index,
			      char *why, size_t why_size)
{
	switch (dtype) {
	case VKR_DTYPE_F32:
		snprintf(why, why_size, "element %zu: got %.9g, want %.9g", index, got.f32, want.f32);
		break;
	case VKR_DTYPE_F64:
		snprintf(why, why_size, "element %zu: got %.17g, want %.17g", index, got.f64, want.f64);
		break;
	case VKR_DTYPE_I32:
		snprintf(why, why_size, "element %zu: got %d, want %d", index, got.i32, want.i32);
		break;
	case VKR_DTYPE_U32:
		snprintf(why, why_size, "element %zu: got %u, want %u", index, got.u32, want.u32);
		break;
	case VKR_DTYPE_I64:
		snprintf(why, why_size, "element %zu: got %lld, want %lld", index, (long long)got.i64,
			 (long long)want.i64);
		break;
	default:
		snprintf(why, why_size, "element %zu: got %llu, want %llu", index,
			 (unsigned long long)got.u64, (unsigned long long)want.u64);
		break;
	}
}

bool ref_reduce_check(vkr_op op, vkr_dtype dtype, vkr_cmp cmp, vkr_value cmp_value,
		      const void *data, size_t n, vkr_value got, char *why, size_t why_size)
{
	if (op == VKR_OP_COUNT) {
		vkr_value want = ref_reduce(op, dtype, cmp, cmp_value, data, n);
		if (got.u64 != want.u64) {
			snprintf(why, why_size, "count: got %llu, want %llu",
				 (unsigned long long)got.u64, (unsigned long long)want.u64);
			return false;
		}
		return true;
	}
	if (float_sum_or_prod(op, dtype)) {
		long double acc = op == VKR_OP_SUM ? 0.0L : 1.0L, abs_sum = 0;
		for (size_t i = 0; i < n; i++) {
			long double x = as_ld(dtype, ref_get(dtype, data, i));
			acc = op == VKR_OP_SUM ? acc + x : acc * x;
			abs_sum += fabsl(x);
		}
		return float_close(op, dtype, acc, abs_sum, n, ceil_log2(n), got, why, why_size, 0);
	}
	vkr_value want = ref_reduce(op, dtype, cmp, cmp_value, data, n);
	if (!exact_equal(dtype, got, want)) {
		describe_mismatch(dtype, got, want, 0, why, why_size);
		return false;
	}
	return true;
}

struct ref_scan_state ref_scan_start(vkr_op op, vkr_dtype dtype)
{
	struct ref_scan_state s = {
		.acc = op == VKR_OP_PROD ? 1.0L : 0.0L, .abs_sum = 0, .exact = ref_neutral(op, dtype),
	};
	return s;
}

/* Element x folded into s: float sums and products in long double, the rest exactly. */
static void scan_step(vkr_op op, vkr_dtype dtype, bool fp, struct ref_scan_state *s, vkr_value x)
{
	if (fp) {
		long double xv = as_ld(dtype, x);
		s->acc = op == VKR_OP_SUM ? s->acc + xv : s->acc * xv;
		s->abs_sum += fabsl(xv);
	} else {
		s->exact = exact_op(op, dtype, s->exact, x);
	}
}

void ref_scan_fold(vkr_op op, vkr_dtype dtype, const void *data, size_t begin, size_t end,
		   struct ref_scan_state *s)
{
	bool fp = float_sum_or_prod(op, dtype);
	size_t size = proto_dtype_size(dtype);
	for (size_t i = begin; i < end; i++)
		scan_step(op, dtype, fp, s, get_sized(data, i, size));
}

void ref_scan_combine(vkr_op op, vkr_dtype dtype, struct ref_scan_state *s, const struct ref_scan_state *t)
{
	if (float_sum_or_prod(op, dtype)) {
		s->acc = op == VKR_OP_SUM ? s->acc + t->acc : s->acc * t->acc;
		s->abs_sum += t->abs_sum;
	} else {
		s->exact = exact_op(op, dtype, s->exact, t->exact);
	}
}

bool ref_scan_check_range(vkr_op op, vkr_dtype dtype, bool exclusive, const void *data, size_t begin,
			  size_t end, struct ref_scan_state s, const void *got, char *why, size_t why_size)
{
	bool fp = float_sum_or_prod(op, dtype);
	int log2_count = ceil_log2(begin + 1); /* of i + 1, the elements up to i */
	size_t size = proto_dtype_size(dtype);
	for (size_t i = begin; i < end; i++) {
		vkr_value x = get_sized(data, i, size);
		vkr_value g = get_sized(got, i, size);
		if (!exclusive)
			scan_step(op, dtype, fp, &s, x);
		bool ok;
		if (fp) {
			if (i + 1 > (size_t)1 << log2_count)
				log2_count++;
			ok = float_close(op, dtype, s.acc, s.abs_sum, i + 1, log2_count, g, why, why_size, i);
		} else {
			ok = exact_equal(dtype, g, s.exact);
			if (!ok)
				describe_mismatch(dtype, g, s.exact, i, why, why_size);
		}
		if (!ok)
			return false;
		if (exclusive)
			scan_step(op, dtype, fp, &s, x);
	}
	return true;
}

bool ref_scan_check(vkr_op op, vkr_dtype dtype, bool exclusive, const void *data, size_t n,
		    const void *got, char *why, size_t why_size)
{
	return ref_scan_check_range(op, dtype, exclusive, data, 0, n, ref_scan_start(op, dtype), got, why,
				    why_size);
}
