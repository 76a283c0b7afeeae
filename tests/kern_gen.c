#include "kern_gen.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "kern_ref.h"

uint64_t gen_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static double unit(uint64_t *rng)
{
	return (double)(gen_rand(rng) >> 11) * 0x1.0p-53; /* [0, 1) */
}

static vkr_value extreme(vkr_dtype dtype, uint64_t r)
{
	vkr_value v;
	memset(&v, 0, sizeof(v));
	switch (dtype) {
	case VKR_DTYPE_F32: {
		static const float f[] = { FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 0x1p-149f, -0.0f, 0.0f, 1e30f };
		v.f32 = f[r % 8];
		break;
	}
	case VKR_DTYPE_F64: {
		static const double d[] = { DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN, 0x1p-1074, -0.0, 0.0, 1e300 };
		v.f64 = d[r % 8];
		break;
	}
	case VKR_DTYPE_I32: {
		static const int32_t i[] = { INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1, -1, 0 };
		v.i32 = i[r % 6];
		break;
	}
	case VKR_DTYPE_U32: {
		static const uint32_t u[] = { UINT32_MAX, UINT32_MAX - 1, 0, 1, 0x80000000u };
		v.u32 = u[r % 5];
		break;
	}
	case VKR_DTYPE_I64: {
		static const int64_t i[] = { INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, -1, 0 };
		v.i64 = i[r % 6];
		break;
	}
	default: {
		static const uint64_t u[] = { UINT64_MAX, UINT64_MAX - 1, 0, 1, 0x8000000000000000ull };
		v.u64 = u[r % 5];
		break;
	}
	}
	return v;
}

void gen_fill(vkr_dtype dtype, vkr_op op, void *out, size_t n, uint64_t *rng)
{
	bool fp = dtype == VKR_DTYPE_F32 || dtype == VKR_DTYPE_F64;
	for (size_t i = 0; i < n; i++) {
		uint64_t r = gen_rand(rng);
		vkr_value v;
		memset(&v, 0, sizeof(v));
		if (op == VKR_OP_COUNT) {
			int64_t small = (int64_t)(r % 16) - (dtype == VKR_DTYPE_U32 || dtype == VKR_DTYPE_U64 ? 0 : 8);
			if (dtype == VKR_DTYPE_F32)
				v.f32 = (float)small * 0.5f;
			else if (dtype == VKR_DTYPE_F64)
				v.f64 = (double)small * 0.25;
			else
				v.i64 = small; /* low bytes hold the 32-bit value too (two's complement) */
		} else if (r % 64 == 0 && !(fp && (op == VKR_OP_SUM || op == VKR_OP_PROD))) {
			v = extreme(dtype, r >> 8);
		} else if (fp && op == VKR_OP_PROD) {
			double x = 1.0 + (unit(rng) - 0.5) * 0x1p-7;
			if (r % 97 == 0)
				x = -x;
			if (dtype == VKR_DTYPE_F32)
				v.f32 = (float)x;
			else
				v.f64 = x;
		} else if (fp) {
			double x = (unit(rng) - 0.5) * 200.0;
			if (dtype == VKR_DTYPE_F32)
				v.f32 = (float)x;
			else
				v.f64 = x;
		} else if (op == VKR_OP_PROD) {
			v.u64 = r % 8 == 0 ? (r >> 32) % 7 + 1 : (r | 1);
		} else {
			v.u64 = r;
		}
		ref_set(dtype, out, i, v);
	}
}

vkr_value gen_pick(vkr_dtype dtype, const void *data, size_t n, uint64_t *rng)
{
	vkr_value v;
	memset(&v, 0, sizeof(v));
	if (n == 0)
		return v;
	return ref_get(dtype, data, gen_rand(rng) % n);
}
