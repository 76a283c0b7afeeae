/* test_kern_reduce.c: every reduction op x dtype on the real device against the CPU
 * reference, plus the semantics the README documents (wrapping, empty arrays, NaN, inf,
 * determinism, arrays larger than one storage binding). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine_harness.h"
#include "kern_gen.h"
#include "kern_ref.h"
#include "proto_names.h"

/* 12289: a small job that 8-byte types spread over workgroups (KERN_SMALL_SPREAD_BYTES). */
static const size_t sizes[] = { 0,   1,   2,    31,   32,    33,    255,   256,    257,
				511, 512, 513, 4095, 4097, 12289, 65537, 1000003 };
#define SIZE_COUNT (sizeof(sizes) / sizeof(sizes[0]))

static struct gpu *gpu;

static int setup(void **state)
{
	(void)state;
	gpu = harness_gpu();
	harness_seed();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	harness_gpu_done(gpu);
	return 0;
}

/* All sizes of one op and dtype in one command buffer, each at a different misalignment
 * so the scalar head and tail paths are exercised. */
static void check_op_dtype_on(struct gpu *on, vkr_op op, vkr_dtype dtype)
{
	uint64_t rng = harness_seed() ^ ((uint64_t)op << 32) ^ ((uint64_t)dtype << 40);
	struct host_job jobs[SIZE_COUNT * 6];
	void *inputs[SIZE_COUNT];
	size_t count = 0;
	size_t esize = proto_dtype_size(dtype);
	for (size_t s = 0; s < SIZE_COUNT; s++) {
		inputs[s] = malloc(sizes[s] * esize + 1);
		assert_non_null(inputs[s]);
		gen_fill(dtype, op, inputs[s], sizes[s], &rng);
		if (sizes[s] == 0 && (op == VKR_OP_MIN || op == VKR_OP_MAX))
			continue; /* an error, tested separately */
		/* count: every comparison on every size */
		unsigned variants = op == VKR_OP_COUNT ? VKR_CMP_COUNT_ : 1;
		for (unsigned c = 0; c < variants; c++) {
			jobs[count++] = (struct host_job){
				.kind = KERN_REDUCE,
				.op = op,
				.dtype = dtype,
				.cmp = (vkr_cmp)c,
				.cmp_value = gen_pick(dtype, inputs[s], sizes[s], &rng),
				.input = inputs[s],
				.n = sizes[s],
				.misalign = (unsigned)(s % (16 / esize)),
			};
		}
	}
	harness_run(on, jobs, count);
	for (size_t i = 0; i < count; i++) {
		char why[256];
		if (!ref_reduce_check(op, dtype, jobs[i].cmp, jobs[i].cmp_value, jobs[i].input, jobs[i].n,
				      jobs[i].result, why, sizeof(why)))
			fail_msg("%s %s n=%zu cmp=%s: %s", proto_op_name(op), proto_dtype_name(dtype),
				 jobs[i].n, proto_cmp_name(jobs[i].cmp), why);
	}
	for (size_t s = 0; s < SIZE_COUNT; s++)
		free(inputs[s]);
}

static void check_all_dtypes_on(struct gpu *on, vkr_op op)
{
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
		if (!gpu_supports_dtype(on, d)) {
			print_message("device lacks %s; skipped that dtype\n", proto_dtype_name(d));
			continue;
		}
		check_op_dtype_on(on, op, (vkr_dtype)d);
	}
}

static void check_all_dtypes(vkr_op op)
{
	check_all_dtypes_on(gpu, op);
}

static void test_reduce_sum_every_dtype_and_size_matches_reference(void **state)
{
	(void)state;
	check_all_dtypes(VKR_OP_SUM);
}

static void test_reduce_prod_every_dtype_and_size_matches_reference(void **state)
{
	(void)state;
	check_all_dtypes(VKR_OP_PROD);
}

static void test_reduce_min_every_dtype_and_size_matches_reference(void **state)
{
	(void)state;
	check_all_dtypes(VKR_OP_MIN);
}

static void test_reduce_max_every_dtype_and_size_matches_reference(void **state)
{
	(void)state;
	check_all_dtypes(VKR_OP_MAX);
}

static void test_reduce_count_every_cmp_dtype_and_size_matches_reference(void **state)
{
	(void)state;
	check_all_dtypes(VKR_OP_COUNT);
}

static vkr_value reduce_one(vkr_op op, vkr_dtype dtype, const void *data, size_t n)
{
	struct host_job job = { .kind = KERN_REDUCE, .op = op, .dtype = dtype, .input = data, .n = n };
	harness_run(gpu, &job, 1);
	return job.result;
}

/* A value of dtype from a small integer (exact in every dtype). */
static vkr_value value_of(vkr_dtype dtype, int64_t x)
{
	vkr_value v;
	memset(&v, 0, sizeof(v));
	if (dtype == VKR_DTYPE_F32)
		v.f32 = (float)x;
	else if (dtype == VKR_DTYPE_F64)
		v.f64 = (double)x;
	else
		v.i64 = x; /* the low bytes hold the 32-bit value too */
	return v;
}

/* Min and max over many workgroups, with the answer held by one element only: whichever
 * workgroup reads it, and whenever that workgroup arrives, the answer is found (a tail that
 * took only the last workgroup's value, or lost any one workgroup's, fails here; with the
 * generated inputs every workgroup sees the type's limits). Values negative and positive;
 * for f64 the answer differs from the others in its low word only; for floats a lone NaN,
 * which wins either way. Positions at the ends, in the scalar head and tail, and at random.
 * Checked by the reference (NaN: any NaN). */
static void test_reduce_min_max_find_a_lone_extreme_anywhere(void **state)
{
	(void)state;
	enum { N = 1000003, PLACES = 10 };
	uint64_t rng = harness_seed() + 29;
	void *input = malloc(N * 8);
	assert_non_null(input);
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
		if (!gpu_supports_dtype(gpu, d))
			continue;
		bool fp = d == VKR_DTYPE_F32 || d == VKR_DTYPE_F64;
		bool is_unsigned = d == VKR_DTYPE_U32 || d == VKR_DTYPE_U64;
		/* Others in [low, low + 1000), the lone one outside on the op's side. */
		int64_t low = is_unsigned ? 1000 : -500;
		for (unsigned o = 0; o < 4; o++) {
			vkr_op op = o % 2 ? VKR_OP_MAX : VKR_OP_MIN;
			bool nan = o >= 2;
			if (nan && !fp)
				continue;
			for (size_t i = 0; i < N; i++) {
				vkr_value v = value_of(d, low + (int64_t)(gen_rand(&rng) % 1000));
				if (d == VKR_DTYPE_F64)
					v.f64 += 0x1p-29; /* so that the lone value below differs in its low word */
				ref_set(d, input, i, v);
			}
			vkr_value lone = value_of(d, op == VKR_OP_MAX ? low + 1000 : low - 1);
			if (d == VKR_DTYPE_F64)
				lone.f64 = op == VKR_OP_MAX ? (double)(low + 999) + 0x1p-28 : (double)low + 0x1p-30;
			if (nan && d == VKR_DTYPE_F32)
				lone.f32 = NAN;
			else if (nan)
				lone.f64 = NAN;
			size_t places[PLACES] = { 0, 1, N / 2, N - 2, N - 1 };
			for (size_t k = 5; k < PLACES; k++)
				places[k] = (size_t)(gen_rand(&rng) % N);
			for (size_t k = 0; k < PLACES; k++) {
				vkr_value was = ref_get(d, input, places[k]);
				ref_set(d, input, places[k], lone);
				struct host_job job = { .kind = KERN_REDUCE, .op = op, .dtype = d, .input = input,
							.n = N, .misalign = (unsigned)(k % 2) };
				harness_run(gpu, &job, 1);
				char why[256];
				if (!ref_reduce_check(op, d, VKR_CMP_EQ, lone, input, N, job.result, why, sizeof(why)))
					fail_msg("%s %s, the answer%s at %zu of %d (misaligned by %u): %s",
						 proto_op_name(op), proto_dtype_name(d), nan ? " (NaN)" : "",
						 places[k], N, job.misalign, why);
				if (!nan && memcmp(&job.result, &lone, proto_dtype_size(d)) != 0)
					fail_msg("%s %s, the answer at %zu: %#llx, not the lone value's bits",
						 proto_op_name(op), proto_dtype_name(d), places[k],
						 (unsigned long long)job.result.u64);
				ref_set(d, input, places[k], was);
			}
		}
	}
	free(input);
}

/* The atomic tails take no count of workgroups: a grid of 2^16 or more keeps them all (the
 * 32-bit sums once counted arrivals in 16 bits of their word). */
static void test_reduce_atomic_tails_on_a_grid_of_2_16_or_more(void **state)
{
	(void)state;
	assert_int_equal(setenv("VKR_REDUCE_WORKGROUPS", "70000", 1), 0);
	struct gpu *wide = harness_gpu();
	unsetenv("VKR_REDUCE_WORKGROUPS");
	const struct gpu_info *info = gpu_get_info(wide);
	if (info->reduce_workgroups < (1u << 16))
		print_message("this device's grid is capped at %u workgroups\n", info->reduce_workgroups);
	assert_true(kern_atomic_sums32(info, VKR_DTYPE_I32, VKR_OP_SUM) == info->reduce_atomic_tails);
	assert_true(kern_atomic_sums32(info, VKR_DTYPE_F32, VKR_OP_COUNT) == info->reduce_atomic_tails);
	assert_true(kern_atomic_extremes(info, VKR_DTYPE_I32, VKR_OP_MAX) == info->reduce_atomic_tails);
	assert_true(kern_atomic_sums(info, VKR_DTYPE_I64, VKR_OP_SUM) == info->reduce_atomic_tails);
	check_op_dtype_on(wide, VKR_OP_SUM, VKR_DTYPE_I32);
	check_op_dtype_on(wide, VKR_OP_COUNT, VKR_DTYPE_U32);
	harness_gpu_done(wide);
}

/* The workgroup tree has two builds: subgroup shuffles, the default where the device has them,
 * and the tree in shared memory (VKR_REDUCE_TREE=shared, and devices without them). This runs
 * every op, dtype and size on a second device instance with the other one (the suite's other
 * tests cover the first). The suite also runs these tests with lavapipe's subgroups of 4 and
 * 16 lanes (LP_NATIVE_VECTOR_WIDTH) besides its default 8. */
static void test_reduce_other_workgroup_tree_matches_reference(void **state)
{
	(void)state;
	bool subgroup = gpu_get_info(gpu)->reduce_subgroup_tree;
	struct gpu *other = harness_gpu_with_env("VKR_REDUCE_TREE", subgroup ? "shared" : "subgroup");
	if (!subgroup && !gpu_get_info(other)->reduce_subgroup_tree)
		print_message("device has no subgroup shuffles: both instances use the tree in shared memory\n");
	else
		assert_true(gpu_get_info(other)->reduce_subgroup_tree != subgroup);
	print_message("workgroup tree under test: %s (subgroup size %u)\n",
		      gpu_get_info(other)->reduce_subgroup_tree ? "subgroup" : "shared",
		      gpu_get_info(other)->subgroup_size);
	for (vkr_op op = VKR_OP_SUM; op <= VKR_OP_COUNT; op++)
		check_all_dtypes_on(other, op);
	harness_gpu_done(other);
}

/* NaNs of every kind the keys must tell from the numbers: quiet and signalling, of either
 * sign, all ones (whose key is the NaN key's own bits), and for f64 with its payload in the
 * low word only (the high word's bits are an infinity's). Where floats are compared by keys
 * each comes back as the quiet NaN; where the device compares natively (DenormPreserve), as
 * itself, the first NaN's bits (README). */
static const uint32_t nan_f32_bits[] = { 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0xffffffffu };
static const uint64_t nan_f64_bits[] = { 0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000001ull,
					 0xfff0000000000001ull, 0x7ff0000080000000ull };
enum { NAN_KINDS = sizeof(nan_f32_bits) / sizeof(nan_f32_bits[0]) };

/* Min and max of n elements with one NaN at position `at`, the array misaligned and held
 * in `parts` parts: the NaN's result bits must be `want`. */
static void check_nan_result(vkr_op op, vkr_dtype d, const void *data, size_t n, unsigned misalign,
			     unsigned parts, uint64_t nan, size_t at)
{
	bool keys = d == VKR_DTYPE_F32 ? !gpu_get_info(gpu)->denorm_preserve32 : !gpu_get_info(gpu)->denorm_preserve64;
	uint64_t want = keys ? (d == VKR_DTYPE_F32 ? 0x7fc00000u : 0x7ff8000000000000ull) : nan;
	struct host_job job = { .kind = KERN_REDUCE, .op = op, .dtype = d, .input = data, .n = n,
				.misalign = misalign, .parts = parts };
	harness_run(gpu, &job, 1);
	uint64_t got = d == VKR_DTYPE_F32 ? job.result.u32 : job.result.u64;
	if (got != want)
		fail_msg("%s %s n=%zu misalign %u parts %u, NaN %#llx at %zu: %#llx, want %#llx", proto_op_name(op),
			 proto_dtype_name(d), n, misalign, parts, (unsigned long long)nan, at, (unsigned long long)got,
			 (unsigned long long)want);
}

static void check_nan_propagates(size_t n, unsigned misalign, unsigned parts)
{
	float *f = calloc(n, sizeof(*f));
	double *d = calloc(n, sizeof(*d));
	assert_non_null(f);
	assert_non_null(d);
	const size_t positions[] = { 0, 1, n / 2 - 1, n - 1 };
	for (size_t k = 0; k < NAN_KINDS; k++) {
		for (size_t p = 0; p < 4; p++) {
			for (size_t i = 0; i < n; i++) {
				f[i] = (float)i - (float)(n / 2);
				d[i] = (double)i - (double)(n / 2);
			}
			memcpy(&f[positions[p]], &nan_f32_bits[k], sizeof(float));
			memcpy(&d[positions[p]], &nan_f64_bits[k], sizeof(double));
			for (vkr_op op = VKR_OP_MIN; op <= VKR_OP_MAX; op++) {
				check_nan_result(op, VKR_DTYPE_F32, f, n, misalign, parts, nan_f32_bits[k], positions[p]);
				if (gpu_supports_dtype(gpu, VKR_DTYPE_F64))
					check_nan_result(op, VKR_DTYPE_F64, d, n, misalign, parts, nan_f64_bits[k],
							 positions[p]);
			}
		}
	}
	free(f);
	free(d);
}

/* A small job and a one-dispatch reduction (by atomics where the device has them), whole
 * vectors and scalar heads and tails, and an array in three parts (two passes). */
static void test_reduce_min_max_propagate_nan(void **state)
{
	(void)state;
	check_nan_propagates(10000, 0, 1);
	check_nan_propagates(16385, 1, 1);
	check_nan_propagates(100003, 3, 1);
	check_nan_propagates(30001, 1, 3);
}

/* A value of float dtype d from a double (f32 rounds it). */
static vkr_value float_value(vkr_dtype d, double x)
{
	vkr_value v;
	memset(&v, 0, sizeof(v));
	if (d == VKR_DTYPE_F32)
		v.f32 = (float)x;
	else
		v.f64 = x;
	return v;
}

static double float_result(vkr_dtype d, vkr_value v)
{
	return d == VKR_DTYPE_F32 ? (double)v.f32 : v.f64;
}

/* Min or max of n elements where every seventh is the infinity on the op's other side (-inf
 * for max): it is a value, never a NaN, scattered through every invocation's vectors and as
 * the whole array; a NaN beside it whose high word is that infinity's (f64: the payload in
 * the low word only, what reduce.comp's NaN probe adds its low-word bit for) is still a NaN,
 * wherever it is. The fold's own side is tested by test_reduce_min_max_propagate_nan. */
static void check_other_side_infinity(vkr_op op, vkr_dtype d, size_t n, unsigned misalign, unsigned parts)
{
	bool max = op == VKR_OP_MAX;
	double other = max ? -INFINITY : INFINITY;
	void *data = malloc(n * 8);
	assert_non_null(data);
	for (size_t i = 0; i < n; i++)
		ref_set(d, data, i, float_value(d, i % 7 == 3 ? other : (double)(i % 1000) - 500.0));
	struct host_job job = { .kind = KERN_REDUCE, .op = op, .dtype = d, .input = data, .n = n,
				.misalign = misalign, .parts = parts };
	harness_run(gpu, &job, 1);
	double want = max ? 499.0 : -500.0;
	if (float_result(d, job.result) != want)
		fail_msg("%s %s n=%zu misalign %u parts %u, %g among the values: %g, want %g", proto_op_name(op),
			 proto_dtype_name(d), n, misalign, parts, other, float_result(d, job.result), want);
	uint64_t nan = d == VKR_DTYPE_F32 ? (max ? 0xff800001u : 0x7f800001u)
					  : (max ? 0xfff0000000000001ull : 0x7ff0000000000001ull);
	const size_t positions[] = { 0, 3, n / 2, n - 1 };
	for (size_t p = 0; p < 4; p++) {
		ref_set(d, data, positions[p], (vkr_value){ .u64 = nan }); /* f32: the low bytes */
		check_nan_result(op, d, data, n, misalign, parts, nan, positions[p]);
		ref_set(d, data, positions[p], float_value(d, 0.0));
	}
	for (size_t i = 0; i < n; i++)
		ref_set(d, data, i, float_value(d, other));
	job.result.u64 = 0;
	harness_run(gpu, &job, 1);
	if (float_result(d, job.result) != other)
		fail_msg("%s %s n=%zu, every element %g: %g", proto_op_name(op), proto_dtype_name(d), n, other,
			 float_result(d, job.result));
	free(data);
}

static void test_reduce_min_max_other_side_infinity_is_no_nan(void **state)
{
	(void)state;
	const size_t lengths[] = { 10000, 100003, 1000003 };
	for (vkr_op op = VKR_OP_MIN; op <= VKR_OP_MAX; op++) {
		for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
			if ((d != VKR_DTYPE_F32 && d != VKR_DTYPE_F64) || !gpu_supports_dtype(gpu, d))
				continue;
			for (size_t k = 0; k < 3; k++)
				check_other_side_infinity(op, d, lengths[k], (unsigned)k, 1);
			check_other_side_infinity(op, d, 30001, 1, 3);
		}
	}
}

static uint32_t f32_bits(float x)
{
	uint32_t b;
	memcpy(&b, &x, sizeof(b));
	return b;
}

/* Subnormals are values, as in numpy: a device that flushes them to zero in float compares
 * or in min()/max() (the H200 does) must still return their bits and count them. Small and
 * large arrays take different kernels, so both are checked. */
static void test_reduce_subnormals_are_not_flushed(void **state)
{
	(void)state;
	const size_t lengths[] = { 3, 100000 };
	for (size_t s = 0; s < 2; s++) {
		size_t n = lengths[s];
		float *f = malloc(n * sizeof(*f));
		assert_non_null(f);
		for (size_t i = 0; i < n; i++)
			f[i] = 1.0f;
		f[n / 2] = 0x1p-149f;
		f[n - 1] = 0.0f;
		f[0] = -0x1p-149f;
		assert_int_equal(f32_bits(reduce_one(VKR_OP_MIN, VKR_DTYPE_F32, f, n).f32), f32_bits(-0x1p-149f));
		for (size_t i = 0; i < n; i++)
			f[i] = -f[i];
		assert_int_equal(f32_bits(reduce_one(VKR_OP_MAX, VKR_DTYPE_F32, f, n).f32), f32_bits(0x1p-149f));
		struct host_job job = { .kind = KERN_REDUCE, .op = VKR_OP_COUNT, .dtype = VKR_DTYPE_F32,
					.cmp = VKR_CMP_GT, .input = f, .n = n };
		job.cmp_value.f32 = 0.0f;
		harness_run(gpu, &job, 1);
		assert_int_equal(job.result.u64, 1); /* only 2^-149 (the negated first element) */
		job.cmp = VKR_CMP_EQ;
		harness_run(gpu, &job, 1);
		assert_int_equal(job.result.u64, 1); /* only the zero at the end */
		free(f);
	}
}

/* Every comparison against every edge value (zeros of both signs, subnormals, infinities,
 * NaN) on an array of those edge values, small and large (two kernels): numpy's answers. */
/* Every comparison against every edge value of a dtype, over an array of those values
 * (edge_count of them, then 50,000). */
static void check_count_edges(vkr_dtype dtype, const void *edges, size_t edge_count)
{
	size_t esize = proto_dtype_size(dtype);
	const size_t lengths[] = { edge_count, 50000 };
	for (size_t l = 0; l < 2; l++) {
		size_t n = lengths[l];
		unsigned char *x = malloc(n * esize);
		struct host_job *jobs = calloc(edge_count * VKR_CMP_COUNT_, sizeof(*jobs));
		assert_non_null(x);
		assert_non_null(jobs);
		for (size_t i = 0; i < n; i++)
			memcpy(x + i * esize, (const unsigned char *)edges + ((i * 7) % edge_count) * esize, esize);
		size_t count = 0;
		for (size_t e = 0; e < edge_count; e++)
			for (unsigned c = 0; c < VKR_CMP_COUNT_; c++) {
				jobs[count] = (struct host_job){ .kind = KERN_REDUCE, .op = VKR_OP_COUNT,
								 .dtype = dtype, .cmp = (vkr_cmp)c,
								 .input = x, .n = n };
				memcpy(&jobs[count++].cmp_value, (const unsigned char *)edges + e * esize, esize);
			}
		harness_run(gpu, jobs, count);
		for (size_t i = 0; i < count; i++) {
			char why[256];
			if (!ref_reduce_check(VKR_OP_COUNT, dtype, jobs[i].cmp, jobs[i].cmp_value, x, n,
					      jobs[i].result, why, sizeof(why)))
				fail_msg("%s n=%zu x %s edge %zu: %s", proto_dtype_name(dtype), n,
					 proto_cmp_name(jobs[i].cmp), i / VKR_CMP_COUNT_, why);
		}
		free(jobs);
		free(x);
	}
}

/* Count-if compares by key ranges (shaders/reduce.comp): the edges are where a range could be
 * off by one or wrap. Zeros of both signs, the smallest subnormals, infinities, NaNs of both
 * signs and the largest finite values; integers' extremes and their neighbours. */
static void test_reduce_count_edge_values_match_reference(void **state)
{
	(void)state;
	const float f32_edges[] = { -0.0f, 0.0f, 0x1p-149f, -0x1p-149f, 0x1p-126f, 1.0f, -1.0f,
				    INFINITY, -INFINITY, NAN, -NAN, FLT_MAX, -FLT_MAX };
	const double f64_edges[] = { -0.0, 0.0, 0x1p-1074, -0x1p-1074, 0x1p-1022, 1.0, -1.0,
				     0x1.0000000000001p0, 0x1.fffffffffffffp-1, /* low words all 0 and all 1 */
				     INFINITY, -INFINITY, NAN, -NAN, DBL_MAX, -DBL_MAX };
	const int32_t i32_edges[] = { INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX };
	const uint32_t u32_edges[] = { 0, 1, 0x7fffffffu, 0x80000000u, UINT32_MAX - 1, UINT32_MAX };
	const int64_t i64_edges[] = { INT64_MIN, INT64_MIN + 1, -1, 0, 1, (int64_t)UINT32_MAX,
				      (int64_t)UINT32_MAX + 1, INT64_MAX - 1, INT64_MAX };
	const uint64_t u64_edges[] = { 0, 1, UINT32_MAX, (uint64_t)UINT32_MAX + 1, INT64_MAX,
				       (uint64_t)INT64_MAX + 1, UINT64_MAX - 1, UINT64_MAX };
	check_count_edges(VKR_DTYPE_F32, f32_edges, sizeof(f32_edges) / sizeof(f32_edges[0]));
	check_count_edges(VKR_DTYPE_I32, i32_edges, sizeof(i32_edges) / sizeof(i32_edges[0]));
	check_count_edges(VKR_DTYPE_U32, u32_edges, sizeof(u32_edges) / sizeof(u32_edges[0]));
	if (gpu_supports_dtype(gpu, VKR_DTYPE_F64))
		check_count_edges(VKR_DTYPE_F64, f64_edges, sizeof(f64_edges) / sizeof(f64_edges[0]));
	else
		print_message("device lacks f64; skipped its edges\n");
	if (gpu_supports_dtype(gpu, VKR_DTYPE_I64)) {
		check_count_edges(VKR_DTYPE_I64, i64_edges, sizeof(i64_edges) / sizeof(i64_edges[0]));
		check_count_edges(VKR_DTYPE_U64, u64_edges, sizeof(u64_edges) / sizeof(u64_edges[0]));
	} else {
		print_message("device lacks i64; skipped its edges\n");
	}
}

static void test_reduce_infinities_are_ordinary_values(void **state)
{
	(void)state;
	const float f[] = { 3.0f, INFINITY, -2.0f, -INFINITY, 7.0f };
	assert_true(reduce_one(VKR_OP_MIN, VKR_DTYPE_F32, f, 5).f32 == -INFINITY);
	assert_true(reduce_one(VKR_OP_MAX, VKR_DTYPE_F32, f, 5).f32 == INFINITY);
	assert_true(isnan(reduce_one(VKR_OP_SUM, VKR_DTYPE_F32, f, 5).f32)); /* inf + -inf */
	const float g[] = { INFINITY, INFINITY };
	assert_true(reduce_one(VKR_OP_MIN, VKR_DTYPE_F32, g, 2).f32 == INFINITY);
	assert_true(reduce_one(VKR_OP_SUM, VKR_DTYPE_F32, g, 2).f32 == INFINITY);
}

static void test_reduce_empty_gives_neutral_and_min_max_are_errors(void **state)
{
	(void)state;
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
		if (!gpu_supports_dtype(gpu, d))
			continue;
		vkr_value sum = reduce_one(VKR_OP_SUM, d, NULL, 0);
		vkr_value prod = reduce_one(VKR_OP_PROD, d, NULL, 0);
		vkr_value count = reduce_one(VKR_OP_COUNT, d, NULL, 0);
		vkr_value zero = ref_neutral(VKR_OP_SUM, d), one = ref_neutral(VKR_OP_PROD, d);
		assert_memory_equal(&sum, &zero, proto_dtype_size(d));
		assert_memory_equal(&prod, &one, proto_dtype_size(d));
		assert_int_equal(count.u64, 0);
		for (vkr_op op = VKR_OP_MIN; op <= VKR_OP_MAX; op++) {
			struct kern_job job = { .kind = KERN_REDUCE, .op = op, .dtype = d, .n = 0 };
			char msg[128] = "";
			assert_int_equal(kern_validate(gpu, &job, msg, sizeof(msg)), -EINVAL);
			assert_non_null(strstr(msg, "empty"));
		}
	}
}

static void test_reduce_integer_sum_and_prod_wrap(void **state)
{
	(void)state;
	const int32_t i[] = { INT32_MAX, 1 };
	assert_int_equal(reduce_one(VKR_OP_SUM, VKR_DTYPE_I32, i, 2).i32, INT32_MIN);
	const uint32_t u[] = { 0x10000u, 0x10000u, 3u };
	assert_int_equal(reduce_one(VKR_OP_PROD, VKR_DTYPE_U32, u, 3).u32, 0);
	const uint32_t w[] = { UINT32_MAX, 2 };
	assert_int_equal(reduce_one(VKR_OP_SUM, VKR_DTYPE_U32, w, 2).u32, 1);
	if (gpu_supports_dtype(gpu, VKR_DTYPE_I64)) {
		const int64_t l[] = { INT64_MAX, 2 };
		assert_true(reduce_one(VKR_OP_SUM, VKR_DTYPE_I64, l, 2).i64 == INT64_MIN + 1);
		const uint64_t m[] = { 0x100000000ull, 0x100000000ull, 5 };
		assert_true(reduce_one(VKR_OP_PROD, VKR_DTYPE_U64, m, 3).u64 == 0);
	}
}

static void test_reduce_count_follows_ieee_for_nan(void **state)
{
	(void)state;
	const float f[] = { NAN, 1.0f, 2.0f, NAN };
	for (unsigned c = 0; c < VKR_CMP_COUNT_; c++) {
		struct host_job job = { .kind = KERN_REDUCE, .op = VKR_OP_COUNT, .dtype = VKR_DTYPE_F32,
					.cmp = c, .input = f, .n = 4 };
		job.cmp_value.f32 = 1.0f;
		harness_run(gpu, &job, 1);
		static const uint64_t want[] = { 1, 3, 0, 1, 1, 2 }; /* eq ne lt le gt ge */
		assert_int_equal(job.result.u64, want[c]);
		job.cmp_value.f32 = NAN;
		harness_run(gpu, &job, 1);
		assert_int_equal(job.result.u64, c == VKR_CMP_NE ? 4 : 0);
	}
}

static void test_reduce_is_deterministic_alone_and_in_a_batch_of_fifty(void **state)
{
	(void)state;
	uint64_t rng = harness_seed() + 7;
	size_t n = 1000003;
	float *x = malloc(n * sizeof(*x));
	double *y = malloc(n * sizeof(*y));
	assert_non_null(x);
	assert_non_null(y);
	gen_fill(VKR_DTYPE_F32, VKR_OP_SUM, x, n, &rng);
	gen_fill(VKR_DTYPE_F64, VKR_OP_SUM, y, n, &rng);
	vkr_value alone1 = reduce_one(VKR_OP_SUM, VKR_DTYPE_F32, x, n);
	vkr_value alone2 = reduce_one(VKR_OP_SUM, VKR_DTYPE_F32, x, n);
	assert_memory_equal(&alone1.f32, &alone2.f32, sizeof(float));

	struct host_job jobs[51];
	for (size_t i = 0; i < 51; i++) {
		/* Others of every shape: different sizes, dtypes and offsets around ours. */
		jobs[i] = (struct host_job){ .kind = KERN_REDUCE, .op = (vkr_op)(i % 2), .dtype = VKR_DTYPE_F64,
					     .input = y, .n = n - i * 997, .misalign = (unsigned)(i % 2) };
		if (!gpu_supports_dtype(gpu, VKR_DTYPE_F64))
			jobs[i].dtype = VKR_DTYPE_F32, jobs[i].input = x;
	}
	jobs[25] = (struct host_job){ .kind = KERN_REDUCE, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_F32,
				      .input = x, .n = n };
	harness_run(gpu, jobs, 51);
	assert_memory_equal(&jobs[25].result.f32, &alone1.f32, sizeof(float));
	free(x);
	free(y);
}

/* A reduction of one buffer runs in one dispatch (its last workgroup folds the partials),
 * with flagged partials in the command buffer's table (reduce.comp's FLAGGED_PARTIALS) for
 * 4-byte accumulators where that memory is device-local, as on lavapipe and the H200, or
 * fenced ones in the scratch (8-byte accumulators, and VKR_REDUCE=fenced; VKR_REDUCE=flagged
 * flags 8-byte ones too), in pipelines of their own; count-if, integer sums, and min and
 * max have no partials by default, where the device has 64-bit buffer atomics (summed
 * arrivals, atomic sums and extremes: atomic tails, their own pipelines again; VKR_REDUCE=partials
 * keeps the default otherwise); on a device made with
 * VKR_REDUCE=two-pass a second dispatch folds them.
 * All fold in the same order: every op, dtype and comparison gives the same bits each way, 3
 * jobs of each in one command buffer (3 arrival words, 3 jobs' flagged partials one after
 * the other in the table) at different sizes and misalignments. 700 workgroups
 * (VKR_REDUCE_WORKGROUPS) make many arrive at once, and the last one fold 700 partials in
 * three rounds of its 256 invocations. */
static void test_reduce_in_one_dispatch_gives_the_bits_of_two_passes(void **state)
{
	(void)state;
	enum { WAYS = 5, JOBS = 3 };
	static const char *const ways[WAYS] = { NULL, "fenced", "two-pass", "flagged", "partials" };
	struct gpu *gpus[WAYS];
	assert_int_equal(setenv("VKR_REDUCE_WORKGROUPS", "700", 1), 0);
	for (size_t w = 0; w < WAYS; w++)
		gpus[w] = ways[w] ? harness_gpu_with_env("VKR_REDUCE", ways[w]) : harness_gpu();
	unsetenv("VKR_REDUCE_WORKGROUPS");
	if (!kern_flagged_partials(gpu_get_info(gpus[0]), 4))
		print_message("upload memory is not device-local here: the default is fenced partials too\n");
	assert_false(kern_flagged_partials(gpu_get_info(gpus[1]), 4));
	assert_false(kern_flagged_partials(gpu_get_info(gpus[0]), 8));
	assert_true(kern_flagged_partials(gpu_get_info(gpus[3]), 8) ==
		    kern_flagged_partials(gpu_get_info(gpus[0]), 4));
	assert_true(kern_flagged_partials(gpu_get_info(gpus[4]), 4) ==
		    kern_flagged_partials(gpu_get_info(gpus[0]), 4));
	bool summed = gpu_get_info(gpus[0])->reduce_atomic_tails;
	if (!summed)
		print_message("no 64-bit buffer atomics or no subgroup tree here: no atomic tails\n");
	for (size_t w = 1; w < WAYS; w++)
		assert_false(gpu_get_info(gpus[w])->reduce_atomic_tails);
	assert_true(kern_atomic_sums32(gpu_get_info(gpus[0]), VKR_DTYPE_I32, VKR_OP_SUM) == summed);
	assert_true(kern_atomic_sums32(gpu_get_info(gpus[0]), VKR_DTYPE_F64, VKR_OP_COUNT) == summed);
	assert_false(kern_atomic_sums32(gpu_get_info(gpus[0]), VKR_DTYPE_F32, VKR_OP_SUM));
	assert_false(kern_atomic_sums32(gpu_get_info(gpus[0]), VKR_DTYPE_I64, VKR_OP_SUM));
	assert_false(kern_atomic_sums32(gpu_get_info(gpus[0]), VKR_DTYPE_I32, VKR_OP_MAX));
	assert_true(kern_atomic_sums(gpu_get_info(gpus[0]), VKR_DTYPE_I64, VKR_OP_SUM) == summed);
	assert_true(kern_atomic_sums(gpu_get_info(gpus[0]), VKR_DTYPE_U64, VKR_OP_SUM) == summed);
	assert_false(kern_atomic_sums(gpu_get_info(gpus[0]), VKR_DTYPE_I32, VKR_OP_SUM));
	assert_false(kern_atomic_sums(gpu_get_info(gpus[0]), VKR_DTYPE_F64, VKR_OP_SUM));
	assert_false(kern_atomic_sums(gpu_get_info(gpus[0]), VKR_DTYPE_I64, VKR_OP_PROD));
	for (size_t w = 1; w < WAYS; w++)
		assert_false(kern_atomic_sums(gpu_get_info(gpus[w]), VKR_DTYPE_I64, VKR_OP_SUM));
	size_t n = 3000017; /* f32: 750,004 vectors, enough for 700 workgroups of 4 each */
	struct kern_job probe = { .kind = KERN_REDUCE, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_F32, .n = n };
	for (size_t w = 0; w < WAYS; w++)
		assert_int_equal(kern_job_phases(gpus[w], &probe), w == 2 ? 2 : 1);
	/* One dispatch runs in pipelines of its own (reduce.comp's ONE_DISPATCH), which a device
	 * made with VKR_REDUCE=two-pass does not build; atomic tails in others again, which
	 * only the default builds. */
	size_t one_pipelines[WAYS] = { 0 }, atomic_pipelines[WAYS] = { 0 };
	for (uint32_t i = 0; i < kern_pipeline_count(); i++) {
		const struct kern_pipeline_source *src = kern_pipeline_source(i);
		/* Every index of the table is a pipeline: no gap between its ranges. */
		assert_non_null(src->name);
		assert_non_null(src->code);
		for (size_t w = 0; w < WAYS; w++) {
			bool available = src->one_dispatch && gpu_pipeline_available(gpus[w], i);
			*(src->atomic_tail || src->host_fold ? &atomic_pipelines[w] : &one_pipelines[w]) += available;
		}
	}
	/* Each op and dtype has one pipeline for one dispatch: the generic one, or on the
	 * default device an atomic tail or the host's fold in its place, where the generic one is
	 * not built (kern_pipeline_superseded). */
	assert_true(one_pipelines[1] > 0);
	assert_int_equal(one_pipelines[0] + atomic_pipelines[0], one_pipelines[1]);
	for (size_t w = 1; w < WAYS; w++) {
		assert_int_equal(one_pipelines[w], w == 2 ? 0 : one_pipelines[1]);
		assert_int_equal(atomic_pipelines[w], 0);
	}
	/* Count-if of each dtype the device has, the sums of integers, and min and max of
	 * each dtype by atomics (floats where they are compared by keys); the other sums and
	 * products by partials the host folds (the default, VKR_REDUCE_FOLD=host). */
	size_t atomic_expected = 0;
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
		if (!gpu_supports_dtype(gpus[0], d))
			continue;
		atomic_expected += kern_atomic_sums32(gpu_get_info(gpus[0]), d, VKR_OP_COUNT) +
				   kern_atomic_sums32(gpu_get_info(gpus[0]), d, VKR_OP_SUM) +
				   kern_atomic_sums(gpu_get_info(gpus[0]), d, VKR_OP_SUM) +
				   2 * kern_atomic_extremes(gpu_get_info(gpus[0]), d, VKR_OP_MAX) +
				   kern_host_fold(gpu_get_info(gpus[0]), d, VKR_OP_SUM) +
				   kern_host_fold(gpu_get_info(gpus[0]), d, VKR_OP_PROD);
		assert_true(kern_atomic_extremes(gpu_get_info(gpus[0]), d, VKR_OP_MIN) ==
			    kern_atomic_extremes(gpu_get_info(gpus[0]), d, VKR_OP_MAX));
		assert_false(kern_atomic_extremes(gpu_get_info(gpus[0]), d, VKR_OP_PROD));
	}
	assert_true(kern_atomic_extremes(gpu_get_info(gpus[0]), VKR_DTYPE_I64, VKR_OP_MIN) == summed);
	assert_int_equal(atomic_pipelines[0], atomic_expected);
	assert_true(summed ? atomic_expected >= 10 : atomic_expected == 0);
	uint64_t rng = harness_seed() + 23;
	void *input = malloc(n * 8);
	assert_non_null(input);
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
		if (!gpu_supports_dtype(gpus[0], d))
			continue;
		for (unsigned op = 0; op < VKR_OP_COUNT_; op++) {
			gen_fill(d, op, input, n, &rng);
			struct host_job jobs[WAYS][JOBS];
			for (size_t i = 0; i < JOBS; i++) {
				jobs[0][i] = (struct host_job){
					.kind = KERN_REDUCE, .op = op, .dtype = d,
					.cmp = (vkr_cmp)(i % VKR_CMP_COUNT_),
					.cmp_value = gen_pick(d, input, n, &rng),
					/* The last job has 49 workgroups where the others have 700,
					 * so the table's regions differ in size (and the last fold
					 * leaves most invocations without a partial). Lavapipe runs
					 * the dispatches one after another, so jobs that shared a
					 * region would still pass here; on a GPU they would not. */
					.input = input, .n = i == JOBS - 1 ? 200003 : n - i * 39119,
					.misalign = (unsigned)(i % (16 / proto_dtype_size(d))),
				};
				for (size_t w = 1; w < WAYS; w++)
					jobs[w][i] = jobs[0][i];
			}
			for (size_t w = 0; w < WAYS; w++)
				harness_run(gpus[w], jobs[w], JOBS);
			for (size_t i = 0; i < JOBS; i++) {
				const struct host_job *one = &jobs[0][i];
				char why[256];
				if (!ref_reduce_check(op, d, one->cmp, one->cmp_value, input, one->n, one->result,
						      why, sizeof(why)))
					fail_msg("one dispatch, %s %s n=%zu: %s", proto_op_name(op),
						 proto_dtype_name(d), one->n, why);
				for (size_t w = 1; w < WAYS; w++)
					if (memcmp(&one->result, &jobs[w][i].result, sizeof(one->result)) != 0)
						fail_msg("%s %s n=%zu: one dispatch %#llx, %s %#llx",
							 proto_op_name(op), proto_dtype_name(d), one->n,
							 (unsigned long long)one->result.u64, ways[w],
							 (unsigned long long)jobs[w][i].result.u64);
			}
		}
	}
	free(input);
	/* And the runs used them, and only them (the harness's devices build each pipeline when a
	 * command buffer first binds it): every op and dtype ran once each way. */
	for (size_t w = 0; w < WAYS; w++) {
		assert_true(gpu_builds_on_first_use(gpus[w]));
		size_t one_built = 0, other_built = 0;
		for (uint32_t i = 0; i < kern_pipeline_count(); i++) {
			const struct kern_pipeline_source *src = kern_pipeline_source(i);
			if (src->reduction && gpu_pipeline_built(gpus[w], i))
				*(src->one_dispatch ? &one_built : &other_built) += 1;
		}
		size_t atomic_built = 0;
		for (uint32_t i = 0; i < kern_pipeline_count(); i++)
			atomic_built += (kern_pipeline_source(i)->atomic_tail || kern_pipeline_source(i)->host_fold) &&
					gpu_pipeline_built(gpus[w], i);
		bool two_pass = w == 2;
		assert_int_equal(atomic_built, w == 0 ? atomic_pipelines[0] : 0);
		/* By default each atomic tail's pipeline ran in place of a one-dispatch one with partials:
		 * as many one-dispatch pipelines built each way, but two-pass. */
		assert_int_equal(one_built, two_pass ? 0 : one_pipelines[1]);
		assert_int_equal(other_built, two_pass ? one_pipelines[1] : 0);
	}
	for (size_t w = 0; w < WAYS; w++)
		harness_gpu_done(gpus[w]);
}

/* Float sums' edges at a size that runs in one dispatch (the tails, not the small path):
 * NaN, the infinities, inf + -inf, overflow, -0 alone (+0), a subnormal total, and an exact
 * cancellation (+0). Cases 0 to 3: a everywhere, b at a third of the array, c at its end;
 * the others the pattern a, b, c repeated. */
static void test_reduce_float_sum_edges_in_one_dispatch(void **state)
{
	(void)state;
	enum { N = 1000003 };
	float *f = malloc(N * sizeof(*f));
	assert_non_null(f);
	const struct { float a, b, c, want; } cases[] = {
		{ 1.0f, NAN, 1.0f, NAN },
		{ 1.0f, INFINITY, 1.0f, INFINITY },
		{ 1.0f, -INFINITY, 1.0f, -INFINITY },
		{ 1.0f, INFINITY, -INFINITY, NAN },
		{ 0x1p110f, 0x1p110f, 0x1p110f, INFINITY }, /* 2^110 * 10^6 > FLT_MAX */
		{ -0x1p110f, -0x1p110f, -0x1p110f, -INFINITY },
		{ -0.0f, -0.0f, -0.0f, 0.0f }, /* +0, as README says (accumulators start at +0) */
		{ 0x1p-149f, 0.0f, 0.0f, 333335 * 0x1p-149f }, /* subnormal, exact: 333,335 of them */
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const float pattern[3] = { cases[c].a, cases[c].b, cases[c].c };
		for (size_t i = 0; i < N; i++)
			f[i] = c < 4 ? cases[c].a : pattern[i % 3];
		if (c < 4) {
			f[N / 3] = cases[c].b;
			f[N - 1] = cases[c].c;
		}
		float want = cases[c].want;
		float got = reduce_one(VKR_OP_SUM, VKR_DTYPE_F32, f, N).f32;
		bool same = isnan(want) ? isnan(got) : f32_bits(got) == f32_bits(want);
		/* Case 7 adds subnormals, which a device without DenormPreserve may flush in the
		 * fold (README, Subnormals): then the partials, and the sum, are +0. */
		if (c == 7 && !gpu_get_info(gpu)->denorm_preserve32 && f32_bits(got) == 0)
			same = true;
		if (!same)
			fail_msg("f32 sum, case %zu: got %a, want %a", c, got, want);
	}
	/* An exact cancellation, exact in any order (quarters, totals below 2^22): the first
	 * half negated in the second gives +0, as x + -x does. */
	for (size_t i = 0; i < N / 2; i++) {
		f[i] = (float)(i % 8) * 0.25f;
		f[N / 2 + i] = -f[i];
	}
	f[N - 1] = 0.0f;
	float zero = reduce_one(VKR_OP_SUM, VKR_DTYPE_F32, f, N).f32;
	if (zero != 0.0f || signbit(zero))
		fail_msg("f32 sum of x and -x: got %a, want +0", zero);
	free(f);
}

/* Small jobs share one dispatch per op and dtype (a job table); each must still give the
 * bits it gives alone, at the edge of the small size and past it: for f32, whose jobs have
 * one workgroup each, and f64, whose jobs of more than KERN_SMALL_SPREAD_BYTES have several
 * and a tail of their own. */
static void check_small_jobs_alone_and_in_a_table(vkr_dtype dtype)
{
	uint64_t rng = harness_seed() + 19 + dtype;
	size_t esize = proto_dtype_size(dtype);
	const size_t sizes_to_try[] = { 1, 1000, KERN_SMALL_SPREAD_BYTES / esize + 1, KERN_SMALL_MAX_ELEMENTS,
					KERN_SMALL_MAX_ELEMENTS + 1 };
	const size_t tries = sizeof(sizes_to_try) / sizeof(sizes_to_try[0]);
	void *x = malloc((KERN_SMALL_MAX_ELEMENTS + 1) * esize);
	assert_non_null(x);
	gen_fill(dtype, VKR_OP_SUM, x, KERN_SMALL_MAX_ELEMENTS + 1, &rng);
	for (size_t s = 0; s < tries; s++) {
		vkr_value alone = reduce_one(VKR_OP_SUM, dtype, x, sizes_to_try[s]);
		/* Not prod: these inputs overflow f32 products, which the reference does not model. */
		static const vkr_op ops[] = { VKR_OP_SUM, VKR_OP_MIN, VKR_OP_MAX, VKR_OP_COUNT };
		struct host_job jobs[200];
		for (size_t i = 0; i < 200; i++)
			jobs[i] = (struct host_job){ .kind = KERN_REDUCE, .op = ops[i % 4], .cmp = VKR_CMP_GT,
						     .dtype = dtype, .input = x,
						     .n = 1 + (i * 37) % KERN_SMALL_MAX_ELEMENTS,
						     .misalign = (unsigned)(i % (16 / esize)) };
		jobs[101] = (struct host_job){ .kind = KERN_REDUCE, .op = VKR_OP_SUM,
					       .dtype = dtype, .input = x, .n = sizes_to_try[s] };
		harness_run(gpu, jobs, 200);
		assert_memory_equal(&jobs[101].result, &alone, esize);
		for (size_t i = 0; i < 200; i++) {
			char why[256];
			if (!ref_reduce_check(jobs[i].op, dtype, jobs[i].cmp, jobs[i].cmp_value, x, jobs[i].n,
					      jobs[i].result, why, sizeof(why)))
				fail_msg("small job %zu (%s %s, n=%zu): %s", i, proto_op_name(jobs[i].op),
					 proto_dtype_name(dtype), jobs[i].n, why);
		}
	}
	free(x);
}

static void test_reduce_small_jobs_give_the_same_bits_alone_and_in_a_table(void **state)
{
	(void)state;
	check_small_jobs_alone_and_in_a_table(VKR_DTYPE_F32);
	if (gpu_supports_dtype(gpu, VKR_DTYPE_F64))
		check_small_jobs_alone_and_in_a_table(VKR_DTYPE_F64);
	else
		print_message("device lacks f64; skipped it\n");
}

static void test_reduce_array_larger_than_one_storage_binding(void **state)
{
	(void)state;
	uint64_t range = gpu_get_info(gpu)->max_storage_buffer_range;
	/* 144 MiB of f32 on lavapipe (range 128 MiB); on devices with a larger range, still
	 * past 128 MiB, which is what this test must cover everywhere. */
	size_t n = (size_t)(range < ((uint64_t)144 << 20) ? range : ((uint64_t)128 << 20)) / 4 + (4u << 20);
	uint64_t rng = harness_seed() + 11;
	float *x = malloc(n * sizeof(*x));
	int32_t *k = malloc(n * sizeof(*k));
	assert_non_null(x);
	assert_non_null(k);
	gen_fill(VKR_DTYPE_F32, VKR_OP_SUM, x, n, &rng);
	gen_fill(VKR_DTYPE_I32, VKR_OP_SUM, k, n, &rng);
	struct host_job jobs[2] = {
		{ .kind = KERN_REDUCE, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_F32, .input = x, .n = n },
		{ .kind = KERN_REDUCE, .op = VKR_OP_MAX, .dtype = VKR_DTYPE_I32, .input = k, .n = n },
	};
	harness_run(gpu, jobs, 2);
	char why[256];
	if (!ref_reduce_check(VKR_OP_SUM, VKR_DTYPE_F32, 0, jobs[0].cmp_value, x, n, jobs[0].result, why, sizeof(why)))
		fail_msg("f32 sum of %zu elements: %s", n, why);
	if (!ref_reduce_check(VKR_OP_MAX, VKR_DTYPE_I32, 0, jobs[1].cmp_value, k, n, jobs[1].result, why, sizeof(why)))
		fail_msg("i32 max of %zu elements: %s", n, why);
	free(x);
	free(k);
}

/* An array held in several buffers (kern_part): every op, dtype and comparison, parts of
 * uneven sizes at different misalignments, against the whole array's reference. */
static void test_reduce_array_in_several_parts_matches_reference(void **state)
{
	(void)state;
	static const size_t part_sizes[] = { 2, 257, 4097, 65537, 1000003 };
	static const unsigned part_counts[] = { 2, 3, 5, 7, KERN_MAX_PARTS };
	for (unsigned op = 0; op < VKR_OP_COUNT_; op++) {
		for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
			if (!gpu_supports_dtype(gpu, d))
				continue;
			uint64_t rng = harness_seed() ^ ((uint64_t)op << 32) ^ ((uint64_t)d << 40) ^ 0x9a27;
			size_t esize = proto_dtype_size(d);
			enum { SIZES = sizeof(part_sizes) / sizeof(part_sizes[0]) };
			struct host_job jobs[SIZES * VKR_CMP_COUNT_];
			void *inputs[SIZES];
			size_t count = 0;
			for (size_t s = 0; s < SIZES; s++) {
				inputs[s] = malloc(part_sizes[s] * esize);
				assert_non_null(inputs[s]);
				gen_fill(d, op, inputs[s], part_sizes[s], &rng);
				unsigned parts = part_counts[s] < part_sizes[s] ? part_counts[s] : (unsigned)part_sizes[s];
				unsigned variants = op == VKR_OP_COUNT ? VKR_CMP_COUNT_ : 1;
				for (unsigned c = 0; c < variants; c++)
					jobs[count++] = (struct host_job){
						.kind = KERN_REDUCE, .op = op, .dtype = d, .cmp = (vkr_cmp)c,
						.cmp_value = gen_pick(d, inputs[s], part_sizes[s], &rng),
						.input = inputs[s], .n = part_sizes[s], .parts = parts,
						.misalign = (unsigned)(s % (16 / esize)),
					};
			}
			harness_run(gpu, jobs, count);
			for (size_t i = 0; i < count; i++) {
				char why[256];
				if (!ref_reduce_check(op, d, jobs[i].cmp, jobs[i].cmp_value, jobs[i].input, jobs[i].n,
						      jobs[i].result, why, sizeof(why)))
					fail_msg("%s %s n=%zu in %u parts cmp=%s: %s", proto_op_name(op),
						 proto_dtype_name(d), jobs[i].n, jobs[i].parts,
						 proto_cmp_name(jobs[i].cmp), why);
			}
			for (size_t s = 0; s < SIZES; s++)
				free(inputs[s]);
		}
	}
}

/* The engine refuses parts that do not describe the array. */
static void test_reduce_parts_must_add_up(void **state)
{
	(void)state;
	struct kern_part parts[2] = { { .n = 100, .src = 4096 }, { .n = 100, .src = 8192 } };
	struct kern_job job = { .kind = KERN_REDUCE, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_U32, .n = 201,
				.dst = 64, .scratch = 128, .parts = parts, .part_count = 2 };
	char msg[256];
	assert_int_equal(kern_validate(gpu, &job, msg, sizeof(msg)), -EINVAL);
	job.n = 200;
	assert_int_equal(kern_validate(gpu, &job, msg, sizeof(msg)), 0);
	parts[1].n = 0;
	job.n = 100;
	assert_int_equal(kern_validate(gpu, &job, msg, sizeof(msg)), -EINVAL);
	parts[1] = (struct kern_part){ .n = 100, .src = 8194 }; /* misaligned */
	job.n = 200;
	assert_int_equal(kern_validate(gpu, &job, msg, sizeof(msg)), -EINVAL);
	job.part_count = KERN_MAX_PARTS + 1;
	assert_int_equal(kern_validate(gpu, &job, msg, sizeof(msg)), -E2BIG);
}

/* Signed zeros and infinities in an array of one-dispatch size: -0 is the smaller zero (as
 * in the small jobs: reduce.comp's keys), infinities are the extremes. */
static void check_zeros_and_infinities_large(void)
{
	size_t n = 100000;
	float *f = malloc(n * sizeof(*f));
	double *d = malloc(n * sizeof(*d));
	assert_non_null(f);
	assert_non_null(d);
	bool f64 = gpu_supports_dtype(gpu, VKR_DTYPE_F64);
	for (int sign = -1; sign <= 1; sign += 2) {
		for (size_t i = 0; i < n; i++) {
			f[i] = (float)sign;
			d[i] = (double)sign;
		}
		f[777] = d[777] = -0.0;
		f[n - 1] = d[n - 1] = 0.0;
		vkr_op op = sign > 0 ? VKR_OP_MIN : VKR_OP_MAX;
		uint32_t want32 = sign > 0 ? 0x80000000u : 0u;
		uint64_t want64 = sign > 0 ? 0x8000000000000000ull : 0u, got64;
		assert_int_equal(f32_bits(reduce_one(op, VKR_DTYPE_F32, f, n).f32), want32);
		if (f64) {
			double r = reduce_one(op, VKR_DTYPE_F64, d, n).f64;
			memcpy(&got64, &r, sizeof(got64));
			assert_true(got64 == want64);
		}
		f[n / 3] = d[n / 3] = sign > 0 ? -INFINITY : INFINITY;
		assert_true(reduce_one(op, VKR_DTYPE_F32, f, n).f32 == f[n / 3]);
		if (f64)
			assert_true(reduce_one(op, VKR_DTYPE_F64, d, n).f64 == d[n / 3]);
	}
	free(f);
	free(d);
}

/* Signed zeros and infinities at one-dispatch size, where min and max of floats compared by
 * keys (the H200 and lavapipe) run by atomics and the host decodes their slot. */
static void test_reduce_float_zeros_and_infinities_in_one_dispatch(void **state)
{
	(void)state;
	const struct gpu_info *info = gpu_get_info(gpu);
	if (!kern_atomic_extremes(info, VKR_DTYPE_F32, VKR_OP_MIN))
		print_message("float min and max keep partials here (subnormals preserved or no atomic tails)\n");
	check_zeros_and_infinities_large();
}

/* Float sums by limbs (VKR_REDUCE_FLOAT_SUM=limbs): the exact sum of the workgroups' partials,
 * rounded once. The arrays put their values in chosen workgroups: at 100,000 elements an f32
 * job has 25 workgroups and an f64 job 49, and workgroup w folds (among others) vector
 * 256 * w, whose first element is this one (reduce.comp's fold_strided). */
#define LIMB_N 100000
static size_t first_element_of_workgroup(vkr_dtype dtype, unsigned w)
{
	return (16 / proto_dtype_size(dtype)) * 256 * (size_t)w;
}

/* The sum of LIMB_N elements, zero but values[k] at workgroup places[k]'s element. */
static vkr_value limb_sum_of(struct gpu *on, vkr_dtype dtype, const double *values, const unsigned *places,
			     size_t count)
{
	void *data = calloc(LIMB_N, proto_dtype_size(dtype));
	assert_non_null(data);
	for (size_t k = 0; k < count; k++) {
		size_t at = first_element_of_workgroup(dtype, places[k]);
		if (dtype == VKR_DTYPE_F32)
			((float *)data)[at] = (float)values[k];
		else
			((double *)data)[at] = values[k];
	}
	struct host_job job = { .kind = KERN_REDUCE, .op = VKR_OP_SUM, .dtype = dtype, .input = data, .n = LIMB_N };
	harness_run(on, &job, 1);
	free(data);
	return job.result;
}

static double limb_sum_as_double(struct gpu *on, vkr_dtype dtype, const double *values, size_t count)
{
	const unsigned places[] = { 0, 5, 10, 20 };
	assert_true(count <= 4);
	vkr_value r = limb_sum_of(on, dtype, values, places, count);
	return dtype == VKR_DTYPE_F32 ? (double)r.f32 : r.f64;
}

static void check_limb_sums_of(struct gpu *on, vkr_dtype dtype)
{
	bool f32 = dtype == VKR_DTYPE_F32;
	double big = f32 ? 1e30 : 1e300, ulp = f32 ? 0x1p-23 : 0x1p-52, tiny = f32 ? 0x1p-40 : 0x1p-70;
	double min_normal = f32 ? 0x1p-126 : 0x1p-1022;
	/* Cancellation: the ordered fold loses the 1 (1e30 + 1 == 1e30); the exact sum keeps it. */
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ big, 1.0, -big }, 3) == 1.0);
	/* Ties to even, and a sticky bit below the tie. */
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ 1.0, ulp / 2 }, 2) == 1.0);
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ 1.0 + ulp, ulp / 2 }, 2) == 1.0 + 2 * ulp);
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ 1.0, ulp / 2, tiny }, 3) == 1.0 + ulp);
	/* A negative sum, borrowing through the limbs; pieces that add past 2^32 in one limb
	 * (a full mantissa whose low piece is 0xffffff00 in f32, 0xffffffc0 in f64), so the
	 * host carries; three equal values, their exact sum rounded once as one product is. */
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ -3.0, 1.0 }, 2) == -2.0);
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ 0x1p31, 0x1p31, -256.0 }, 3) == 0x1p32 - 256.0);
	double full = f32 ? 0x1.fffffep10 : 0x1.fffffffffffffp8;
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ full, full, full }, 3) ==
		    (f32 ? (double)(3.0f * (float)full) : 3 * full));
	/* A subnormal sum of normal partials: only the host's rounding can make it. */
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ 1.5 * min_normal, -min_normal }, 2) ==
		    min_normal / 2);
	/* Overflow of the exact sum, and the special partials. */
	double max = f32 ? 3e38 : 1.5e308;
	assert_true(isinf(limb_sum_as_double(on, dtype, (const double[]){ max, max }, 2)));
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ -max, -max, -max }, 3) == -INFINITY);
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ INFINITY, 1.0 }, 2) == INFINITY);
	assert_true(limb_sum_as_double(on, dtype, (const double[]){ -INFINITY, 1.0 }, 2) == -INFINITY);
	assert_true(isnan(limb_sum_as_double(on, dtype, (const double[]){ INFINITY, -INFINITY }, 2)));
	assert_true(isnan(limb_sum_as_double(on, dtype, (const double[]){ 1.0, NAN }, 2)));
	/* An exact zero from non-zero partials is +0, as x + -x. */
	double zero = limb_sum_as_double(on, dtype, (const double[]){ 2.0, -2.0 }, 2);
	assert_true(zero == 0.0 && !signbit(zero));
}

static void test_reduce_float_sums_by_limbs(void **state)
{
	(void)state;
	struct gpu *limbs = harness_gpu_with_env("VKR_REDUCE_FLOAT_SUM", "limbs");
	const struct gpu_info *info = gpu_get_info(limbs);
	bool on = kern_float_limb_sums(info, VKR_DTYPE_F32, VKR_OP_SUM);
	assert_true(on == (info->reduce_atomic_tails && !info->denorm_preserve32));
	assert_false(kern_float_limb_sums(info, VKR_DTYPE_F32, VKR_OP_PROD));
	assert_false(kern_float_limb_sums(info, VKR_DTYPE_I32, VKR_OP_SUM));
	assert_false(kern_float_limb_sums(gpu_get_info(gpu), VKR_DTYPE_F32, VKR_OP_SUM)); /* off by default */
	if (!on)
		print_message("no float sums by limbs on this device: their checks run on the partials' tails\n");
	struct kern_job probe = { .kind = KERN_REDUCE, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_F32, .n = LIMB_N };
	assert_int_equal(kern_result_bytes(limbs, &probe), on ? 88 : 8);
	probe.dtype = VKR_DTYPE_F64;
	if (gpu_supports_dtype(limbs, VKR_DTYPE_F64) && on)
		assert_int_equal(kern_result_bytes(limbs, &probe), 544);
	for (unsigned d = VKR_DTYPE_F32; d <= VKR_DTYPE_F64; d++) {
		if (!gpu_supports_dtype(limbs, d))
			continue;
		check_op_dtype_on(limbs, VKR_OP_SUM, d);
		if (on)
			check_limb_sums_of(limbs, d);
	}
	/* The bits of a job do not depend on the jobs beside it. */
	float *data = malloc(LIMB_N * sizeof(*data));
	assert_non_null(data);
	uint64_t rng = harness_seed() + 31;
	gen_fill(VKR_DTYPE_F32, VKR_OP_SUM, data, LIMB_N, &rng);
	struct host_job jobs[3];
	for (size_t k = 0; k < 3; k++)
		jobs[k] = (struct host_job){ .kind = KERN_REDUCE, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_F32,
					     .input = data, .n = LIMB_N, .misalign = (unsigned)(k == 1) };
	harness_run(limbs, jobs, 1);
	uint32_t alone = f32_bits(jobs[0].result.f32);
	harness_run(limbs, jobs, 3);
	assert_int_equal(f32_bits(jobs[0].result.f32), alone);
	assert_int_equal(f32_bits(jobs[2].result.f32), alone);
	free(data);
	harness_gpu_done(limbs);
}

/* Products of integers by exponents (VKR_REDUCE_INT_PROD=exponents): LIMB_N ones but the
 * values at workgroup places (as the limb sums' arrays), against the product wrapped. */
static void check_product_of(struct gpu *on, vkr_dtype dtype, const uint64_t *values, size_t count)
{
	size_t size = proto_dtype_size(dtype);
	unsigned char *data = malloc(LIMB_N * size);
	assert_non_null(data);
	for (size_t i = 0; i < LIMB_N; i++) {
		uint64_t one = 1;
		memcpy(data + i * size, &one, size); /* little-endian: the low bytes */
	}
	uint64_t want = 1;
	const unsigned places[] = { 0, 3, 5, 10, 20, 24 };
	assert_true(count <= 6);
	for (size_t k = 0; k < count; k++) {
		memcpy(data + first_element_of_workgroup(dtype, places[k]) * size, &values[k], size);
		want *= values[k];
	}
	if (size == 4)
		want &= UINT32_MAX;
	struct host_job job = { .kind = KERN_REDUCE, .op = VKR_OP_PROD, .dtype = dtype, .input = data, .n = LIMB_N };
	harness_run(on, &job, 1);
	uint64_t got = size == 4 ? job.result.u32 : job.result.u64;
	if (got != want)
		fail_msg("prod %s: got %#llx, want %#llx", proto_dtype_name(dtype), (unsigned long long)got,
			 (unsigned long long)want);
	free(data);
}

static void test_reduce_integer_products_by_exponents(void **state)
{
	(void)state;
	struct gpu *exps = harness_gpu_with_env("VKR_REDUCE_INT_PROD", "exponents");
	const struct gpu_info *info = gpu_get_info(exps);
	bool on = kern_product_exponents(info, VKR_DTYPE_I32, VKR_OP_PROD);
	assert_true(on == (info->reduce_atomic_tails && info->readback_cached));
	assert_false(kern_product_exponents(info, VKR_DTYPE_F32, VKR_OP_PROD));
	assert_false(kern_product_exponents(info, VKR_DTYPE_I32, VKR_OP_SUM));
	assert_false(kern_product_exponents(gpu_get_info(gpu), VKR_DTYPE_I32, VKR_OP_PROD)); /* off by default */
	if (!on)
		print_message("no products by exponents on this device: their checks run on the partials' tails\n");
	struct kern_job probe = { .kind = KERN_REDUCE, .op = VKR_OP_PROD, .dtype = VKR_DTYPE_U64, .n = LIMB_N };
	assert_int_equal(kern_result_bytes(exps, &probe), on && gpu_supports_dtype(exps, VKR_DTYPE_U64) ? 24 : 8);
	for (unsigned d = VKR_DTYPE_I32; d <= VKR_DTYPE_U64; d++) {
		if (!gpu_supports_dtype(exps, d))
			continue;
		check_op_dtype_on(exps, VKR_OP_PROD, d);
		/* Odd factors of both residues mod 4 (the signs), large odd factors that wrap,
		 * powers of two that add up to just under the width and to the width (0), a zero. */
		check_product_of(exps, d, (const uint64_t[]){ 3, (uint64_t)-5, 7 }, 3);
		check_product_of(exps, d, (const uint64_t[]){ 0xdeadbeefu, 0x12345679u, 0xfffffffdu, 0x9e3779b97f4a7c15ull,
							     0xc2b2ae3d27d4eb4full, 11 }, 6);
		check_product_of(exps, d, (const uint64_t[]){ 6, 10, (uint64_t)1 << 20, 12 }, 4);
		unsigned half = (unsigned)proto_dtype_size(d) * 4;
		check_product_of(exps, d, (const uint64_t[]){ (uint64_t)3 << (half - 1), (uint64_t)5 << (half - 1) }, 2);
		check_product_of(exps, d, (const uint64_t[]){ (uint64_t)1 << half, (uint64_t)1 << half, 3 }, 3);
		check_product_of(exps, d, (const uint64_t[]){ 0, 3, 5 }, 3);
		check_product_of(exps, d, (const uint64_t[]){ (uint64_t)-1, (uint64_t)-1, (uint64_t)-1 }, 3);
	}
	harness_gpu_done(exps);
}

/* Element i of a float array of dtype d (f32 or f64) set to x. */
static void put_float(void *array, size_t i, vkr_dtype d, double x)
{
	if (d == VKR_DTYPE_F32) {
		float f = (float)x;
		memcpy((char *)array + i * sizeof(f), &f, sizeof(f));
	} else {
		memcpy((char *)array + i * sizeof(x), &x, sizeof(x));
	}
}

static bool is_nan(vkr_dtype d, vkr_value v)
{
	return d == VKR_DTYPE_F32 ? isnan(v.f32) : isnan(v.f64);
}

/* Partials folded by the host (VKR_REDUCE_FOLD=host, the default): each sum and product
 * without an atomic tail against the reference at every size, and bit for bit against the
 * GPU's own fold of the partials (VKR_REDUCE_FOLD=device) on a grid of 700 workgroups, with misaligned heads and three
 * jobs of different grids in one command buffer. */
static void test_reduce_partials_folded_by_the_host(void **state)
{
	(void)state;
	enum { JOBS = 3 };
	assert_int_equal(setenv("VKR_REDUCE_WORKGROUPS", "700", 1), 0);
	struct gpu *host = harness_gpu_with_env("VKR_REDUCE_FOLD", "host"); /* the default */
	struct gpu *device = harness_gpu_with_env("VKR_REDUCE_FOLD", "device");
	unsetenv("VKR_REDUCE_WORKGROUPS");
	const struct gpu_info *info = gpu_get_info(host);
	bool on = kern_host_fold(info, VKR_DTYPE_F32, VKR_OP_PROD);
	assert_true(on == info->reduce_atomic_tails);
	assert_false(kern_host_fold(info, VKR_DTYPE_I32, VKR_OP_SUM)); /* an atomic tail's */
	assert_false(kern_host_fold(info, VKR_DTYPE_F32, VKR_OP_MAX));
	assert_false(kern_host_fold(info, VKR_DTYPE_F32, VKR_OP_COUNT));
	assert_false(kern_host_fold(gpu_get_info(device), VKR_DTYPE_F32, VKR_OP_PROD));
	if (!on)
		print_message("no partials folded by the host on this device: their checks run on the partials' tails\n");
	size_t n = 3000017; /* f32: 750,004 vectors, enough for 700 workgroups of 4 each */
	struct kern_job probe = { .kind = KERN_REDUCE, .op = VKR_OP_PROD, .dtype = VKR_DTYPE_F32, .n = n };
	assert_int_equal(kern_result_bytes(host, &probe), on ? 700 * 4 : 8);
	probe.dtype = VKR_DTYPE_F64;
	if (gpu_supports_dtype(host, VKR_DTYPE_F64))
		assert_int_equal(kern_result_bytes(host, &probe), on ? 700 * 8 : 8);
	assert_true(kern_result_bytes(host, &probe) <= kern_result_max_bytes(host));
	probe.n = 16384; /* a small job: one workgroup, its result stored by the GPU */
	assert_int_equal(kern_result_bytes(host, &probe), 8);
	uint64_t rng = harness_seed() + 37;
	void *input = malloc(n * 8);
	assert_non_null(input);
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
		if (!gpu_supports_dtype(host, d))
			continue;
		for (vkr_op op = VKR_OP_SUM; op <= VKR_OP_PROD; op++) {
			check_op_dtype_on(host, op, d);
			gen_fill(d, op, input, n, &rng);
			struct host_job folded[JOBS], fold_on_gpu[JOBS];
			for (size_t i = 0; i < JOBS; i++) {
				folded[i] = (struct host_job){
					.kind = KERN_REDUCE, .op = op, .dtype = d, .input = input,
					.n = i == JOBS - 1 ? 200003 : n - i * 39119, /* 49 workgroups, 700 */
					.misalign = (unsigned)(i % (16 / proto_dtype_size(d))),
				};
				fold_on_gpu[i] = folded[i];
			}
			harness_run(host, folded, JOBS);
			harness_run(device, fold_on_gpu, JOBS);
			for (size_t i = 0; i < JOBS; i++)
				if (memcmp(&folded[i].result, &fold_on_gpu[i].result, sizeof(folded[i].result)) != 0)
					fail_msg("%s %s n=%zu: folded by the host %#llx, on the GPU %#llx",
						 proto_op_name(op), proto_dtype_name(d), folded[i].n,
						 (unsigned long long)folded[i].result.u64,
						 (unsigned long long)fold_on_gpu[i].result.u64);
		}
	}
	/* Infinities of both signs in different workgroups' partials (a sum) and an infinity
	 * times a zero (a product): NaN on the GPU, and the quiet NaN from the host's fold. */
	const vkr_dtype floats[] = { VKR_DTYPE_F32, VKR_DTYPE_F64 };
	for (size_t f = 0; f < 2; f++) {
		vkr_dtype d = floats[f];
		if (!gpu_supports_dtype(host, d))
			continue;
		for (vkr_op op = VKR_OP_SUM; op <= VKR_OP_PROD; op++) {
			gen_fill(d, op, input, n, &rng);
			put_float(input, 5, d, INFINITY);
			put_float(input, n - 5, d, op == VKR_OP_SUM ? -INFINITY : 0.0);
			struct host_job folded = { .kind = KERN_REDUCE, .op = op, .dtype = d,
						   .input = input, .n = n };
			struct host_job fold_on_gpu = folded;
			harness_run(host, &folded, 1);
			harness_run(device, &fold_on_gpu, 1);
			if (!is_nan(d, folded.result) || !is_nan(d, fold_on_gpu.result))
				fail_msg("%s %s of inf and %s: %#llx folded by the host, %#llx on the GPU",
					 proto_op_name(op), proto_dtype_name(d),
					 op == VKR_OP_SUM ? "-inf" : "0",
					 (unsigned long long)folded.result.u64,
					 (unsigned long long)fold_on_gpu.result.u64);
			if (on && d == VKR_DTYPE_F32)
				assert_int_equal(folded.result.u32, 0x7fc00000u);
			else if (on)
				assert_int_equal(folded.result.u64, 0x7ff8000000000000ull);
		}
	}
	free(input);
	harness_gpu_done(device);
	harness_gpu_done(host);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reduce_sum_every_dtype_and_size_matches_reference),
		cmocka_unit_test(test_reduce_prod_every_dtype_and_size_matches_reference),
		cmocka_unit_test(test_reduce_min_every_dtype_and_size_matches_reference),
		cmocka_unit_test(test_reduce_max_every_dtype_and_size_matches_reference),
		cmocka_unit_test(test_reduce_count_every_cmp_dtype_and_size_matches_reference),
		cmocka_unit_test(test_reduce_other_workgroup_tree_matches_reference),
		cmocka_unit_test(test_reduce_min_max_propagate_nan),
		cmocka_unit_test(test_reduce_min_max_other_side_infinity_is_no_nan),
		cmocka_unit_test(test_reduce_min_max_find_a_lone_extreme_anywhere),
		cmocka_unit_test(test_reduce_atomic_tails_on_a_grid_of_2_16_or_more),
		cmocka_unit_test(test_reduce_infinities_are_ordinary_values),
		cmocka_unit_test(test_reduce_empty_gives_neutral_and_min_max_are_errors),
		cmocka_unit_test(test_reduce_integer_sum_and_prod_wrap),
		cmocka_unit_test(test_reduce_count_follows_ieee_for_nan),
		cmocka_unit_test(test_reduce_is_deterministic_alone_and_in_a_batch_of_fifty),
		cmocka_unit_test(test_reduce_small_jobs_give_the_same_bits_alone_and_in_a_table),
		cmocka_unit_test(test_reduce_in_one_dispatch_gives_the_bits_of_two_passes),
		cmocka_unit_test(test_reduce_float_sum_edges_in_one_dispatch),
		cmocka_unit_test(test_reduce_array_larger_than_one_storage_binding),
		cmocka_unit_test(test_reduce_array_in_several_parts_matches_reference),
		cmocka_unit_test(test_reduce_parts_must_add_up),
		cmocka_unit_test(test_reduce_subnormals_are_not_flushed),
		cmocka_unit_test(test_reduce_count_edge_values_match_reference),
		cmocka_unit_test(test_reduce_float_zeros_and_infinities_in_one_dispatch),
		cmocka_unit_test(test_reduce_float_sums_by_limbs),
		cmocka_unit_test(test_reduce_integer_products_by_exponents),
		cmocka_unit_test(test_reduce_partials_folded_by_the_host),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
