/*
 * kern.c: plans reductions and scans and records their dispatches.
 *
 * The pipeline table: every (kernel, dtype, op[, exclusive]) has one pipeline, compiled
 * from the embedded SPIR-V with the op as a specialization constant; two kernels have a
 * second one, chosen by specialization constant 2: reductions for one dispatch (reduce.comp's
 * ONE_DISPATCH), the single-pass scan staged through host memory (STAGED). Count-if, integer
 * sums, and min and max have a third, one-dispatch too, from builds of their own whose tail
 * is atomic (ATOMIC_SUM32, ATOMIC_VALUE); reductions and count-if have builds of their own
 * for small jobs spread over workgroups (SPREAD_JOBS). A reduction's result area, its size
 * and its decoding, are kern_result.c's.
 */
#include "kern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_internal.h"
#include "kern_internal.h"
#include "shaders.h"

/* A one-dispatch reduction's arrival word in the table (a 32-bit counter, in 16 bytes: the
 * table and each job's word after it stay 16-byte aligned); the atomic tails have none. */
#define ARRIVAL_WORD_BYTES 16u
#define SCAN_SLOTS 512u
#define SCALAR_OPS 4 /* sum, prod, min, max: the ops with a pipeline per dtype */

enum {
	PIPE_REDUCE = 0,                                        /* + dtype * 4 + op */
	PIPE_COUNT = PIPE_REDUCE + VKR_DTYPE_COUNT_ * SCALAR_OPS, /* + dtype */
	/* The same kernels built for one-dispatch reductions only (ONE_DISPATCH): like
	 * PIPE_REDUCE and PIPE_COUNT. */
	PIPE_REDUCE_ONE = PIPE_COUNT + VKR_DTYPE_COUNT_,
	PIPE_COUNT_ONE = PIPE_REDUCE_ONE + VKR_DTYPE_COUNT_ * SCALAR_OPS,
	/* Small jobs spread over workgroups (reduce.comp's SPREAD_JOBS builds): like PIPE_REDUCE
	 * and PIPE_COUNT. */
	PIPE_REDUCE_SPREAD = PIPE_COUNT_ONE + VKR_DTYPE_COUNT_,
	PIPE_COUNT_SPREAD = PIPE_REDUCE_SPREAD + VKR_DTYPE_COUNT_ * SCALAR_OPS,
	/* One-dispatch reductions by 32-bit atomic sums (reduce.comp's ATOMIC_SUM32): count-if
	 * of each dtype (+ dtype), then the sums of i32 and u32. */
	PIPE_COUNT_SUMMED = PIPE_COUNT_SPREAD + VKR_DTYPE_COUNT_,
	PIPE_SUM_SUMMED_I32 = PIPE_COUNT_SUMMED + VKR_DTYPE_COUNT_,
	PIPE_SUM_SUMMED_U32,
	/* One-dispatch sums of i64 and u64 by atomics (reduce.comp's ATOMIC_VALUE, ATOMIC_SUM). */
	PIPE_SUM_ATOMIC_I64,
	PIPE_SUM_ATOMIC_U64,
	/* One-dispatch sums of f32 and f64 by limbs (reduce.comp's LIMB_SUM). */
	PIPE_SUM_LIMBS_F32,
	PIPE_SUM_LIMBS_F64,
	/* One-dispatch products of integers by exponents (reduce.comp's ATOMIC_VALUE,
	 * ATOMIC_PROD): + dtype - VKR_DTYPE_I32, for i32, u32, i64 and u64. */
	PIPE_PROD_EXPONENTS,
	/* One-dispatch sums and products whose partials the host folds (reduce.comp's
	 * HOST_FOLD): + dtype * 2 + (op == prod). */
	PIPE_HOST_FOLD = PIPE_PROD_EXPONENTS + 4,
	/* One-dispatch min and max by atomics (reduce.comp's ATOMIC_VALUE): + dtype * 2 +
	 * (op == max). */
	PIPE_EXTREME = PIPE_HOST_FOLD + VKR_DTYPE_COUNT_ * 2,
	PIPE_SCAN_REDUCE = PIPE_EXTREME + VKR_DTYPE_COUNT_ * 2,                                      /* + dtype * 4 + op */
	PIPE_SCAN_TOTALS = PIPE_SCAN_REDUCE + VKR_DTYPE_COUNT_ * SCALAR_OPS,
	PIPE_SCAN_APPLY = PIPE_SCAN_TOTALS + VKR_DTYPE_COUNT_ * SCALAR_OPS, /* + (.. )*2 + excl */
	PIPE_SCAN_CHAINED = PIPE_SCAN_APPLY + VKR_DTYPE_COUNT_ * SCALAR_OPS * 2, /* like APPLY */
	/* The single-pass scan of host memory: whole tiles through a shared-memory stage. */
	PIPE_SCAN_CHAINED_STAGED = PIPE_SCAN_CHAINED + VKR_DTYPE_COUNT_ * SCALAR_OPS * 2,
	PIPE_CLEAR = PIPE_SCAN_CHAINED_STAGED + VKR_DTYPE_COUNT_ * SCALAR_OPS * 2,
	PIPE_COPY = PIPE_CLEAR + 1,
	PIPE_READ = PIPE_COPY + 1,
	PIPE_TOTAL = PIPE_READ + 1,
};

#define DTYPE_TABLE(kernel)                                                                        \
	{ spv_##kernel##_f32, spv_##kernel##_f64, spv_##kernel##_i32,                               \
	  spv_##kernel##_u32, spv_##kernel##_i64, spv_##kernel##_u64 }
#define DTYPE_SIZES(kernel)                                                                        \
	{ &spv_##kernel##_f32_size, &spv_##kernel##_f64_size, &spv_##kernel##_i32_size,             \
	  &spv_##kernel##_u32_size, &spv_##kernel##_i64_size, &spv_##kernel##_u64_size }

#define DTYPE_TABLE_DP(kernel) { spv_##kernel##_f32_dp, spv_##kernel##_f64_dp, NULL, NULL, NULL, NULL }
#define DTYPE_SIZES_DP(kernel) { &spv_##kernel##_f32_dp_size, &spv_##kernel##_f64_dp_size, NULL, NULL, NULL, NULL }
#define DTYPE_NONE { NULL, NULL, NULL, NULL, NULL, NULL }

/* The 32-bit atomic-sum builds exist for these dtypes only: sums of i32 and u32. */
#define INT32_TABLE(kernel) { NULL, NULL, spv_##kernel##_i32, spv_##kernel##_u32, NULL, NULL }
#define INT32_SIZES(kernel) { NULL, NULL, &spv_##kernel##_i32_size, &spv_##kernel##_u32_size, NULL, NULL }
/* The limb-sum builds: sums of f32 and f64. */
#define FLOAT_TABLE(kernel) { spv_##kernel##_f32, spv_##kernel##_f64, NULL, NULL, NULL, NULL }
#define FLOAT_SIZES(kernel) { &spv_##kernel##_f32_size, &spv_##kernel##_f64_size, NULL, NULL, NULL, NULL }

enum {
	K_REDUCE, K_COUNT, K_SCAN_REDUCE, K_SCAN_TOTALS, K_SCAN_APPLY, K_SCAN_CHAINED,
	K_REDUCE_SUMMED, K_COUNT_SUMMED, K_REDUCE_ATOMIC, K_REDUCE_SPREAD, K_COUNT_SPREAD, K_REDUCE_LIMBS,
	K_REDUCE_HOSTFOLD, K_KERNELS
};
static const char *const kernel_names[K_KERNELS] = {
	"reduce", "count", "scan_reduce", "scan_totals", "scan_apply", "scan_chained",
	"reduce_summed", "count_summed", "reduce_atomic", "reduce_spread", "count_spread", "reduce_limbs",
	"reduce_hostfold",
};
static const uint32_t *const kernel_code[K_KERNELS][VKR_DTYPE_COUNT_] = {
	DTYPE_TABLE(reduce), DTYPE_TABLE(count), DTYPE_TABLE(scan_reduce),
	DTYPE_TABLE(scan_totals), DTYPE_TABLE(scan_apply), DTYPE_TABLE(scan_chained),
	INT32_TABLE(reduce_summed), DTYPE_TABLE(count_summed), DTYPE_TABLE(reduce_atomic),
	DTYPE_TABLE(reduce_spread), DTYPE_TABLE(count_spread), FLOAT_TABLE(reduce_limbs),
	DTYPE_TABLE(reduce_hostfold),
};
static const size_t *const kernel_size[K_KERNELS][VKR_DTYPE_COUNT_] = {
	DTYPE_SIZES(reduce), DTYPE_SIZES(count), DTYPE_SIZES(scan_reduce),
	DTYPE_SIZES(scan_totals), DTYPE_SIZES(scan_apply), DTYPE_SIZES(scan_chained),
	INT32_SIZES(reduce_summed), DTYPE_SIZES(count_summed), DTYPE_SIZES(reduce_atomic),
	DTYPE_SIZES(reduce_spread), DTYPE_SIZES(count_spread), FLOAT_SIZES(reduce_limbs),
	DTYPE_SIZES(reduce_hostfold),
};

static const uint32_t *const kernel_code_dp[K_KERNELS][VKR_DTYPE_COUNT_] = {
	DTYPE_TABLE_DP(reduce), DTYPE_TABLE_DP(count), DTYPE_TABLE_DP(scan_reduce),
	DTYPE_TABLE_DP(scan_totals), DTYPE_TABLE_DP(scan_apply), DTYPE_TABLE_DP(scan_chained),
	DTYPE_NONE, DTYPE_TABLE_DP(count_summed), DTYPE_NONE,
	DTYPE_TABLE_DP(reduce_spread), DTYPE_TABLE_DP(count_spread), DTYPE_NONE,
	DTYPE_TABLE_DP(reduce_hostfold),
};
static const size_t *const kernel_size_dp[K_KERNELS][VKR_DTYPE_COUNT_] = {
	DTYPE_SIZES_DP(reduce), DTYPE_SIZES_DP(count), DTYPE_SIZES_DP(scan_reduce),
	DTYPE_SIZES_DP(scan_totals), DTYPE_SIZES_DP(scan_apply), DTYPE_SIZES_DP(scan_chained),
	DTYPE_NONE, DTYPE_SIZES_DP(count_summed), DTYPE_NONE,
	DTYPE_SIZES_DP(reduce_spread), DTYPE_SIZES_DP(count_spread), DTYPE_NONE,
	DTYPE_SIZES_DP(reduce_hostfold),
};

/* The builds without subgroup operations (TILE_BLELLOCH): the scan kernels' Blelloch tile scan
 * (tile_scan.glsl), the reductions' workgroup tree in shared memory. */
static const uint32_t *const kernel_code_bl[K_KERNELS][VKR_DTYPE_COUNT_] = {
	DTYPE_TABLE(reduce_bl), DTYPE_TABLE(count_bl), DTYPE_TABLE(scan_reduce_bl),
	DTYPE_TABLE(scan_totals_bl), DTYPE_TABLE(scan_apply_bl), DTYPE_TABLE(scan_chained_bl),
	DTYPE_NONE, DTYPE_NONE,
};
static const size_t *const kernel_size_bl[K_KERNELS][VKR_DTYPE_COUNT_] = {
	DTYPE_SIZES(reduce_bl), DTYPE_SIZES(count_bl), DTYPE_SIZES(scan_reduce_bl),
	DTYPE_SIZES(scan_totals_bl), DTYPE_SIZES(scan_apply_bl), DTYPE_SIZES(scan_chained_bl),
	DTYPE_NONE, DTYPE_NONE,
};
static const uint32_t *const kernel_code_bl_dp[K_KERNELS][VKR_DTYPE_COUNT_] = {
	DTYPE_TABLE_DP(reduce_bl), DTYPE_TABLE_DP(count_bl), DTYPE_TABLE_DP(scan_reduce_bl),
	DTYPE_TABLE_DP(scan_totals_bl), DTYPE_TABLE_DP(scan_apply_bl), DTYPE_TABLE_DP(scan_chained_bl),
	DTYPE_NONE, DTYPE_NONE,
};
static const size_t *const kernel_size_bl_dp[K_KERNELS][VKR_DTYPE_COUNT_] = {
	DTYPE_SIZES_DP(reduce_bl), DTYPE_SIZES_DP(count_bl), DTYPE_SIZES_DP(scan_reduce_bl),
	DTYPE_SIZES_DP(scan_totals_bl), DTYPE_SIZES_DP(scan_apply_bl), DTYPE_SIZES_DP(scan_chained_bl),
	DTYPE_NONE, DTYPE_NONE,
};

/* The single-pass scan with its chunk rows (and parked rows) specialization constants
 * (scan_chained_rows): where kern_scan_chunk_rows() is not KERN_FIXED_CHUNK_ROWS or
 * kern_scan_park_rows() is not 0. */
static const uint32_t *const scan_rows_code[VKR_DTYPE_COUNT_] = DTYPE_TABLE(scan_chained_rows);
static const size_t *const scan_rows_size[VKR_DTYPE_COUNT_] = DTYPE_SIZES(scan_chained_rows);
static const uint32_t *const scan_rows_code_dp[VKR_DTYPE_COUNT_] = DTYPE_TABLE_DP(scan_chained_rows);
static const size_t *const scan_rows_size_dp[VKR_DTYPE_COUNT_] = DTYPE_SIZES_DP(scan_chained_rows);

static struct kern_pipeline_source sources[PIPE_TOTAL];
static char source_names[PIPE_TOTAL][40];

/* variant: specialization constant 2, for the single-pass scan whether it is staged, for
 * reductions whether the pipeline runs one-dispatch reductions (reduce.comp's ONE_DISPATCH). */
static void describe(size_t index, int kernel, vkr_dtype dtype, uint32_t op, uint32_t exclusive,
		     uint32_t variant)
{
	struct kern_pipeline_source *s = &sources[index];
	static const char *const dtype_names[] = { "f32", "f64", "i32", "u32", "i64", "u64" };
	static const char *const op_names[] = { "sum", "prod", "min", "max" };
	bool atomic = kernel == K_REDUCE_SUMMED || kernel == K_COUNT_SUMMED || kernel == K_REDUCE_ATOMIC ||
		      kernel == K_REDUCE_LIMBS;
	bool spread = kernel == K_REDUCE_SPREAD || kernel == K_COUNT_SPREAD;
	bool host_fold = kernel == K_REDUCE_HOSTFOLD;
	bool count = kernel == K_COUNT || kernel == K_COUNT_SUMMED || kernel == K_COUNT_SPREAD;
	bool reduction = kernel == K_REDUCE || count || atomic || spread || host_fold;
	snprintf(source_names[index], sizeof(source_names[index]), "%s_%s%s%s%s%s", kernel_names[kernel],
		 dtype_names[dtype], count ? "" : "_", count ? "" : op_names[op], exclusive ? "_excl" : "",
		 !variant || atomic || host_fold ? "" : reduction ? "_one" : "_staged");
	s->name = source_names[index];
	s->code = kernel_code[kernel][dtype];
	s->size = *kernel_size[kernel][dtype];
	s->code_denorm_preserve = kernel_code_dp[kernel][dtype];
	s->size_denorm_preserve = kernel_size_dp[kernel][dtype] ? *kernel_size_dp[kernel][dtype] : 0;
	s->denorm_bits = dtype == VKR_DTYPE_F32 ? 32 : dtype == VKR_DTYPE_F64 ? 64 : 0;
	s->code_blelloch = kernel_code_bl[kernel][dtype];
	s->size_blelloch = kernel_size_bl[kernel][dtype] ? *kernel_size_bl[kernel][dtype] : 0;
	s->code_blelloch_denorm_preserve = kernel_code_bl_dp[kernel][dtype];
	s->size_blelloch_denorm_preserve =
		kernel_size_bl_dp[kernel][dtype] ? *kernel_size_bl_dp[kernel][dtype] : 0;
	s->shared_bytes = kernel == K_SCAN_CHAINED ? KERN_SINGLE_PASS_SHARED_BYTES : 0;
	s->spec[0] = op;
	s->spec[1] = exclusive;
	s->spec[2] = variant;
	s->device_single_pass = kernel == K_SCAN_CHAINED && !variant;
	if (s->device_single_pass) {
		s->code_specialized_rows = scan_rows_code[dtype];
		s->size_specialized_rows = *scan_rows_size[dtype];
		s->code_specialized_rows_denorm_preserve = scan_rows_code_dp[dtype];
		s->size_specialized_rows_denorm_preserve = scan_rows_size_dp[dtype] ? *scan_rows_size_dp[dtype] : 0;
	}
	s->reduction = reduction;
	s->one_dispatch = reduction && variant;
	s->spread_jobs = spread;
	s->atomic_tail = atomic;
	s->host_fold = host_fold;
	s->counts = count;
	s->reduce_then_scan = kernel == K_SCAN_REDUCE || kernel == K_SCAN_TOTALS || kernel == K_SCAN_APPLY;
	s->accumulator_bytes = s->reduction ? kern_accumulator_bytes(count, dtype) : 0;
	s->dtype = dtype;
	s->op = op;
	s->needs_float64 = dtype == VKR_DTYPE_F64;
	/* The single-pass scan packs 32-bit values with their state in 64-bit words; f64 scans
	 * of min and max hold int64 keys (shaders/scan_op.glsl: every f64 scan module declares
	 * them, the operator being a specialization constant). f64 reductions hold int64 keys
	 * where the device compares floats by keys, which gpu_supports_dtype() asks of f64. */
	s->needs_int64 = dtype == VKR_DTYPE_I64 || dtype == VKR_DTYPE_U64 || kernel == K_SCAN_CHAINED ||
			 (atomic && (kernel != K_REDUCE_ATOMIC || dtype == VKR_DTYPE_F64)) ||
			 (dtype == VKR_DTYPE_F64 && !reduction);
}

size_t kern_pipeline_count(void)
{
	return PIPE_TOTAL;
}

const struct kern_pipeline_source *kern_pipeline_source(size_t index)
{
	if (index >= PIPE_TOTAL)
		return NULL;
	if (!sources[index].code) {
		/* Filled on first use; the engine's first caller is the single loop thread. */
		for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
			for (unsigned op = 0; op < SCALAR_OPS; op++) {
				describe(PIPE_REDUCE + d * SCALAR_OPS + op, K_REDUCE, d, op, 0, 0);
				describe(PIPE_REDUCE_ONE + d * SCALAR_OPS + op, K_REDUCE, d, op, 0, 1);
				describe(PIPE_REDUCE_SPREAD + d * SCALAR_OPS + op, K_REDUCE_SPREAD, d, op, 0, 0);
				describe(PIPE_SCAN_REDUCE + d * SCALAR_OPS + op, K_SCAN_REDUCE, d, op, 0, 0);
				describe(PIPE_SCAN_TOTALS + d * SCALAR_OPS + op, K_SCAN_TOTALS, d, op, 0, 0);
				for (unsigned e = 0; e < 2; e++) {
					size_t slot = (d * SCALAR_OPS + op) * 2 + e;
					describe(PIPE_SCAN_APPLY + slot, K_SCAN_APPLY, d, op, e, 0);
					describe(PIPE_SCAN_CHAINED + slot, K_SCAN_CHAINED, d, op, e, 0);
					describe(PIPE_SCAN_CHAINED_STAGED + slot, K_SCAN_CHAINED, d, op, e, 1);
				}
			}
			describe(PIPE_COUNT + d, K_COUNT, d, 0, 0, 0);
			describe(PIPE_COUNT_ONE + d, K_COUNT, d, 0, 0, 1);
			describe(PIPE_COUNT_SPREAD + d, K_COUNT_SPREAD, d, 0, 0, 0);
			describe(PIPE_COUNT_SUMMED + d, K_COUNT_SUMMED, d, 0, 0, 1);
		}
		describe(PIPE_SUM_SUMMED_I32, K_REDUCE_SUMMED, VKR_DTYPE_I32, VKR_OP_SUM, 0, 1);
		describe(PIPE_SUM_SUMMED_U32, K_REDUCE_SUMMED, VKR_DTYPE_U32, VKR_OP_SUM, 0, 1);
		describe(PIPE_SUM_ATOMIC_I64, K_REDUCE_ATOMIC, VKR_DTYPE_I64, VKR_OP_SUM, 0, 1);
		describe(PIPE_SUM_ATOMIC_U64, K_REDUCE_ATOMIC, VKR_DTYPE_U64, VKR_OP_SUM, 0, 1);
		describe(PIPE_SUM_LIMBS_F32, K_REDUCE_LIMBS, VKR_DTYPE_F32, VKR_OP_SUM, 0, 1);
		describe(PIPE_SUM_LIMBS_F64, K_REDUCE_LIMBS, VKR_DTYPE_F64, VKR_OP_SUM, 0, 1);
		for (unsigned d = VKR_DTYPE_I32; d <= VKR_DTYPE_U64; d++)
			describe(PIPE_PROD_EXPONENTS + d - VKR_DTYPE_I32, K_REDUCE_ATOMIC, d, VKR_OP_PROD, 0, 1);
		for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
			describe(PIPE_HOST_FOLD + d * 2, K_REDUCE_HOSTFOLD, d, VKR_OP_SUM, 0, 1);
			describe(PIPE_HOST_FOLD + d * 2 + 1, K_REDUCE_HOSTFOLD, d, VKR_OP_PROD, 0, 1);
			describe(PIPE_EXTREME + d * 2, K_REDUCE_ATOMIC, d, VKR_OP_MIN, 0, 1);
			describe(PIPE_EXTREME + d * 2 + 1, K_REDUCE_ATOMIC, d, VKR_OP_MAX, 0, 1);
		}
		sources[PIPE_CLEAR] = (struct kern_pipeline_source){
			.name = "clear", .code = spv_clear, .size = spv_clear_size,
		};
		sources[PIPE_COPY] = (struct kern_pipeline_source){
			.name = "copy", .code = spv_copy, .size = spv_copy_size,
		};
		sources[PIPE_READ] = (struct kern_pipeline_source){
			.name = "read", .code = spv_read, .size = spv_read_size,
		};
	}
	return &sources[index];
}

static uint64_t align16(uint64_t x)
{
	return (x + 15) & ~(uint64_t)15;
}

/* ---- planning: what a job dispatches, as a pure function of the job and the device ---- */

static uint32_t part_count(const struct kern_job *job)
{
	return job->part_count ? job->part_count : 1;
}

/* Part i of the job: one of its listed parts, or the whole array. */
static struct kern_part job_part(const struct kern_job *job, uint32_t i)
{
	if (job->part_count)
		return job->parts[i];
	return (struct kern_part){ .n = job->n, .src = job->src, .dst = job->dst };
}

struct reduce_plan {
	uint64_t head;  /* scalar elements before the first 16-byte aligned element */
	uint64_t nvec;  /* whole 16-byte vectors after them */
	uint32_t groups; /* workgroups of pass 0 */
};

/* Pass 0 over one part (the whole array of a job in one buffer). */
static struct reduce_plan plan_reduce(const struct gpu *gpu, const struct kern_job *job, struct kern_part part)
{
	struct reduce_plan p;
	uint64_t size = kern_dtype_size(job->dtype);
	uint64_t per_vec = 16 / size;
	uint64_t misalign = part.src % 16;
	p.head = misalign ? (16 - misalign) / size : 0;
	if (p.head > part.n)
		p.head = part.n;
	p.nvec = (part.n - p.head) / per_vec;
	/* Enough workgroups that each invocation folds at least 4 vectors, up to the device's
	 * fixed count: small arrays do not pay for idle workgroups in pass 0 or pass 1. */
	uint64_t want = (p.nvec + WG_SIZE * 4 - 1) / (WG_SIZE * 4);
	if (want < 1)
		want = 1;
	uint32_t max = gpu->info.reduce_workgroups;
	p.groups = want < max ? (uint32_t)want : max;
	return p;
}

/* Pass 0's partials of all parts, which pass 1 folds: part after part in the scratch. */
static uint64_t reduce_partials(const struct gpu *gpu, const struct kern_job *job)
{
	uint64_t partials = 0;
	for (uint32_t i = 0; i < part_count(job); i++)
		partials += plan_reduce(gpu, job, job_part(job, i)).groups;
	return partials;
}

/* The job's single-pass pipeline: the staged one for host memory. */
static uint32_t chained_pipeline(const struct kern_job *job)
{
	return (job->host_memory ? PIPE_SCAN_CHAINED_STAGED : PIPE_SCAN_CHAINED) +
	       (job->dtype * SCALAR_OPS + job->op) * 2 + (job->exclusive ? 1 : 0);
}

bool kern_device_scan_single_pass(const struct gpu_info *info, vkr_dtype dtype, vkr_op op)
{
	if (info->scan_single_pass || info->scan_reduce_then_scan)
		return info->scan_single_pass;
	/* H200, 2^28: 32-bit integers 695-711 us single-pass (runs S7-3, S7-6, S8-2) against
	 * 846-852 us reduce-then-scan (S6-7), f32 sum and prod 700-711 against 848. 64-bit types,
	 * since each look-back entry is read in one round trip (S9-1): sums and f64 prod
	 * 1525-1550 against 1777-1798, i64 and u64 prod 1767-1771 against 1812, min and max
	 * 1698-1711 against 1807. Float min and max are scanned in key space: f32 single-pass
	 * since session 20 (834 against 863 us, run S20-1; 891-897 against 863-876 in S8-2 and
	 * S8-3), f64 stays on reduce-then-scan (2173 to 2320 against 1817). */
	bool f64_min_max = dtype == VKR_DTYPE_F64 && (op == VKR_OP_MIN || op == VKR_OP_MAX);
	return info->scan_chunked && !f64_min_max;
}

/* The single-pass scan where kern_device_scan_single_pass() says, or the job reads or writes
 * host memory (there reading the input once matters most), and the device built its
 * pipeline: they need shaderInt64 and KERN_SINGLE_PASS_SHARED_BYTES of shared memory. A job
 * in several buffers runs it part after part, each part starting from the total of those
 * before it. */
static bool single_pass(const struct gpu *gpu, const struct kern_job *job)
{
	bool wanted = job->host_memory || kern_device_scan_single_pass(&gpu->info, job->dtype, job->op);
	return wanted && gpu_pipeline_available(gpu, chained_pipeline(job));
}

uint32_t kern_scan_chunk_rows(const struct gpu_info *info, vkr_dtype dtype, vkr_op op, bool exclusive)
{
	if (info->scan_chunk_rows_override)
		return info->scan_chunk_rows_override;
	/* On the H200 at 2^28 (docs/BENCHMARKS.md, sessions 24 and 25). The driver's registers
	 * per invocation decide more than the tile's arithmetic, so every count was timed.
	 * 14 rows (56 KiB tiles, 128 registers) for the i64 and u64 products: 1477 -> 1416 (9
	 * rows 1604, 13 1629). The f64 sum and product had 14 too (1427 -> 1317 us; 12 rows 1380,
	 * 13 1331, 9 1341, 15 1387 with spills; runs S24-2, S24-3, S25-1, S25-2) until their rows
	 * were scanned within their chunk (scan_chained.comp's ROWS_SCANNED_IN_CHUNK), which holds
	 * 16 rows (64 KiB) at 128 registers without spilling: on an H100 at 2^28 the f64 sum and
	 * product 1725-1732 us at 14 rows -> 1626-1637 at 16 (runs S35-1, S35-2; 15 rows 1813,
	 * spilling; exclusive ones 1723-1731 -> 1708-1722). Not measured on the H200.
	 * 10 rows (80 registers) for the i64 and u64 sums: 1399 -> 1298 (9 rows 1340, 14 1350;
	 * S25-1, S25-2). 9 rows for the 64-bit integer min and max: 1481 -> 1395 (10 rows 1530,
	 * 14 1460). Exclusive 64-bit scans gain as much at the same counts (S25-4). The f64 min
	 * and max run reduce-then-scan (kern_device_scan_single_pass); single-pass they were
	 * fastest at 8 rows (1998 us, against 2335 at 14 and 2590 at 9; S25-2).
	 * 32-bit scans: 9 rows (36 KiB, still 64 registers) for the inclusive f32 sum and
	 * product, 660 -> 641 (S24-2, S24-3), and the inclusive min and max, f32 787 -> 766 and
	 * i32 656 -> 635 (S25-2); the i32 and u32 sums and products lost 4 to 5 us at 9 rows
	 * (S24-2), and 7 rows and 10 to 12 (80 to 128 registers) were slower for every 32-bit
	 * scan (S23-1, S24-1, S25-1). Exclusive 32-bit scans lost at 9 rows (S25-4): f32 sum
	 * 648 -> 679, i32 max 647 -> 719, f32 max 786 -> 868 (80 registers there), so they keep
	 * 8. */
	bool wide = kern_dtype_size(dtype) == 8;
	if (!wide && exclusive)
		return KERN_FIXED_CHUNK_ROWS;
	switch (op) {
	case VKR_OP_SUM:
		if (wide)
			return dtype == VKR_DTYPE_F64 ? 16 : 10;
		break;
	case VKR_OP_PROD:
		if (wide)
			return dtype == VKR_DTYPE_F64 ? 16 : 14;
		break;
	case VKR_OP_MIN:
	case VKR_OP_MAX:
		return dtype == VKR_DTYPE_F64 ? KERN_FIXED_CHUNK_ROWS : 9;
	default:
		return KERN_FIXED_CHUNK_ROWS;
	}
	/* Inclusive sums and products of 32-bit types. */
	return dtype == VKR_DTYPE_F32 ? 9 : KERN_FIXED_CHUNK_ROWS;
}

uint32_t kern_scan_park_rows(const struct gpu_info *info, vkr_dtype dtype, vkr_op op, bool exclusive)
{
	/* None by default. On the H200 at 2^28 (session 26, run S26-2) the driver held both
	 * parts' rows in registers at once: with 8 parked rows the f32 sum took 139 registers
	 * (64 without), the f64 sum 180 and spills (128), the i64 sum 142 (80), and every scan
	 * ran slower (f32 sum 638 -> 920 us, f64 sum 1311 -> 2336; 4 parked rows: 705, 1470).
	 * A fence before the second part's loads (run S26-3) held 108, 134 and 112 registers:
	 * the f32 sum 644 -> 632, everything else still slower; not kept, since its code shape
	 * measured the i64 product 1431 us with nothing parked (S26-4; 1391 to 1399 without). */
	uint32_t rows = kern_scan_chunk_rows(info, dtype, op, exclusive);
	uint32_t park = info->scan_park_rows_override >= 0 ? (uint32_t)info->scan_park_rows_override : 0;
	/* scan_chained.comp's s_park: one 16-byte vector per invocation and parked row, beside
	 * the kernel's other shared memory (at most 15,456 bytes on the H200: run S26-3). */
	uint32_t room = info->max_shared_memory > KERN_CHUNKED_SHARED_BYTES
				? (info->max_shared_memory - KERN_CHUNKED_SHARED_BYTES) / (WG_SIZE * 16)
				: 0;
	park = park < rows ? park : rows; /* the parked part reuses the rows' arrays */
	return park < room ? park : room;
}

/* Elements per tile: 512 slots of two 16-byte vectors (SLOT_VECS in scan_tile.glsl), or for
 * the single pass over device memory in the build with subgroup operations, chunked tiles of
 * kern_scan_park_rows() + kern_scan_chunk_rows() vectors per invocation (gpu.c passes the
 * same values to scan_chained.comp as PARK_ROWS and CHUNK_ROWS). */
static uint64_t scan_tile_elements(const struct gpu *gpu, const struct kern_job *job)
{
	uint64_t per_vec = 16 / kern_dtype_size(job->dtype);
	if (gpu->info.scan_chunked && !job->host_memory && single_pass(gpu, job))
		return WG_SIZE * per_vec *
		       ((uint64_t)kern_scan_chunk_rows(&gpu->info, job->dtype, job->op, job->exclusive) +
			kern_scan_park_rows(&gpu->info, job->dtype, job->op, job->exclusive));
	return SCAN_SLOTS * 2 * per_vec;
}

/* Tiles of one part: each part starts a tile of its own. */
static uint64_t part_tiles(const struct gpu *gpu, const struct kern_job *job, uint64_t n)
{
	uint64_t tile = scan_tile_elements(gpu, job);
	return (n + tile - 1) / tile;
}

static uint64_t scan_tiles(const struct gpu *gpu, const struct kern_job *job)
{
	uint64_t tiles = 0;
	for (uint32_t i = 0; i < part_count(job); i++)
		tiles += part_tiles(gpu, job, job_part(job, i).n);
	return tiles;
}

/* Single-pass scratch (scan_chained.comp): the tile counter, then an entry for each tile, for
 * the aggregate of each block of SCAN_BLOCK tiles and for each block's inclusive prefix. An
 * entry is one 64-bit word per 32 bits of the value, each holding a state and those 32 bits,
 * so that a look-back reads an entry in one round trip. All of it is zeroed before the scan;
 * the parts of a job in several buffers use it in turn, zeroed before each. After it, their
 * carries: 16 bytes per part, the total of the parts up to it. */
#define SCAN_BLOCK 256u
struct chained_layout {
	uint64_t counter, states, zero_words, carries, end;
};

static struct chained_layout chained_layout(const struct gpu *gpu, const struct kern_job *job)
{
	uint64_t tiles = 0;
	for (uint32_t i = 0; i < part_count(job); i++) {
		uint64_t t = part_tiles(gpu, job, job_part(job, i).n);
		tiles = t > tiles ? t : tiles;
	}
	uint64_t entries = tiles + 2 * ((tiles + SCAN_BLOCK - 1) / SCAN_BLOCK);
	struct chained_layout l;
	l.counter = 0;
	l.states = 16;
	l.carries = l.states + align16(entries * 8 * (kern_dtype_size(job->dtype) / 4));
	l.zero_words = l.carries / 4;
	l.end = l.carries + (part_count(job) > 1 ? 16 * (uint64_t)part_count(job) : 0);
	return l;
}

static uint32_t scan_groups(const struct gpu *gpu, uint64_t tiles)
{
	uint64_t max = gpu->info.scan_workgroups;
	return (uint32_t)(tiles < max ? tiles : max);
}

static bool is_small(const struct kern_job *job)
{
	return job->kind == KERN_REDUCE && job->n <= KERN_SMALL_MAX_ELEMENTS && part_count(job) == 1;
}

/* A reduction in one dispatch (pass 3 of reduce.comp): the workgroup that finishes last folds
 * the partials, counting arrivals on zeroed words of the command buffer's table (or, with an
 * atomic tail, finds every other workgroup's value already in those words). Saves the
 * second dispatch and the barrier before it (0.1 to 3.2 us on the H200, run S11-1). A job in
 * several buffers keeps two passes: its partials come from one dispatch per part. Where the
 * table falls back to host RAM (gpu_cmd_table: no device-local mapped memory left), each
 * arrival is an atomic over PCIe; not measured (the H200 maps all of its memory). */
static bool one_dispatch(const struct gpu *gpu, const struct kern_job *job)
{
	return job->kind == KERN_REDUCE && gpu->info.reduce_one_dispatch && !is_small(job) &&
	       part_count(job) == 1;
}

bool kern_flagged_partials(const struct gpu_info *info, unsigned accumulator_bytes)
{
	return info->reduce_flagged_partials && (accumulator_bytes == 4 || info->reduce_flagged_wide);
}

bool kern_atomic_sums32(const struct gpu_info *info, vkr_dtype dtype, vkr_op op)
{
	return info->reduce_atomic_tails &&
	       (op == VKR_OP_COUNT || (op == VKR_OP_SUM && (dtype == VKR_DTYPE_I32 || dtype == VKR_DTYPE_U32)));
}

bool kern_atomic_extremes(const struct gpu_info *info, vkr_dtype dtype, vkr_op op)
{
	bool keyed = (dtype == VKR_DTYPE_F32 && !info->denorm_preserve32) ||
		     (dtype == VKR_DTYPE_F64 && !info->denorm_preserve64);
	bool integer = dtype != VKR_DTYPE_F32 && dtype != VKR_DTYPE_F64;
	return info->reduce_atomic_tails && (op == VKR_OP_MIN || op == VKR_OP_MAX) && (integer || keyed);
}

bool kern_atomic_sums(const struct gpu_info *info, vkr_dtype dtype, vkr_op op)
{
	return info->reduce_atomic_tails && op == VKR_OP_SUM &&
	       (dtype == VKR_DTYPE_I64 || dtype == VKR_DTYPE_U64);
}

bool kern_float_limb_sums(const struct gpu_info *info, vkr_dtype dtype, vkr_op op)
{
	return info->reduce_atomic_tails && info->reduce_float_limbs && op == VKR_OP_SUM &&
	       ((dtype == VKR_DTYPE_F32 && !info->denorm_preserve32) ||
		(dtype == VKR_DTYPE_F64 && !info->denorm_preserve64));
}

bool kern_product_exponents(const struct gpu_info *info, vkr_dtype dtype, vkr_op op)
{
	return info->reduce_atomic_tails && info->reduce_product_exponents && op == VKR_OP_PROD &&
	       dtype >= VKR_DTYPE_I32 && dtype <= VKR_DTYPE_U64;
}

/* A tail by atomics for this op and dtype: integer sums and products, min and max, float
 * sums by limbs. */
static bool atomic_tail_for(const struct gpu_info *info, vkr_dtype dtype, vkr_op op)
{
	return kern_atomic_sums32(info, dtype, op) || kern_atomic_sums(info, dtype, op) ||
	       kern_atomic_extremes(info, dtype, op) || kern_float_limb_sums(info, dtype, op) ||
	       kern_product_exponents(info, dtype, op);
}

bool kern_atomic_tail_used(const struct gpu_info *info, const struct kern_pipeline_source *src)
{
	return src->atomic_tail && atomic_tail_for(info, src->dtype, src->counts ? VKR_OP_COUNT : src->op);
}

/* A one-dispatch reduction by an atomic tail (reduce.comp's ATOMIC_SUM32, ATOMIC_VALUE,
 * LIMB_SUM): no partials and no arrival word; its workgroups' atomics go to the result area. */
bool kern_result_by_atomics(const struct gpu *gpu, const struct kern_job *job)
{
	return one_dispatch(gpu, job) && atomic_tail_for(&gpu->info, job->dtype, job->op);
}

bool kern_host_fold(const struct gpu_info *info, vkr_dtype dtype, vkr_op op)
{
	return info->reduce_atomic_tails && info->reduce_host_fold && info->readback_cached &&
	       (op == VKR_OP_SUM || op == VKR_OP_PROD) &&
	       !atomic_tail_for(info, dtype, op);
}

bool kern_result_by_host_fold(const struct gpu *gpu, const struct kern_job *job)
{
	return one_dispatch(gpu, job) && kern_host_fold(&gpu->info, job->dtype, job->op);
}

/* A one-dispatch reduction whose workgroups need no last one to fold their values: an atomic
 * tail, or partials the host folds. No arrival word, no partials in the scratch or table. */
static bool no_last_workgroup(const struct gpu *gpu, const struct kern_job *job)
{
	return kern_result_by_atomics(gpu, job) || kern_result_by_host_fold(gpu, job);
}

uint32_t kern_reduce_most_groups(const struct gpu *gpu, const struct kern_job *job)
{
	return plan_reduce(gpu, job, (struct kern_part){ .n = job->n }).groups;
}

uint32_t kern_reduce_groups(const struct gpu *gpu, const struct kern_job *job)
{
	return plan_reduce(gpu, job, job_part(job, 0)).groups;
}

/* A one-dispatch reduction whose partials are flagged in the table (reduce.comp's
 * FLAGGED_PARTIALS), not fenced in the scratch. */
static bool flagged_partials(const struct gpu *gpu, const struct kern_job *job)
{
	return one_dispatch(gpu, job) && !no_last_workgroup(gpu, job) &&
	       kern_flagged_partials(&gpu->info, (unsigned)kern_reduce_acc_bytes(job));
}

/* Table bytes of a job's flagged partials: each as its bits and their complement. */
static uint64_t flagged_bytes(const struct gpu *gpu, const struct kern_job *job)
{
	if (!flagged_partials(gpu, job))
		return 0;
	return align16(reduce_partials(gpu, job) * 2 * kern_reduce_acc_bytes(job));
}

/* The pipeline of a one-dispatch reduction (pass 3) of dtype and op: partials folded by the
 * host, an atomic tail (integer sums, min and max by atomics, ...), or the generic one. */
static uint32_t one_dispatch_pipeline(const struct gpu_info *info, vkr_dtype dtype, vkr_op op)
{
	if (kern_host_fold(info, dtype, op))
		return PIPE_HOST_FOLD + dtype * 2 + (op == VKR_OP_PROD);
	if (atomic_tail_for(info, dtype, op)) {
		if (op == VKR_OP_COUNT)
			return PIPE_COUNT_SUMMED + dtype;
		if (op == VKR_OP_SUM) {
			switch (dtype) {
			case VKR_DTYPE_I32: return PIPE_SUM_SUMMED_I32;
			case VKR_DTYPE_U32: return PIPE_SUM_SUMMED_U32;
			case VKR_DTYPE_I64: return PIPE_SUM_ATOMIC_I64;
			case VKR_DTYPE_F32: return PIPE_SUM_LIMBS_F32;
			case VKR_DTYPE_F64: return PIPE_SUM_LIMBS_F64;
			default: return PIPE_SUM_ATOMIC_U64; /* atomic_tail_for: no other sum */
			}
		}
		if (op == VKR_OP_PROD)
			return PIPE_PROD_EXPONENTS + dtype - VKR_DTYPE_I32; /* integers only */
		return PIPE_EXTREME + dtype * 2 + (op == VKR_OP_MAX);
	}
	if (op == VKR_OP_COUNT)
		return PIPE_COUNT_ONE + dtype;
	return PIPE_REDUCE_ONE + dtype * SCALAR_OPS + op;
}

/* The pipeline of the job's passes: one_dispatch's (pass 3) or the others' (0, 1 and 2). */
static uint32_t reduce_pipeline(const struct gpu *gpu, const struct kern_job *job, bool one)
{
	if (one)
		return one_dispatch_pipeline(&gpu->info, job->dtype, job->op);
	if (job->op == VKR_OP_COUNT)
		return PIPE_COUNT + job->dtype;
	return PIPE_REDUCE + job->dtype * SCALAR_OPS + job->op;
}

bool kern_pipeline_superseded(const struct gpu *gpu, const struct kern_pipeline_source *src)
{
	const struct gpu_info *info = &gpu->info;
	if (src->one_dispatch && !src->atomic_tail && !src->host_fold) {
		/* reduce_pipeline's choice for a one-dispatch job of src's op and dtype */
		uint32_t used = one_dispatch_pipeline(info, src->dtype, src->counts ? VKR_OP_COUNT : src->op);
		return kern_pipeline_source(used) != src && gpu_pipeline_available(gpu, used);
	}
	if (src->reduce_then_scan && gpu->host_memory_scans_only) {
		/* single_pass() for host memory: the staged pipeline where it is built. The
		 * reduce and totals passes serve both kinds of scan. */
		uint32_t staged = PIPE_SCAN_CHAINED_STAGED + (src->dtype * SCALAR_OPS + src->op) * 2;
		return gpu_pipeline_available(gpu, staged) && gpu_pipeline_available(gpu, staged + 1);
	}
	return false;
}

bool kern_small_jobs_spread(const struct gpu_info *info)
{
	return info->reduce_subgroup_tree;
}

/* A small job's entry in the job table: the layout of SmallJob in reduce.comp. */
struct small_job {
	uint32_t src[2], src_vec[2], dst[2], cmp_bits[2];
	uint32_t n, head, nvec, cmp;
};

/* A spread small job's entry, one per workgroup: the layout of SpreadJob in reduce.comp. */
struct spread_job {
	struct small_job job;
	uint32_t counter[2], partials[2];
	uint32_t part, parts;
};
_Static_assert(sizeof(struct small_job) == 48 && sizeof(struct spread_job) == 72,
	       "the job tables' entries are laid out as reduce.comp's scalar structs");

/* How a small job is recorded: its workgroups (one, or for a job of more than
 * KERN_SMALL_SPREAD_BYTES one per 1024 vectors, as pass 0's grid: reduce.comp's pass 2 says
 * why), its pipeline (the two-pass one's pass 2, or the spread one, reduce.comp's
 * SPREAD_JOBS), the table bytes of its entries, and of its arrival word and partials (none
 * for a job of one workgroup). */
struct small_layout {
	uint32_t parts, pipeline;
	uint64_t entry_bytes, tail_bytes;
};

static struct small_layout small_job_layout(const struct gpu *gpu, const struct kern_job *job)
{
	struct small_layout l = { .parts = 1, .entry_bytes = sizeof(struct small_job) };
	if (!kern_small_jobs_spread(&gpu->info) || job->n * kern_dtype_size(job->dtype) <= KERN_SMALL_SPREAD_BYTES) {
		l.pipeline = reduce_pipeline(gpu, job, false);
		return l;
	}
	l.parts = plan_reduce(gpu, job, job_part(job, 0)).groups;
	l.pipeline = job->op == VKR_OP_COUNT ? PIPE_COUNT_SPREAD + job->dtype
					     : PIPE_REDUCE_SPREAD + job->dtype * SCALAR_OPS + job->op;
	l.entry_bytes = l.parts * sizeof(struct spread_job);
	l.tail_bytes = align16(ARRIVAL_WORD_BYTES + l.parts * kern_reduce_acc_bytes(job));
	return l;
}

uint64_t kern_scratch_bytes(const struct gpu *gpu, const struct kern_job *job)
{
	if (is_small(job))
		return 0; /* its workgroups' partials, if it has several, are in the table */
	if (job->kind == KERN_REDUCE && (flagged_partials(gpu, job) || no_last_workgroup(gpu, job)))
		return 0; /* its partials are in the command buffer's table, or it has none */
	if (job->kind == KERN_REDUCE)
		return align16(reduce_partials(gpu, job) * kern_reduce_acc_bytes(job));
	if (single_pass(gpu, job))
		return chained_layout(gpu, job).end;
	return align16(scan_tiles(gpu, job) * kern_dtype_size(job->dtype));
}

static bool ranges_overlap(uint64_t a, uint64_t a_bytes, uint64_t b, uint64_t b_bytes)
{
	return a_bytes > 0 && b_bytes > 0 && a < b + b_bytes && b < a + a_bytes;
}

/* Every array the GPU reads or writes lies in buffers (ranges of an imported region, a ring,
 * buffers of the job's own), and no buffer is larger than one allocation: each part must fit
 * one. A scan's output may be its input, part for part, but may not overlap any other
 * part's input, which another tile may still have to read. */
static int validate_parts(const struct gpu *gpu, const struct kern_job *job, char *msg, size_t msg_size)
{
	uint64_t size = kern_dtype_size(job->dtype);
	uint64_t total = 0;
	for (uint32_t i = 0; i < part_count(job); i++) {
		struct kern_part part = job_part(job, i);
		uint64_t bytes = part.n * size; /* n <= KERN_MAX_ELEMENTS: no overflow */
		if (job->part_count && (part.n == 0 || part.n > KERN_MAX_ELEMENTS - total)) {
			snprintf(msg, msg_size, "count: part %u holds %llu elements; parts are not empty and "
				 "add up to the request's %llu", i, (unsigned long long)part.n,
				 (unsigned long long)job->n);
			return -EINVAL;
		}
		total += part.n;
		if (bytes > gpu->info.array_buffer_limit) {
			snprintf(msg, msg_size, "count: %llu elements are %llu bytes, more than the %llu bytes this "
				 "device holds in one buffer (%s)",
				 (unsigned long long)part.n, (unsigned long long)bytes,
				 (unsigned long long)gpu->info.array_buffer_limit, gpu->info.name);
			return -E2BIG;
		}
		if (part.src % size || (job->kind == KERN_SCAN && part.dst % size)) {
			snprintf(msg, msg_size, "offset: addresses must be aligned to the element size");
			return -EINVAL;
		}
		if (job->kind != KERN_SCAN)
			continue;
		for (uint32_t j = 0; j < part_count(job); j++) {
			struct kern_part other = job_part(job, j);
			bool in_place = i == j && part.src == part.dst;
			if (!in_place && ranges_overlap(part.dst, bytes, other.src, other.n * size)) {
				snprintf(msg, msg_size, "dst: overlaps src without being the same range");
				return -EINVAL;
			}
		}
	}
	if (job->part_count && total != job->n) {
		snprintf(msg, msg_size, "count: parts of %llu elements in all for a request of %llu",
			 (unsigned long long)total, (unsigned long long)job->n);
		return -EINVAL;
	}
	return 0;
}

int kern_validate(const struct gpu *gpu, const struct kern_job *job, char *msg, size_t msg_size)
{
	char dummy[1];
	if (!msg) {
		msg = dummy;
		msg_size = sizeof(dummy);
	}
	if ((unsigned)job->dtype >= VKR_DTYPE_COUNT_) {
		snprintf(msg, msg_size, "dtype: unknown");
		return -EINVAL;
	}
	if ((unsigned)job->op >= VKR_OP_COUNT_ || (job->kind == KERN_SCAN && job->op == VKR_OP_COUNT) ||
	    (job->kind != KERN_SCAN && job->kind != KERN_REDUCE)) {
		snprintf(msg, msg_size, "op: not valid for %s", job->kind == KERN_SCAN ? "scan" : "reduce");
		return -EINVAL;
	}
	if (job->op == VKR_OP_COUNT && (unsigned)job->cmp >= VKR_CMP_COUNT_) {
		snprintf(msg, msg_size, "cmp: unknown comparison");
		return -EINVAL;
	}
	if (!gpu_supports_dtype(gpu, job->dtype)) {
		snprintf(msg, msg_size, "dtype: this device (%s) has no %s support", gpu->info.name,
			 job->dtype == VKR_DTYPE_F64 && !gpu->info.shader_float64 ? "shaderFloat64" : "shaderInt64");
		return -ENOTSUP;
	}
	if (job->kind == KERN_SCAN && job->dtype == VKR_DTYPE_F64 && !gpu->info.shader_int64) {
		snprintf(msg, msg_size, "dtype: scans of f64 need shaderInt64, which this device (%s) lacks",
			 gpu->info.name);
		return -ENOTSUP;
	}
	if (job->n > KERN_MAX_ELEMENTS) {
		snprintf(msg, msg_size, "count: %llu elements exceed the limit of %llu per request",
			 (unsigned long long)job->n, (unsigned long long)KERN_MAX_ELEMENTS);
		return -E2BIG;
	}
	if (job->kind == KERN_REDUCE && job->n == 0 && (job->op == VKR_OP_MIN || job->op == VKR_OP_MAX)) {
		snprintf(msg, msg_size, "src: %s of an empty array is undefined",
			 job->op == VKR_OP_MIN ? "min" : "max");
		return -EINVAL;
	}
	if (job->part_count > KERN_MAX_PARTS || (job->part_count && !job->parts)) {
		snprintf(msg, msg_size, "count: %u parts, more than the %u one request may span",
			 job->part_count, KERN_MAX_PARTS);
		return -E2BIG;
	}
	if ((job->kind == KERN_REDUCE && job->dst % 8) || job->scratch % 16) {
		snprintf(msg, msg_size, "offset: addresses must be aligned to the element size");
		return -EINVAL;
	}
	return validate_parts(gpu, job, msg, msg_size);
}

/* ---- recording ---------------------------------------------------------------------- */

struct reduce_params {
	uint32_t src[2], src_vec[2], dst[2], cmp_bits[2];
	uint32_t n, head, nvec, pass_index, cmp;
	uint32_t partials[2], counter[2]; /* pass 3 (one dispatch) only */
};

struct scan_params {
	uint32_t src[2], dst[2], totals[2];
	uint32_t n, tiles, vec_ok;
};

struct chained_params {
	uint32_t src[2], dst[2], counter[2], states[2];
	uint32_t n, tiles, vec_ok, patience;
	uint32_t carry_in[2], carry_out[2];
};

struct clear_params {
	uint32_t dst[2];
	uint32_t words;
};

_Static_assert(sizeof(struct reduce_params) <= GPU_PUSH_CONSTANT_BYTES, "push constants");
_Static_assert(sizeof(struct scan_params) <= GPU_PUSH_CONSTANT_BYTES, "push constants");
_Static_assert(sizeof(struct chained_params) <= GPU_PUSH_CONSTANT_BYTES, "push constants");

static void split(uint32_t out[2], uint64_t address)
{
	out[0] = (uint32_t)address;
	out[1] = (uint32_t)(address >> 32);
}

struct recorder {
	struct gpu *gpu;
	VkCommandBuffer cb;
	VkPipeline bound;
	int error; /* the first pipeline that could not be built: the recording is abandoned */
	uint64_t counters; /* device address of the next zeroed arrival word (partials' tails) */
	uint64_t flagged;  /* device address of the next job's zeroed flagged partials */
};

static void dispatch_2d(struct recorder *rec, uint32_t pipeline, const void *params, uint32_t size,
			uint32_t groups_x, uint32_t groups_y)
{
	VkPipeline p;
	int rc = gpu_pipeline(rec->gpu, pipeline, &p);
	if (rc < 0) {
		if (!rec->error)
			rec->error = rc;
		return;
	}
	if (p != rec->bound) {
		vkCmdBindPipeline(rec->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p);
		rec->bound = p;
	}
	vkCmdPushConstants(rec->cb, gpu_pipeline_layout(rec->gpu), VK_SHADER_STAGE_COMPUTE_BIT, 0, size,
			   params);
	vkCmdDispatch(rec->cb, groups_x, groups_y, 1);
}

static void dispatch(struct recorder *rec, uint32_t pipeline, const void *params, uint32_t size,
		     uint32_t groups)
{
	dispatch_2d(rec, pipeline, params, size, groups, 1);
}

unsigned kern_job_phases(const struct gpu *gpu, const struct kern_job *job)
{
	if (is_small(job))
		return 0; /* recorded by record_small_jobs, in phase 0's place */
	if (job->kind == KERN_REDUCE)
		return one_dispatch(gpu, job) ? 1 : 2;
	if (job->n == 0)
		return 0;
	return single_pass(gpu, job) ? 2 * part_count(job) : 3;
}

/* Phase 0: each part's workgroups write their partials, part after part; phase 1 folds them
 * all into the result slot. A reduction in one dispatch does both in phase 0. */
static void record_reduce_phase(struct recorder *rec, const struct kern_job *job, unsigned phase)
{
	/* One answer for the pipeline and the pass index: a one-dispatch pipeline runs pass 3
	 * and only pass 3, and the others never run it. */
	bool one = one_dispatch(rec->gpu, job);
	uint32_t pipe = reduce_pipeline(rec->gpu, job, one);
	if (phase == 1) {
		struct reduce_params p = { 0 };
		split(p.src, job->scratch);
		split(p.dst, job->dst);
		p.n = (uint32_t)reduce_partials(rec->gpu, job);
		p.pass_index = 1;
		dispatch(rec, pipe, &p, sizeof(p), 1);
		return;
	}
	uint64_t partials = job->scratch;
	for (uint32_t i = 0; i < part_count(job); i++) {
		struct kern_part part = job_part(job, i);
		struct reduce_plan plan = plan_reduce(rec->gpu, job, part);
		struct reduce_params p = { 0 };
		split(p.src, part.src);
		split(p.src_vec, part.src + plan.head * kern_dtype_size(job->dtype));
		split(p.dst, partials);
		split(p.cmp_bits, job->cmp_value.u64);
		if (kern_dtype_size(job->dtype) == 4)
			p.cmp_bits[1] = 0; /* 32-bit values live in the low word of the union */
		p.n = (uint32_t)part.n;
		p.head = (uint32_t)plan.head;
		p.nvec = (uint32_t)plan.nvec;
		p.pass_index = 0;
		p.cmp = job->cmp;
		if (one) {
			p.pass_index = 3;
			split(p.dst, job->dst);
			if (!no_last_workgroup(rec->gpu, job)) {
				split(p.partials, flagged_partials(rec->gpu, job) ? rec->flagged : partials);
				split(p.counter, rec->counters);
				rec->counters += ARRIVAL_WORD_BYTES;
				rec->flagged += flagged_bytes(rec->gpu, job); /* 0 for fenced partials */
			}
		}
		dispatch(rec, pipe, &p, sizeof(p), plan.groups);
		partials += plan.groups * kern_reduce_acc_bytes(job);
	}
}

/* Single pass: phase 0 zeroes the flags and the tile counter, phase 1 scans; phases 2k and
 * 2k + 1 do the same for part k of a job in several buffers. */
static void record_chained_phase(struct recorder *rec, const struct kern_job *job, unsigned phase)
{
	uint32_t index = phase / 2;
	struct kern_part part = job_part(job, index);
	uint64_t tiles = part_tiles(rec->gpu, job, part.n);
	struct chained_layout l = chained_layout(rec->gpu, job);
	if (phase % 2 == 0) {
		struct clear_params c = { .words = (uint32_t)l.zero_words };
		split(c.dst, job->scratch + l.counter);
		uint64_t groups = (l.zero_words + WG_SIZE * 8 - 1) / (WG_SIZE * 8);
		dispatch(rec, PIPE_CLEAR, &c, sizeof(c), (uint32_t)(groups < 1024 ? groups : 1024));
		return;
	}
	struct chained_params p = { 0 };
	split(p.src, part.src);
	split(p.dst, part.dst);
	split(p.counter, job->scratch + l.counter);
	split(p.states, job->scratch + l.states);
	p.n = (uint32_t)part.n;
	p.tiles = (uint32_t)tiles;
	p.vec_ok = part.src % 16 == 0 && part.dst % 16 == 0;
	p.patience = rec->gpu->info.scan_patience;
	if (index > 0)
		split(p.carry_in, job->scratch + l.carries + 16 * (uint64_t)(index - 1));
	if (index + 1 < part_count(job))
		split(p.carry_out, job->scratch + l.carries + 16 * (uint64_t)index);
	/* One workgroup per tile; rows of at most maxComputeWorkGroupCount[0]. Workgroups take
	 * their tile from a counter or by their id in row-major order, so the grid's shape does
	 * not matter; those past the last tile leave. */
	uint64_t max_x = rec->gpu->info.scan_workgroups;
	uint64_t x = tiles < max_x ? tiles : max_x;
	uint64_t y = (tiles + x - 1) / x;
	dispatch_2d(rec, chained_pipeline(job), &p, sizeof(p), (uint32_t)x, (uint32_t)y);
}

static void record_scan_phase(struct recorder *rec, const struct kern_job *job, unsigned phase)
{
	if (single_pass(rec->gpu, job)) {
		record_chained_phase(rec, job, phase);
		return;
	}
	uint32_t slot = job->dtype * SCALAR_OPS + job->op;
	struct scan_params p = { 0 };
	if (phase == 1) {
		/* One scan over the tile totals of every part: each part's tiles follow the
		 * previous part's, so its first tile's carry-in is the total of all before it. */
		split(p.totals, job->scratch);
		p.tiles = (uint32_t)scan_tiles(rec->gpu, job);
		dispatch(rec, PIPE_SCAN_TOTALS + slot, &p, sizeof(p), 1);
		return;
	}
	uint32_t pipe = phase == 0 ? PIPE_SCAN_REDUCE + slot
				   : PIPE_SCAN_APPLY + slot * 2 + (job->exclusive ? 1 : 0);
	uint64_t totals = job->scratch;
	for (uint32_t i = 0; i < part_count(job); i++) {
		struct kern_part part = job_part(job, i);
		uint64_t tiles = part_tiles(rec->gpu, job, part.n);
		split(p.src, part.src);
		split(p.dst, part.dst);
		split(p.totals, totals);
		p.n = (uint32_t)part.n;
		p.tiles = (uint32_t)tiles;
		p.vec_ok = part.src % 16 == 0 && part.dst % 16 == 0;
		dispatch(rec, pipe, &p, sizeof(p), scan_groups(rec->gpu, tiles));
		totals += tiles * kern_dtype_size(job->dtype);
	}
}

/* Writes the table of small jobs, grouped by pipeline, at the start of the command buffer's
 * mapped table (host writes before the submission are visible to the device: no copy command
 * and no barrier), and records one dispatch per group: a small job's entry, or for a spread
 * job an entry per workgroup, whose arrival word and partials are at tails (zeroed by the
 * caller). Groups are in the order of their pipelines, each at a multiple of 8 bytes. */
static void record_small_jobs(struct recorder *rec, const struct gpu_buffer *buffer,
			      const struct kern_job *jobs, size_t count, uint64_t tails)
{
	char *table = buffer->map;
	/* Counting sort by pipeline, stable: groups are contiguous in the table. */
	uint32_t entries[PIPE_TOTAL] = { 0 };
	uint64_t first[PIPE_TOTAL + 1] = { 0 }; /* byte offsets */
	for (size_t i = 0; i < count; i++) {
		if (!is_small(&jobs[i]))
			continue;
		struct small_layout l = small_job_layout(rec->gpu, &jobs[i]);
		entries[l.pipeline] += l.parts;
		first[l.pipeline + 1] += l.entry_bytes;
	}
	for (size_t p = 0; p < PIPE_TOTAL; p++)
		first[p + 1] += first[p];
	uint64_t fill[PIPE_TOTAL];
	memcpy(fill, first, sizeof(fill));
	for (size_t i = 0; i < count; i++) {
		const struct kern_job *job = &jobs[i];
		if (!is_small(job))
			continue;
		struct kern_part part = job_part(job, 0);
		struct reduce_plan plan = plan_reduce(rec->gpu, job, part);
		struct small_job entry = { 0 };
		split(entry.src, part.src);
		split(entry.src_vec, part.src + plan.head * kern_dtype_size(job->dtype));
		split(entry.dst, job->dst);
		split(entry.cmp_bits, job->cmp_value.u64);
		if (kern_dtype_size(job->dtype) == 4)
			entry.cmp_bits[1] = 0;
		entry.n = (uint32_t)job->n;
		entry.head = (uint32_t)plan.head;
		entry.nvec = (uint32_t)plan.nvec;
		entry.cmp = job->cmp;
		struct small_layout l = small_job_layout(rec->gpu, job);
		uint64_t *at = &fill[l.pipeline];
		if (l.parts == 1) {
			memcpy(table + *at, &entry, sizeof(entry));
			*at += sizeof(entry);
			continue;
		}
		struct spread_job spread = { .job = entry, .parts = l.parts };
		split(spread.counter, tails);
		split(spread.partials, tails + ARRIVAL_WORD_BYTES);
		tails += l.tail_bytes;
		for (uint32_t k = 0; k < l.parts; k++) {
			spread.part = k;
			memcpy(table + *at, &spread, sizeof(spread));
			*at += sizeof(spread);
		}
	}
	for (uint32_t p = 0; p < PIPE_TOTAL; p++) {
		if (!entries[p])
			continue;
		struct reduce_params params = { 0 };
		split(params.src, buffer->address + first[p]);
		params.n = entries[p];
		params.pass_index = 2;
		uint32_t max_x = rec->gpu->info.scan_workgroups;
		uint32_t x = entries[p] < max_x ? entries[p] : max_x;
		dispatch_2d(rec, p, &params, sizeof(params), x, (entries[p] + x - 1) / x);
	}
}

int kern_record(struct gpu *gpu, struct gpu_cmd *cmd, const struct kern_job *jobs, size_t count)
{
	struct recorder rec = { .gpu = gpu, .cb = gpu_cmd_handle(cmd), .bound = VK_NULL_HANDLE };
	size_t small = 0, counters = 0;
	uint64_t flagged = 0, small_entry_bytes = 0, small_tails = 0;
	unsigned phases = 0; /* the most phases of any job */
	for (size_t i = 0; i < count; i++) {
		unsigned job_phases = kern_job_phases(gpu, &jobs[i]);
		if (job_phases > phases)
			phases = job_phases;
		if (is_small(&jobs[i])) {
			small++;
			struct small_layout l = small_job_layout(gpu, &jobs[i]);
			small_entry_bytes += l.entry_bytes;
			small_tails += l.tail_bytes;
		}
		counters += one_dispatch(gpu, &jobs[i]) && !no_last_workgroup(gpu, &jobs[i]);
		flagged += flagged_bytes(gpu, &jobs[i]);
	}
	if (small || counters) {
		/* The table: the small jobs' entries, then one zeroed arrival word per
		 * one-dispatch reduction, then the zeroed flagged partials of those that have
		 * them, then the small jobs' zeroed tails. */
		uint64_t table_bytes = align16(small_entry_bytes);
		uint64_t counter_bytes = align16(counters * ARRIVAL_WORD_BYTES);
		struct gpu_buffer *buffer = NULL;
		int rc = gpu_cmd_table(gpu, cmd, table_bytes + counter_bytes + flagged + small_tails, &buffer);
		if (rc < 0)
			return rc;
		memset((char *)buffer->map + table_bytes, 0, counter_bytes + flagged + small_tails);
		rec.counters = buffer->address + table_bytes;
		rec.flagged = rec.counters + counter_bytes;
		if (small)
			record_small_jobs(&rec, buffer, jobs, count, rec.flagged + flagged);
	}
	/* Phase by phase across all jobs: one barrier per phase, whatever the batch size. The
	 * small jobs' dispatches stand in phase 0 and need no barrier of their own. A scan in
	 * several buffers has two phases per part. */
	for (unsigned phase = 0; phase < phases; phase++) {
		bool any = phase == 0 && small;
		for (size_t i = 0; i < count; i++) {
			if (phase >= kern_job_phases(gpu, &jobs[i]))
				continue;
			if (!any && phase > 0)
				gpu_cmd_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
						VK_ACCESS_SHADER_WRITE_BIT,
						VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
						VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
			any = true;
			if (jobs[i].kind == KERN_REDUCE)
				record_reduce_phase(&rec, &jobs[i], phase);
			else
				record_scan_phase(&rec, &jobs[i], phase);
		}
		if (!any)
			break;
	}
	return rec.error;
}

int kern_record_copy(struct gpu *gpu, struct gpu_cmd *cmd, uint64_t src, uint64_t dst, uint64_t bytes)
{
	return kern_record_copy_into(gpu, gpu_cmd_handle(cmd), src, dst, bytes);
}

int kern_record_copy_into(struct gpu *gpu, VkCommandBuffer cb, uint64_t src, uint64_t dst, uint64_t bytes)
{
	struct recorder rec = { .gpu = gpu, .cb = cb, .bound = VK_NULL_HANDLE };
	struct {
		uint32_t src[2], dst[2];
		uint32_t vecs;
	} p;
	split(p.src, src);
	split(p.dst, dst);
	p.vecs = (uint32_t)(bytes / 16);
	dispatch(&rec, PIPE_COPY, &p, sizeof(p), gpu->info.copy_workgroups);
	return rec.error;
}

int kern_record_read(struct gpu *gpu, struct gpu_cmd *cmd, uint64_t src, uint64_t bytes, uint64_t scratch,
		     uint32_t groups)
{
	struct recorder rec = { .gpu = gpu, .cb = gpu_cmd_handle(cmd), .bound = VK_NULL_HANDLE };
	struct {
		uint32_t src[2], dst[2];
		uint32_t vecs, magic;
	} p;
	split(p.src, src);
	split(p.dst, scratch);
	p.vecs = (uint32_t)(bytes / 16);
	p.magic = 0x5eed1e55u;
	dispatch(&rec, PIPE_READ, &p, sizeof(p), groups);
	return rec.error;
}
