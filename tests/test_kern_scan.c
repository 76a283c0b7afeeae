/* test_kern_scan.c: every scan op x dtype x {inclusive, exclusive} on the real device
 * against the sequential CPU reference, in place, deterministic, and past one storage
 * binding. */
#include <errno.h>
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

static const size_t sizes[] = { 0,   1,   2,   31,   32,   33,   255,   256,
				257, 511, 512, 513, 4095, 4097, 65537, 1000003 };
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

/* Where size s's scan (exclusive if e) starts, in elements past a 16-byte boundary: aligned
 * for half of the sizes of each kind, alternating by pairs of sizes, so that both kinds of
 * the larger sizes run whole tiles aligned (read as rows, shaders/scan.comp) and misaligned
 * (slot by slot); misaligned by 1 to 3 elements for 32-bit types. */
static unsigned scan_misalign(size_t s, unsigned e, size_t esize)
{
	if (((s >> 1) + e) % 2 == 0)
		return 0;
	return 1 + (unsigned)(s % (16 / esize - 1));
}

/* Every dtype's inclusive and exclusive scans by op on device, at each of at_sizes. */
static void check_op_at(struct gpu *device, vkr_op op, const size_t *at_sizes, size_t size_count)
{
	enum { MAX_SIZES = SIZE_COUNT };
	assert_true(size_count <= MAX_SIZES);
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
		if (!gpu_supports_dtype(device, d)) {
			print_message("device lacks %s; skipped that dtype\n", proto_dtype_name(d));
			continue;
		}
		size_t esize = proto_dtype_size(d);
		uint64_t rng = harness_seed() ^ ((uint64_t)op << 32) ^ ((uint64_t)d << 40);
		struct host_job jobs[MAX_SIZES * 2];
		void *inputs[MAX_SIZES], *outputs[MAX_SIZES * 2];
		for (size_t s = 0; s < size_count; s++) {
			inputs[s] = malloc(at_sizes[s] * esize + 1);
			assert_non_null(inputs[s]);
			gen_fill(d, op, inputs[s], at_sizes[s], &rng);
			for (unsigned e = 0; e < 2; e++) {
				size_t j = s * 2 + e;
				outputs[j] = malloc(at_sizes[s] * esize + 1);
				assert_non_null(outputs[j]);
				jobs[j] = (struct host_job){
					.kind = KERN_SCAN, .op = op, .dtype = d, .exclusive = e,
					.input = inputs[s], .n = at_sizes[s], .output = outputs[j],
					.misalign = scan_misalign(s, e, esize),
				};
			}
		}
		harness_run(device, jobs, size_count * 2);
		for (size_t j = 0; j < size_count * 2; j++) {
			char why[256];
			if (!ref_scan_check(op, d, jobs[j].exclusive, jobs[j].input, jobs[j].n,
					    jobs[j].output, why, sizeof(why)))
				fail_msg("%s scan %s %s n=%zu: %s", jobs[j].exclusive ? "exclusive" : "inclusive",
					 proto_op_name(op), proto_dtype_name(d), jobs[j].n, why);
			free(outputs[j]);
		}
		for (size_t s = 0; s < size_count; s++)
			free(inputs[s]);
	}
}

static void check_op(vkr_op op)
{
	check_op_at(gpu, op, sizes, SIZE_COUNT);
}

static void test_scan_sum_every_dtype_size_and_kind_matches_reference(void **state)
{
	(void)state;
	check_op(VKR_OP_SUM);
}

static void test_scan_prod_every_dtype_size_and_kind_matches_reference(void **state)
{
	(void)state;
	check_op(VKR_OP_PROD);
}

static void test_scan_min_every_dtype_size_and_kind_matches_reference(void **state)
{
	(void)state;
	check_op(VKR_OP_MIN);
}

static void test_scan_max_every_dtype_size_and_kind_matches_reference(void **state)
{
	(void)state;
	check_op(VKR_OP_MAX);
}

static void test_scan_exclusive_starts_with_neutral(void **state)
{
	(void)state;
	const float x[] = { 5.0f, -1.0f, 2.0f };
	float out[3];
	const float want_min[] = { INFINITY, 5.0f, -1.0f };
	struct host_job job = { .kind = KERN_SCAN, .op = VKR_OP_MIN, .dtype = VKR_DTYPE_F32,
				.exclusive = true, .input = x, .n = 3, .output = out };
	harness_run(gpu, &job, 1);
	assert_memory_equal(out, want_min, sizeof(out));
	const int32_t y[] = { 4, 5, 6 };
	int32_t got[3];
	const int32_t want_prod[] = { 1, 4, 20 };
	job = (struct host_job){ .kind = KERN_SCAN, .op = VKR_OP_PROD, .dtype = VKR_DTYPE_I32,
				 .exclusive = true, .input = y, .n = 3, .output = got };
	harness_run(gpu, &job, 1);
	assert_memory_equal(got, want_prod, sizeof(got));
}

/* One NaN, of either sign, wins every later step of a min or max scan (inclusive and
 * exclusive, f32 and f64); before it the values are exact. On a device that compares by
 * keys, NaNs of one sign order below every key and the others above (shaders/scan_op.glsl):
 * both signs must win for both ops. The NaN sits past the first 2^21 elements, so that it
 * reaches later elements through block aggregates and prefixes of the single pass too
 * (blocks of 256 tiles of at most 8192 elements). */
static void test_scan_min_max_propagate_nan_of_either_sign(void **state)
{
	(void)state;
	const size_t n = 2200000, at = 2150000;
	double *x64 = malloc(n * sizeof(*x64)), *out64 = malloc(n * sizeof(*out64));
	float *x32 = malloc(n * sizeof(*x32)), *out32 = malloc(n * sizeof(*out32));
	assert_non_null(x64);
	assert_non_null(out64);
	assert_non_null(x32);
	assert_non_null(out32);
	for (unsigned variant = 0; variant < 16; variant++) {
		vkr_dtype dtype = variant & 1 ? VKR_DTYPE_F64 : VKR_DTYPE_F32;
		vkr_op op = variant & 2 ? VKR_OP_MAX : VKR_OP_MIN;
		bool negative_nan = variant & 4, exclusive = variant & 8;
		if (!gpu_supports_dtype(gpu, dtype))
			continue;
		/* Values that keep moving the prefix: a zigzag over both signs whose swing grows
		 * with the index, the infinity that loses (+inf for min) as an ordinary value. */
		for (size_t i = 0; i < n; i++) {
			double v = (double)(i / 8) * (i % 2 ? -0.5 : 0.25) - 100.0;
			if (i % 9999 == 777)
				v = op == VKR_OP_MIN ? INFINITY : -INFINITY;
			x64[i] = v;
			x32[i] = (float)v;
		}
		x64[at] = negative_nan ? -NAN : NAN;
		x32[at] = negative_nan ? -NAN : NAN;
		assert_true((signbit(x64[at]) != 0) == negative_nan);
		assert_true((signbit(x32[at]) != 0) == negative_nan);
		struct host_job job = { .kind = KERN_SCAN, .op = op, .dtype = dtype,
					.exclusive = exclusive, .n = n };
		job.input = dtype == VKR_DTYPE_F64 ? (const void *)x64 : (const void *)x32;
		job.output = dtype == VKR_DTYPE_F64 ? (void *)out64 : (void *)out32;
		harness_run(gpu, &job, 1);
		double running = op == VKR_OP_MIN ? INFINITY : -INFINITY;
		for (size_t i = 0; i < n; i++) {
			double xi = dtype == VKR_DTYPE_F64 ? x64[i] : x32[i];
			double got = dtype == VKR_DTYPE_F64 ? out64[i] : out32[i];
			double inclusive = isnan(xi) || isnan(running) ? NAN
					   : op == VKR_OP_MIN ? fmin(running, xi) : fmax(running, xi);
			double want = exclusive ? running : inclusive;
			running = inclusive;
			if (isnan(want) != isnan(got) || (!isnan(want) && want != got))
				fail_msg("%s scan %s%s, NaN %s at %zu: element %zu is %g, want %g",
					 proto_dtype_name(dtype), op == VKR_OP_MIN ? "min" : "max",
					 exclusive ? " exclusive" : "", negative_nan ? "-" : "+", at, i, got,
					 want);
		}
	}
	free(x64);
	free(out64);
	free(x32);
	free(out32);
}

/* Subnormals are values, as in numpy, on a device that flushes them in float compares and
 * min()/max() too (the H200 does): their bits come out of min and max scans. */
static void test_scan_min_keeps_subnormals(void **state)
{
	(void)state;
	const float x[] = { 1.0f, 0x1p-149f, 0.5f, 0.0f, -0x1p-149f, 2.0f };
	const float want[] = { 1.0f, 0x1p-149f, 0x1p-149f, 0.0f, -0x1p-149f, -0x1p-149f };
	float out[6];
	struct host_job job = { .kind = KERN_SCAN, .op = VKR_OP_MIN, .dtype = VKR_DTYPE_F32,
				.input = x, .n = 6, .output = out };
	harness_run(gpu, &job, 1);
	assert_memory_equal(out, want, sizeof(want));
}

static void test_scan_in_place_matches_out_of_place(void **state)
{
	(void)state;
	size_t n = 300007;
	uint64_t rng = harness_seed() + 3;
	int64_t *x = malloc(n * sizeof(*x)), *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	assert_non_null(x);
	assert_non_null(a);
	assert_non_null(b);
	vkr_dtype d = gpu_supports_dtype(gpu, VKR_DTYPE_I64) ? VKR_DTYPE_I64 : VKR_DTYPE_I32;
	gen_fill(d, VKR_OP_SUM, x, n, &rng);
	struct host_job jobs[2] = {
		{ .kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = d, .input = x, .n = n, .output = a },
		{ .kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = d, .input = x, .n = n, .output = b,
		  .in_place = true },
	};
	harness_run(gpu, jobs, 2);
	assert_memory_equal(a, b, n * proto_dtype_size(d));
	free(x);
	free(a);
	free(b);
}

static void test_scan_float_is_deterministic(void **state)
{
	(void)state;
	size_t n = 1000003;
	uint64_t rng = harness_seed() + 5;
	float *x = malloc(n * sizeof(*x)), *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	assert_non_null(x);
	assert_non_null(a);
	assert_non_null(b);
	gen_fill(VKR_DTYPE_F32, VKR_OP_SUM, x, n, &rng);
	struct host_job job = { .kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_F32,
				.input = x, .n = n, .output = a };
	harness_run(gpu, &job, 1);
	job.output = b;
	struct host_job batch[3] = { job, job, job };
	batch[0].n = n / 2;
	batch[0].output = malloc(n * sizeof(float));
	batch[2] = batch[0];
	batch[2].output = malloc(n * sizeof(float));
	assert_non_null(batch[0].output);
	assert_non_null(batch[2].output);
	harness_run(gpu, batch, 3);
	assert_memory_equal(a, b, n * sizeof(float));
	free(batch[0].output);
	free(batch[2].output);
	free(x);
	free(a);
	free(b);
}

/* Signed zeros in an f64 sum scan of -0.0s: every prefix that holds an element is -0.0
 * (IEEE: -0.0 + -0.0), so every inclusive output and every exclusive one but the first
 * (the empty prefix, the neutral). Exact where the chunked single pass scans each row
 * within its chunk (scan_chained.comp's ROWS_SCANNED_IN_CHUNK: device memory, no parked
 * rows): a version of it gave +0.0 at every chunk's start (session 35's review). The other
 * paths (host memory, which is every daemon scan, and slot tiles) start each tile and slot
 * from the neutral +0.0, so there a prefix of -0.0s comes out +0.0 (README, "Signed zeros")
 * and only the values are checked. Several tiles and blocks, and an array in three parts. */
static void test_scan_f64_negative_zeros_keep_their_sign(void **state)
{
	(void)state;
	size_t n = 600011;
	double *x = malloc(n * sizeof(*x)), *inc = malloc(n * sizeof(*inc)), *exc = malloc(n * sizeof(*exc));
	double *exc_parts = malloc(n * sizeof(*exc_parts));
	assert_non_null(x);
	assert_non_null(inc);
	assert_non_null(exc);
	assert_non_null(exc_parts);
	for (size_t i = 0; i < n; i++)
		x[i] = -0.0;
	struct host_job jobs[3] = {
		{ .kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_F64, .input = x, .n = n, .output = inc },
		{ .kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_F64, .input = x, .n = n, .output = exc,
		  .exclusive = true },
		{ .kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_F64, .input = x, .n = n,
		  .output = exc_parts, .exclusive = true, .parts = 3 },
	};
	harness_run(gpu, jobs, 3);
	const struct gpu_info *info = gpu_get_info(gpu);
	const char *host = getenv("VKR_TEST_HOST_MEMORY");
	bool exact = info->shader_float64 && info->scan_chunked && info->scan_park_rows_override <= 0 &&
		     !(host && strcmp(host, "1") == 0);
	for (size_t i = 0; i < n; i++) {
		assert_true(inc[i] == 0.0 && exc[i] == 0.0 && exc_parts[i] == 0.0);
		if (exact && !signbit(inc[i]))
			fail_msg("inclusive output %zu is +0.0", i);
		if (exact && i > 0 && (!signbit(exc[i]) || !signbit(exc_parts[i])))
			fail_msg("exclusive output %zu is +0.0 (whole: %d, in parts: %d)", i, !signbit(exc[i]),
				 !signbit(exc_parts[i]));
	}
	free(x);
	free(inc);
	free(exc);
	free(exc_parts);
}

/* The single-pass scan combines tile and block aggregates in shapes fixed by their indices,
 * whatever order the workgroups ran in and whoever computed an aggregate: a float sum scan
 * gives the same bits on a second device instance whose look-back waits a different number
 * of rounds before doing a predecessor's work itself (the suite runs this test with a
 * patience of 1, where fallbacks happen all the time, against 64), run after run, alone and
 * batched with other scans. */
static void test_scan_float_bits_do_not_depend_on_scheduling(void **state)
{
	(void)state;
	size_t n = 2400007; /* two blocks of tiles of the chunked single pass */
	uint64_t rng = harness_seed() + 17;
	float *x = malloc(n * sizeof(*x)), *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	float *c = malloc(n * sizeof(*c)), *a_ex = malloc(n * sizeof(*a_ex));
	float *b_ex = malloc(n * sizeof(*b_ex));
	assert_non_null(x);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_non_null(a_ex);
	assert_non_null(b_ex);
	gen_fill(VKR_DTYPE_F32, VKR_OP_SUM, x, n, &rng);
	struct host_job job = { .kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_F32,
				.input = x, .n = n, .output = a };
	struct host_job job_ex = job;
	job_ex.exclusive = true;
	job_ex.output = a_ex;
	struct host_job first[2] = { job, job_ex };
	harness_run(gpu, first, 2);
	const char *patience = getenv("VKR_SCAN_PATIENCE");
	bool eager = patience && strcmp(patience, "1") == 0;
	assert_int_equal(setenv("VKR_SCAN_PATIENCE", eager ? "64" : "1", 1), 0);
	struct gpu *other = harness_gpu();
	assert_int_equal(eager ? setenv("VKR_SCAN_PATIENCE", "1", 1) : unsetenv("VKR_SCAN_PATIENCE"), 0);
	for (int rep = 0; rep < 3; rep++) {
		struct host_job batch[3] = { job, job, job_ex };
		batch[0].output = b;
		batch[1].output = c;
		batch[1].n = n / 3;
		batch[2].output = b_ex;
		harness_run(other, batch, 3);
		assert_memory_equal(a, b, n * sizeof(float));
		assert_memory_equal(a_ex, b_ex, n * sizeof(float));
	}
	harness_gpu_done(other);
	free(x);
	free(a);
	free(b);
	free(c);
	free(a_ex);
	free(b_ex);
}

/* The tile scan (shaders/tile_scan.glsl) has two builds: the Blelloch tree in shared memory,
 * the default, and subgroup shuffles (VKR_SCAN_TILE=subgroup, on devices that have them).
 * This runs every op, dtype, size and kind on a second device instance with the other one
 * (the suite's other scan tests cover the first), under the same VKR_SCAN and patience. The suite also runs these tests with lavapipe's subgroups of 4 and
 * 16 lanes (LP_NATIVE_VECTOR_WIDTH) besides its default 8. */
static void test_scan_other_tile_scan_matches_reference(void **state)
{
	(void)state;
	bool subgroup = gpu_get_info(gpu)->scan_tile_subgroup;
	struct gpu *other = harness_gpu_with_env("VKR_SCAN_TILE", subgroup ? "blelloch" : "subgroup");
	if (!subgroup && !gpu_get_info(other)->scan_tile_subgroup)
		print_message("device has no subgroup shuffles: both instances use the Blelloch tile scan\n");
	else
		assert_true(gpu_get_info(other)->scan_tile_subgroup != subgroup);
	print_message("tile scan under test: %s (subgroup size %u)\n",
		      gpu_get_info(other)->scan_tile_subgroup ? "subgroup" : "blelloch",
		      gpu_get_info(other)->subgroup_size);
	for (vkr_op op = VKR_OP_SUM; op <= VKR_OP_MAX; op++)
		check_op_at(other, op, sizes, SIZE_COUNT);
	harness_gpu_done(other);
}

/* A daemon's device (gpu_config.host_memory_scans_only: every scan writes host memory) builds
 * no reduce-then-scan pass where the staged single pass runs (kern_pipeline_superseded), and
 * every op, dtype and kind of host-memory scan, at a size in each path, still finds its
 * pipelines and matches the reference there. */
static void test_scan_host_memory_device_builds_only_what_it_runs(void **state)
{
	(void)state;
	struct gpu_config config = { .verbose = true, .compile_on_first_use = true, .host_memory_scans_only = true };
	struct gpu *daemon_gpu = NULL;
	char err[256];
	if (gpu_create(&config, &daemon_gpu, err, sizeof(err)) < 0)
		fail_msg("gpu_create: %s", err);
	size_t reduce_then_scan = 0, staged = 0;
	for (uint32_t i = 0; i < kern_pipeline_count(); i++) {
		const struct kern_pipeline_source *src = kern_pipeline_source(i);
		reduce_then_scan += src->reduce_then_scan && gpu_pipeline_available(daemon_gpu, i);
		staged += !src->reduction && src->spec[2] && gpu_pipeline_available(daemon_gpu, i);
		if (src->reduce_then_scan)
			assert_true(gpu_pipeline_available(gpu, i) == gpu_supports_dtype(gpu, src->dtype));
	}
	print_message("host-memory device: %zu staged single-pass pipelines, %zu reduce-then-scan\n", staged,
		      reduce_then_scan);
	if (gpu_get_info(daemon_gpu)->shader_int64)
		assert_int_equal(reduce_then_scan, 0);
	const char *before = getenv("VKR_TEST_HOST_MEMORY");
	char *saved = before ? strdup(before) : NULL;
	assert_true(!before || saved);
	assert_int_equal(setenv("VKR_TEST_HOST_MEMORY", "1", 1), 0);
	/* One size in each of the paths a scan may take (one workgroup, one tile, several
	 * tiles), not every size: this test runs in every kern_scan suite. */
	static const size_t path_sizes[] = { 1, 257, 4097, 65537 };
	for (vkr_op op = VKR_OP_SUM; op <= VKR_OP_MAX; op++)
		check_op_at(daemon_gpu, op, path_sizes, sizeof(path_sizes) / sizeof(path_sizes[0]));
	if (saved)
		assert_int_equal(setenv("VKR_TEST_HOST_MEMORY", saved, 1), 0);
	else
		unsetenv("VKR_TEST_HOST_MEMORY");
	free(saved);
	harness_gpu_done(daemon_gpu);
}

/* Scans long enough for several blocks of 256 tiles of the largest tiles (32 KiB: the chunked
 * single pass), so that the block look-back, its windows and its fallbacks run for every
 * dtype: an inclusive sum in place, an exclusive max out of place misaligned (element by
 * element), each ending in a partial tile. */
static void test_scan_spanning_several_blocks_every_dtype_matches_reference(void **state)
{
	(void)state;
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
		if (!gpu_supports_dtype(gpu, d))
			continue;
		size_t esize = proto_dtype_size(d), tile = 32768 / esize;
		size_t n = 3 * 256 * tile + tile / 2 + 7;
		uint64_t rng = harness_seed() ^ ((uint64_t)d << 40) ^ 0x5ca1ab1e;
		void *sum_in = malloc(n * esize), *max_in = malloc(n * esize);
		void *sum_out = malloc(n * esize), *max_out = malloc(n * esize);
		assert_non_null(sum_in);
		assert_non_null(max_in);
		assert_non_null(sum_out);
		assert_non_null(max_out);
		gen_fill(d, VKR_OP_SUM, sum_in, n, &rng);
		gen_fill(d, VKR_OP_MAX, max_in, n, &rng);
		struct host_job jobs[2] = {
			{ .kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = d, .input = sum_in, .n = n,
			  .output = sum_out, .in_place = true },
			{ .kind = KERN_SCAN, .op = VKR_OP_MAX, .dtype = d, .exclusive = true,
			  .input = max_in, .n = n, .output = max_out, .misalign = 1 },
		};
		harness_run(gpu, jobs, 2);
		char why[256];
		if (!ref_scan_check(VKR_OP_SUM, d, false, sum_in, n, sum_out, why, sizeof(why)))
			fail_msg("inclusive sum %s n=%zu: %s", proto_dtype_name(d), n, why);
		if (!ref_scan_check(VKR_OP_MAX, d, true, max_in, n, max_out, why, sizeof(why)))
			fail_msg("exclusive max %s n=%zu: %s", proto_dtype_name(d), n, why);
		free(sum_in);
		free(max_in);
		free(sum_out);
		free(max_out);
	}
}

static void test_scan_array_larger_than_one_storage_binding(void **state)
{
	(void)state;
	uint64_t range = gpu_get_info(gpu)->max_storage_buffer_range;
	size_t n = (size_t)(range < ((uint64_t)144 << 20) ? range : ((uint64_t)128 << 20)) / 4 + (2u << 20);
	uint64_t rng = harness_seed() + 13;
	int32_t *x = malloc(n * sizeof(*x)), *out = malloc(n * sizeof(*out));
	assert_non_null(x);
	assert_non_null(out);
	gen_fill(VKR_DTYPE_I32, VKR_OP_SUM, x, n, &rng);
	struct host_job job = { .kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_I32,
				.input = x, .n = n, .output = out };
	harness_run(gpu, &job, 1);
	char why[256];
	if (!ref_scan_check(VKR_OP_SUM, VKR_DTYPE_I32, false, x, n, out, why, sizeof(why)))
		fail_msg("i32 scan of %zu elements: %s", n, why);
	free(x);
	free(out);
}

/* An array held in several buffers (kern_part): every op, dtype and kind, out of place and
 * in place, parts of uneven sizes at different misalignments, against the whole array's
 * reference: each part's first element carries the total of every part before it. */
static void test_scan_array_in_several_parts_matches_reference(void **state)
{
	(void)state;
	static const size_t part_sizes[] = { 2, 4097, 65537, 300007 };
	static const unsigned part_counts[] = { 2, 3, 7, KERN_MAX_PARTS };
	enum { SIZES = sizeof(part_sizes) / sizeof(part_sizes[0]), KINDS = 4 };
	for (unsigned op = 0; op < VKR_OP_COUNT; op++) {
		for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
			if (!gpu_supports_dtype(gpu, d))
				continue;
			uint64_t rng = harness_seed() ^ ((uint64_t)op << 32) ^ ((uint64_t)d << 40) ^ 0x5ca7;
			size_t esize = proto_dtype_size(d);
			struct host_job jobs[SIZES * KINDS];
			void *inputs[SIZES * KINDS], *outputs[SIZES * KINDS];
			for (size_t s = 0; s < SIZES; s++) {
				for (unsigned kind = 0; kind < KINDS; kind++) {
					size_t j = s * KINDS + kind, n = part_sizes[s];
					/* In place overwrites the input: each job has its own copy. */
					inputs[j] = malloc(n * esize);
					outputs[j] = malloc(n * esize);
					assert_non_null(inputs[j]);
					assert_non_null(outputs[j]);
					gen_fill(d, op, inputs[j], n, &rng);
					jobs[j] = (struct host_job){
						.kind = KERN_SCAN, .op = op, .dtype = d, .exclusive = kind & 1,
						.in_place = kind & 2, .input = inputs[j], .n = n,
						.output = outputs[j], .misalign = (unsigned)(j % (16 / esize)),
						.parts = part_counts[s] < n ? part_counts[s] : (unsigned)n,
					};
				}
			}
			harness_run(gpu, jobs, SIZES * KINDS);
			for (size_t j = 0; j < SIZES * KINDS; j++) {
				char why[256];
				if (!ref_scan_check(op, d, jobs[j].exclusive, jobs[j].input, jobs[j].n,
						    jobs[j].output, why, sizeof(why)))
					fail_msg("%s%s scan %s %s n=%zu in %u parts: %s",
						 jobs[j].exclusive ? "exclusive" : "inclusive",
						 jobs[j].in_place ? " in place" : "", proto_op_name(op),
						 proto_dtype_name(d), jobs[j].n, jobs[j].parts, why);
				free(inputs[j]);
				free(outputs[j]);
			}
		}
	}
}

/* A scan's output may not overlap another part's input. */
static void test_scan_parts_may_not_overlap_other_parts(void **state)
{
	(void)state;
	struct kern_part parts[2] = { { .n = 64, .src = 4096, .dst = 4096 },
				      { .n = 64, .src = 8192, .dst = 8192 } };
	struct kern_job job = { .kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = VKR_DTYPE_U32, .n = 128,
				.scratch = 128, .parts = parts, .part_count = 2 };
	char msg[256];
	assert_int_equal(kern_validate(gpu, &job, msg, sizeof(msg)), 0); /* in place, part by part */
	parts[0].dst = 8192 + 64;
	assert_int_equal(kern_validate(gpu, &job, msg, sizeof(msg)), -EINVAL);
	parts[0].dst = 8192 + 256;
	assert_int_equal(kern_validate(gpu, &job, msg, sizeof(msg)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_sum_every_dtype_size_and_kind_matches_reference),
		cmocka_unit_test(test_scan_prod_every_dtype_size_and_kind_matches_reference),
		cmocka_unit_test(test_scan_min_every_dtype_size_and_kind_matches_reference),
		cmocka_unit_test(test_scan_max_every_dtype_size_and_kind_matches_reference),
		cmocka_unit_test(test_scan_exclusive_starts_with_neutral),
		cmocka_unit_test(test_scan_min_max_propagate_nan_of_either_sign),
		cmocka_unit_test(test_scan_min_keeps_subnormals),
		cmocka_unit_test(test_scan_in_place_matches_out_of_place),
		cmocka_unit_test(test_scan_float_is_deterministic),
		cmocka_unit_test(test_scan_f64_negative_zeros_keep_their_sign),
		cmocka_unit_test(test_scan_float_bits_do_not_depend_on_scheduling),
		cmocka_unit_test(test_scan_other_tile_scan_matches_reference),
		cmocka_unit_test(test_scan_host_memory_device_builds_only_what_it_runs),
		cmocka_unit_test(test_scan_spanning_several_blocks_every_dtype_matches_reference),
		cmocka_unit_test(test_scan_array_larger_than_one_storage_binding),
		cmocka_unit_test(test_scan_array_in_several_parts_matches_reference),
		cmocka_unit_test(test_scan_parts_may_not_overlap_other_parts),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
