/*
 * vkreduce-bench: GPU time of every reduction and scan, op x dtype x size, from timestamp
 * queries, beside the device's own copy bandwidth measured in the same run.
 *
 *   vkreduce-bench [--all] [--ops sum,min,...] [--dtypes f32,...] [--min-log2 K]
 *                  [--max-log2 K] [--reps N] [--csv FILE] [--scan-only|--reduce-only]
 *                  [--pcie] [--pcie-ceilings] [--exclusive] [--times]
 *
 * Each figure is the median of --reps runs of one job alone in its command buffer (the
 * time between the command buffer's first and last timestamp). Bandwidth counts the bytes
 * the operation must move at least: n * size for a reduction, 2 * n * size for a scan
 * (read + write), 2 * bytes for a copy. "of copy" compares a row with the copy kernel over
 * one whole chunk (launch and drain amortized), "same-size" with the copy kernel moving as
 * many bytes as the row, launch and drain included, and "of read" a reduction with the read
 * kernel reading its array (the device's read bandwidth at that size). One size of each op and dtype (2^24, or the largest
 * below it) is checked against the CPU reference, so a fast wrong kernel cannot report.
 * Arrays larger than the device allocates at once are held in several buffers, as the daemon
 * holds them, and their jobs list those buffers as parts (struct kern_part).
 *
 * The --pcie measurements are in pcie.c; the timing they share with the series (medians of
 * timestamped runs, the warm-up, the copy references) in bench_timing.c.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu.h"
#include "kern.h"
#include "kern_gen.h"
#include "kern_ref.h"
#include "bench_timing.h"
#include "parallel_ref.h"
#include "pcie.h"
#include "proto_names.h"

struct options {
	bool ops[VKR_OP_COUNT_];
	bool dtypes[VKR_DTYPE_COUNT_];
	int min_log2, max_log2;
	int reps;
	bool reduce, scan;
	bool pcie;
	bool pcie_ceilings_only; /* --pcie-ceilings: the ceilings' rows alone */
	bool times;
	bool exclusive; /* scans: exclusive rather than inclusive */
	const char *csv;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vkreduce-bench [options]\n"
		"Times every reduction and scan on the Vulkan device (VKR_DEVICE picks one) with\n"
		"timestamp queries, beside the device's copy bandwidth measured in the same run:\n"
		"\"of copy\" against the copy kernel over one whole buffer, \"same-size\" against the\n"
		"copy kernel moving as many bytes as the row (launch and drain included), \"of read\"\n"
		"(reductions) against a kernel that only reads the row's array, the best of one and two\n"
		"waves of workgroups (the device's read bandwidth at that size).\n\n"
		"  --all               every op and dtype (the default)\n"
		"  --ops LIST          comma-separated: sum,prod,min,max,count\n"
		"  --dtypes LIST       comma-separated: f32,f64,i32,u32,i64,u64\n"
		"  --min-log2 K        smallest size 2^K elements (default 10)\n"
		"  --max-log2 K        largest size 2^K elements (default 28 on GPUs, 22 on CPUs)\n"
		"  --reps N            runs per figure, median reported (default 20)\n"
		"  --reduce-only, --scan-only  (both: no kernel series, e.g. with --pcie)\n"
		"  --exclusive         time exclusive scans (kind scan_excl) instead of inclusive\n"
		"  --pcie              also time host RAM <-> device copies (2^max-log2 x 4 bytes, at\n"
		"                      most one buffer) by the copy engine and by the copy kernel: each\n"
		"                      direction, then both at once (the ceilings of requests on shared\n"
		"                      memory); the scan of host memory in place, as the daemon runs it\n"
		"                      on shared memory (kernel time, in Vulkan's host memory and in a\n"
		"                      memfd's pages imported as a client's are); a scan staged through\n"
		"                      device memory in chunks (the copy kernel standing in for the\n"
		"                      scan), on the compute queue and with its copies on transfer-only\n"
		"                      queues of their own (on the compute queue where the device has\n"
		"                      none); and copies on queues of their own, alone and an up/down\n"
		"                      pair submitted together\n"
		"  --pcie-ceilings     as --pcie, but only the copies on one queue (each direction,\n"
		"                      both at once as one transfer and as two) and the scans of host\n"
		"                      memory in place (30 s at 1 GiB on an H100, building included), for\n"
		"                      sweeps of the copy kernel's workgroups (VKR_REDUCE_WORKGROUPS);\n"
		"                      given with --pcie, it wins\n"
		"  --csv FILE          also write the table as CSV\n"
		"  --times             end each row with the local time its series finished, in\n"
		"                      nvidia-smi's format (to line the rows up with a log of clocks)\n"
		"  -h, --help\n");
}

static bool parse_list(const char *arg, bool *set, size_t count,
		       bool (*parse)(const char *, size_t, unsigned *))
{
	memset(set, 0, count * sizeof(*set));
	while (*arg) {
		size_t len = strcspn(arg, ",");
		unsigned v;
		if (!parse(arg, len, &v)) {
			fprintf(stderr, "vkreduce-bench: unknown name \"%.*s\"\n", (int)len, arg);
			return false;
		}
		set[v] = true;
		arg += len + (arg[len] == ',');
	}
	return true;
}

static bool parse_op(const char *s, size_t len, unsigned *out)
{
	vkr_op op;
	bool ok = proto_op_parse(s, len, &op);
	*out = op;
	return ok;
}

static bool parse_dtype(const char *s, size_t len, unsigned *out)
{
	vkr_dtype d;
	bool ok = proto_dtype_parse(s, len, &d);
	*out = d;
	return ok;
}

struct read_ctx {
	struct gpu_buffer *src, *scratch;
	uint64_t bytes;
	uint32_t groups;
};

static int record_read_kernel(struct gpu *gpu, struct gpu_cmd *cmd, void *ctx)
{
	struct read_ctx *c = ctx;
	int rc = kern_record_read(gpu, cmd, c->src->address, c->bytes, c->scratch->address, c->groups);
	if (rc < 0)
		fprintf(stderr, "vkreduce-bench: could not record the read kernel: %s\n", strerror(-rc));
	return rc;
}

/* One job of a series; a reduction's result area (slot_map) is zeroed before each run, as
 * kern_job.dst must read zero when the work starts. */
struct job_ctx {
	const struct kern_job *job;
	void *slot_map;
};

static int record_job(struct gpu *gpu, struct gpu_cmd *cmd, void *ctx)
{
	const struct job_ctx *c = ctx;
	if (c->job->kind == KERN_REDUCE)
		memset(c->slot_map, 0, kern_result_bytes(gpu, c->job));
	int rc = kern_record(gpu, cmd, c->job, 1);
	if (rc < 0)
		fprintf(stderr, "vkreduce-bench: could not record a job: %s\n", strerror(-rc));
	return rc;
}

/* Most buffers one series' array is held in. Their count is 1 wherever the array fits one
 * buffer, and 4 for 2^30 f64 on the H200 (2 GiB chunks); KERN_MAX_PARTS bounds it. */
#define BENCH_MAX_CHUNKS 16u
_Static_assert(BENCH_MAX_CHUNKS <= KERN_MAX_PARTS, "a job lists each chunk as one part");

/* The series' buffers, sized for the largest dtype and size asked for and allocated once.
 * Freeing and allocating gigabytes between dtypes was followed, on the H200, by series
 * running at half speed or less for their first tens of milliseconds (session 4, run 8:
 * the first series of four dtypes out of six, and never a later one); the cause is not
 * known, so the benchmark no longer churns its memory. Input and output are chunks of
 * chunk_bytes each: chunk k holds bytes [k * chunk_bytes, (k + 1) * chunk_bytes) of the
 * array, whatever its dtype. */
struct series_buffers {
	struct gpu_buffer in[BENCH_MAX_CHUNKS], out[BENCH_MAX_CHUNKS];
	unsigned chunks;
	uint64_t chunk_bytes;
	struct gpu_buffer check, scratch, staging; /* staging: one chunk */
	/* The reductions' result areas, mapped, to be zeroed before each run, where the daemon
	 * keeps them: slot device-local where upload memory is, as the atomic tails want it
	 * (kern_result_by_atomics), folded in host RAM (readback memory), as the partials the
	 * host folds want it (kern_result_by_host_fold) and every other result slot has it. */
	struct gpu_buffer slot, folded;
	void *host;
};

/* The job of a series over its buffers. An array larger than one chunk lists its chunks as
 * parts, written to parts (BENCH_MAX_CHUNKS entries, which must outlive the recording); one
 * that fits a chunk is a plain job (part_count 0), as it was before arrays spanned buffers. A
 * reduction's result area is sb->folded where the host folds its partials, else sb->slot
 * (series_result_map). */
static struct kern_job series_job(const struct gpu *gpu, const struct series_buffers *sb, enum kern_kind kind,
				  vkr_op op, vkr_dtype dtype, uint64_t n, bool exclusive, struct kern_part *parts)
{
	struct kern_job job = {
		.kind = kind, .op = op, .dtype = dtype, .cmp = VKR_CMP_GT, .n = n, /* count: x > 0 */
		.exclusive = kind == KERN_SCAN && exclusive,
		.src = sb->in[0].address, .dst = kind == KERN_REDUCE ? sb->slot.address : sb->out[0].address,
		.scratch = sb->scratch.address,
	};
	if (kind == KERN_REDUCE && kern_result_by_host_fold(gpu, &job))
		job.dst = sb->folded.address;
	uint64_t chunk_n = sb->chunk_bytes / proto_dtype_size(dtype);
	if (n <= chunk_n)
		return job;
	for (uint64_t first = 0; first < n; first += chunk_n) {
		uint32_t k = job.part_count++;
		parts[k] = (struct kern_part){
			.n = n - first < chunk_n ? n - first : chunk_n,
			.src = sb->in[k].address,
			.dst = sb->out[k].address,
		};
	}
	job.parts = parts;
	return job;
}

/* Scratch for the jobs of every op, kind and size of the dtypes asked for, built as the series
 * build them (parts included: a scan in several buffers adds a carry per part to the single
 * pass's scratch, and a reduction's partials add up over its parts). */
static uint64_t series_scratch_bytes(const struct gpu *gpu, const struct options *o,
				     const struct series_buffers *sb)
{
	uint64_t scratch = 0;
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++) {
		if (!o->dtypes[d] || !gpu_supports_dtype(gpu, d))
			continue;
		for (unsigned op = 0; op < VKR_OP_COUNT_; op++) {
			for (int kind = 0; kind < 2; kind++) {
				if (kind == 1 && op == VKR_OP_COUNT)
					continue;
				for (int k = o->min_log2; k <= o->max_log2; k++) {
					struct kern_part parts[BENCH_MAX_CHUNKS];
					struct kern_job job = series_job(gpu, sb, kind ? KERN_SCAN : KERN_REDUCE, op, d,
									 (uint64_t)1 << k, o->exclusive, parts);
					uint64_t bytes = kern_scratch_bytes(gpu, &job);
					if (bytes > scratch)
						scratch = bytes;
				}
			}
		}
	}
	return scratch;
}

static void series_buffers_free(struct gpu *gpu, struct series_buffers *sb)
{
	for (unsigned k = 0; k < BENCH_MAX_CHUNKS; k++) {
		gpu_buffer_destroy(gpu, &sb->in[k]);
		gpu_buffer_destroy(gpu, &sb->out[k]);
	}
	sb->chunks = 0;
	gpu_buffer_destroy(gpu, &sb->check);
	gpu_buffer_destroy(gpu, &sb->scratch);
	gpu_buffer_destroy(gpu, &sb->staging);
	gpu_buffer_destroy(gpu, &sb->slot);
	gpu_buffer_destroy(gpu, &sb->folded);
	free(sb->host);
	sb->host = NULL;
}

/* Copies bytes from the start of src into dst at dst_offset and waits: by the copy kernel,
 * which moves whole 16-byte vectors only, or else by the copy engine. */
static int copy_once(struct gpu *gpu, struct gpu_buffer *src, struct gpu_buffer *dst,
		     uint64_t dst_offset, uint64_t bytes)
{
	struct copy_ctx c = { .src = src, .dst = dst, .bytes = bytes, .dst_offset = dst_offset };
	uint64_t ns;
	bool kernel = bytes % 16 == 0 && dst_offset % 16 == 0;
	return time_once(gpu, kernel ? record_copy_kernel : record_copy, &c, &ns);
}

/* The size of each series checked against the CPU reference: the largest up to 2^24 (the
 * reference is slow), or the smallest where every size is larger, so that no series goes
 * unchecked (a series of 2^28 alone was not checked before session 26). */
static int checked_log2(const struct options *o)
{
	if (o->min_log2 > 24)
		return o->min_log2;
	return o->max_log2 < 24 ? o->max_log2 : 24;
}

static int series_buffers_alloc(struct gpu *gpu, const struct options *o, struct series_buffers *sb)
{
	uint64_t max_n = (uint64_t)1 << o->max_log2, esize = 0;
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++)
		if (o->dtypes[d] && gpu_supports_dtype(gpu, d) && proto_dtype_size(d) > esize)
			esize = proto_dtype_size(d);
	if (esize == 0)
		return 0;
	uint64_t check_n = (uint64_t)1 << checked_log2(o);
	memset(sb, 0, sizeof(*sb));
	sb->chunk_bytes = chunk_bytes_for(gpu, max_n * esize);
	sb->chunks = (unsigned)((max_n * esize + sb->chunk_bytes - 1) / sb->chunk_bytes);
	if (sb->chunks > BENCH_MAX_CHUNKS)
		return -E2BIG; /* main() skips such sizes */
	sb->host = malloc(max_n * esize);
	int rc = sb->host ? 0 : -ENOMEM;
	for (unsigned k = 0; k < sb->chunks && rc == 0; k++) {
		rc = gpu_buffer_create(gpu, sb->chunk_bytes, GPU_MEMORY_DEVICE, &sb->in[k]);
		if (rc == 0)
			rc = gpu_buffer_create(gpu, sb->chunk_bytes, GPU_MEMORY_DEVICE, &sb->out[k]);
	}
	if (rc == 0)
		rc = gpu_buffer_create(gpu, check_n * esize, GPU_MEMORY_READBACK, &sb->check);
	if (rc == 0)
		rc = gpu_buffer_create(gpu, kern_result_max_bytes(gpu), GPU_MEMORY_UPLOAD, &sb->slot);
	if (rc == 0)
		rc = gpu_buffer_create(gpu, kern_result_max_bytes(gpu), GPU_MEMORY_READBACK, &sb->folded);
	/* The jobs' parts name the chunks' addresses, so the scratch is sized once they exist. */
	if (rc == 0)
		rc = gpu_buffer_create(gpu, series_scratch_bytes(gpu, o, sb), GPU_MEMORY_DEVICE, &sb->scratch);
	if (rc == 0)
		rc = gpu_buffer_create(gpu, sb->chunk_bytes, GPU_MEMORY_UPLOAD, &sb->staging);
	/* Every page of the series' input and output written once before any figure is taken: a
	 * copy each way per chunk (a warm-up over every chunk would add 1.5 s per chunk; the
	 * series warm up on chunk 0). */
	for (unsigned k = 0; k < sb->chunks && rc == 0; k++) {
		rc = copy_once(gpu, &sb->out[k], &sb->in[k], 0, sb->chunk_bytes);
		if (rc == 0)
			rc = copy_once(gpu, &sb->in[k], &sb->out[k], 0, sb->chunk_bytes);
	}
	if (rc < 0)
		series_buffers_free(gpu, sb);
	return rc;
}

/* Fills the series' input with generated data through the staging buffer, a chunk at a time
 * (each copy is waited for before the staging buffer is written again), by the copy kernel:
 * the series that ran 3 to 4 times slower (session 5) all came right after an upload by the
 * copy engine (vkCmdCopyBuffer), even after a full-speed warm-up over the same buffers;
 * whether the copy engine's writes are the cause is not yet measured. */
static int upload(struct gpu *gpu, struct series_buffers *sb, uint64_t bytes)
{
	int rc = 0;
	for (unsigned k = 0; (uint64_t)k * sb->chunk_bytes < bytes && rc == 0; k++) {
		uint64_t first = (uint64_t)k * sb->chunk_bytes;
		uint64_t len = bytes - first < sb->chunk_bytes ? bytes - first : sb->chunk_bytes;
		memcpy(sb->staging.map, (const char *)sb->host + first, len);
		rc = copy_once(gpu, &sb->staging, &sb->in[k], 0, len);
	}
	return rc;
}

static FILE *csv;

static bool print_times;

/* copy_gbs: the copy kernel's rate on one whole chunk; same_gbs: its rate moving as many bytes
 * as this row; read_gbs: the read kernel's over the row's array (0 where not measured). */
/* What the host spends turning a reduction's result area into its value (kern_result_decode):
 * the first decode after the GPU wrote the area (its reads miss the CPU's caches, or cross
 * the bus where the area is device memory), then the mean of 1000 more. Printed, not in the
 * CSV: it adds to the latency of a request in the daemon, not to the GPU's time. */
static void report_decode(const struct gpu *gpu, const struct kern_job *job, const void *area)
{
	struct timespec t0, t1, t2;
	volatile uint64_t sink = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sink ^= kern_result_decode(gpu, job, area).u64;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (int r = 0; r < 1000; r++)
		sink ^= kern_result_decode(gpu, job, area).u64;
	clock_gettime(CLOCK_MONOTONIC, &t2);
	(void)sink;
	printf("  decoded on the host: %lld ns the first time, then %.0f ns (%s)\n", (long long)elapsed_ns(&t0, &t1),
	       (double)elapsed_ns(&t1, &t2) / 1000.0,
	       kern_result_by_host_fold(gpu, job) ? "partials folded, host RAM"
	       : kern_result_by_atomics(gpu, job) ? "atomics' area, upload memory" : "result slot, host RAM");
}

static void report(const char *kind, const char *op, vkr_dtype dtype, uint64_t n, double us,
		   double bytes, double copy_gbs, double same_gbs, double read_gbs)
{
	double gbs = bytes / (us * 1e3);
	printf("%-9s %-5s %-4s 2^%-3d %12.2f %10.1f %7.2f %9.2f", kind, op, proto_dtype_name(dtype),
	       (int)log2((double)n), us, gbs, copy_gbs > 0 ? gbs / copy_gbs : 0,
	       same_gbs > 0 ? gbs / same_gbs : 0);
	if (read_gbs > 0)
		printf(" %7.2f", gbs / read_gbs);
	else
		printf(" %7s", "-"); /* scans, and arrays past one chunk */
	if (print_times) {
		struct timespec now = { 0 };
		struct tm local;
		char when[32] = "?";
		if (clock_gettime(CLOCK_REALTIME, &now) == 0 && localtime_r(&now.tv_sec, &local))
			strftime(when, sizeof(when), "%Y/%m/%d %H:%M:%S", &local);
		printf("  %s.%03ld", when, now.tv_nsec / 1000000);
	}
	putchar('\n');
	if (csv)
		fprintf(csv, "%s,%s,%s,%llu,%.3f,%.2f,%.4f,%.4f,%.4f\n", kind, op, proto_dtype_name(dtype),
			(unsigned long long)n, us, gbs, copy_gbs > 0 ? gbs / copy_gbs : 0,
			same_gbs > 0 ? gbs / same_gbs : 0, read_gbs > 0 ? gbs / read_gbs : 0);
	fflush(stdout);
}

/* The copy kernel's rate (read + write) when it moves `traffic` bytes in all, from in[0] to
 * out[0]: the device's bandwidth at a row's size, its launch and drain included, where the
 * chunk-sized figure has them amortized. Measured once per size; 0 past one chunk. out[0] is
 * overwritten, so call it before the row's own runs. The copy kernel always runs the device's
 * full workgroup count (2112 on the H200), so at small sizes (below ~2^22 elements) it is
 * slower than a copy could be, and the column there flatters the row. */
static double copy_gbs_moving(struct gpu *gpu, const struct options *o, struct series_buffers *sb,
			      uint64_t traffic)
{
	static struct {
		uint64_t traffic;
		double gbs;
	} known[2 * 31];
	static unsigned known_count;
	uint64_t bytes = traffic / 2 / 16 * 16;
	if (bytes == 0 || bytes > sb->chunk_bytes)
		return 0;
	for (unsigned i = 0; i < known_count; i++)
		if (known[i].traffic == traffic)
			return known[i].gbs;
	struct copy_ctx c = { .src = &sb->in[0], .dst = &sb->out[0], .bytes = bytes };
	double us = 0;
	if (time_median(gpu, o->reps, record_copy_kernel, &c, &us) < 0 || us <= 0)
		return 0;
	double gbs = 2.0 * (double)bytes / (us * 1e3);
	if (known_count < sizeof(known) / sizeof(known[0])) {
		known[known_count].traffic = traffic;
		known[known_count++].gbs = gbs;
	}
	return gbs;
}

/* The read kernel's rate over the first `bytes` of in[0] (at most one chunk): the best of the
 * reductions' grid (one wave at most, fewer for small arrays) and two waves, so that neither
 * choice of the reductions' own grid flatters them. Measured once per size; 0 past one chunk. */
static double read_gbs_over(struct gpu *gpu, const struct options *o, struct series_buffers *sb,
			    uint64_t bytes)
{
	static struct {
		uint64_t bytes;
		double gbs;
	} known[31];
	static unsigned known_count;
	bytes = bytes / 16 * 16;
	if (bytes == 0 || bytes > sb->chunk_bytes)
		return 0;
	for (unsigned i = 0; i < known_count; i++)
		if (known[i].bytes == bytes)
			return known[i].gbs;
	const struct gpu_info *info = gpu_get_info(gpu);
	uint64_t want = (bytes / 16 + 1023) / 1024; /* at least 4 vectors per invocation */
	uint32_t grids[2] = { info->reduce_workgroups, info->copy_workgroups };
	double best = 0;
	for (unsigned g = 0; g < 2; g++) {
		struct read_ctx c = { .src = &sb->in[0], .scratch = &sb->scratch, .bytes = bytes,
				      .groups = want < grids[g] ? (uint32_t)(want ? want : 1) : grids[g] };
		double us = 0;
		if (time_median(gpu, o->reps, record_read_kernel, &c, &us) < 0 || us <= 0)
			return 0;
		double gbs = (double)bytes / (us * 1e3);
		best = gbs > best ? gbs : best;
	}
	if (known_count < sizeof(known) / sizeof(known[0])) {
		known[known_count].bytes = bytes;
		known[known_count++].gbs = best;
	}
	return best;
}

/* Inputs and outputs in device memory, so that the figures are the device's and not the PCIe
 * bus's; results are copied to host memory only for the correctness check. */
static int bench_dtype(struct gpu *gpu, const struct options *o, struct series_buffers *sb,
		       vkr_dtype dtype, double copy_gbs)
{
	uint64_t esize = proto_dtype_size(dtype);
	uint64_t max_n = (uint64_t)1 << o->max_log2;
	struct gpu_buffer *check = &sb->check;
	void *host = sb->host;
	/* The warm-up before each series copies within the first chunk: over every chunk it
	 * would take 1.5 s or more per chunk. */
	uint64_t busy_bytes = max_n * esize < sb->chunk_bytes ? max_n * esize : sb->chunk_bytes;
	uint64_t rng = 12345 + dtype;
	int rc = 0;
	int check_log2 = checked_log2(o);
	int filled = -1;
	for (unsigned op = 0; op < VKR_OP_COUNT_ && rc == 0; op++) {
		if (!o->ops[op])
			continue;
		/* Inputs suited to the op (products stay near 1), generated once per kind. */
		int want = op == VKR_OP_PROD;
		if (filled != want) {
			parallel_fill(dtype, want ? VKR_OP_PROD : VKR_OP_SUM, host, max_n, gen_rand(&rng));
			rc = upload(gpu, sb, max_n * esize);
			filled = want;
		}
		for (int kind = 0; kind < 2 && rc == 0; kind++) {
			if ((kind == 0 && !o->reduce) || (kind == 1 && (!o->scan || op == VKR_OP_COUNT)))
				continue;
			/* Over the series' own buffers: in session 5 the first series after an upload
			 * sometimes ran 3 to 4 times slower than the same kernel later, although the
			 * warm-up over other buffers had reached full speed. */
			rc = keep_busy(gpu, &sb->in[0], &sb->out[0], busy_bytes);
			for (int k = o->min_log2; k <= o->max_log2 && rc == 0; k++) {
				uint64_t n = (uint64_t)1 << k;
				struct kern_part parts[BENCH_MAX_CHUNKS]; /* read by kern_record() */
				struct kern_job job = series_job(gpu, sb, kind ? KERN_SCAN : KERN_REDUCE, op, dtype, n,
								 o->exclusive, parts);
				char msg[256];
				rc = kern_validate(gpu, &job, msg, sizeof(msg));
				if (rc < 0) {
					fprintf(stderr, "vkreduce-bench: %s\n", msg);
					break;
				}
				uint64_t traffic = n * esize * (kind ? 2 : 1);
				const char *kind_name = !kind ? "reduce" : o->exclusive ? "scan_excl" : "scan";
				double same_gbs = copy_gbs_moving(gpu, o, sb, traffic);
				double read_gbs = kind ? 0 : read_gbs_over(gpu, o, sb, traffic);
				double us = 0;
				void *area = job.dst == sb->folded.address ? sb->folded.map : sb->slot.map;
				struct job_ctx ctx = { .job = &job, .slot_map = area };
				rc = time_median(gpu, o->reps, record_job, &ctx, &us);
				if (rc < 0)
					break;
				report(kind_name, proto_op_name(op), dtype, n, us, (double)traffic, copy_gbs,
				       same_gbs, read_gbs);
				if (k != check_log2)
					continue;
				/* The last run's output is still in place: check it. A scan's output is
				 * copied back chunk by chunk (byte k * chunk_bytes of the array is the start
				 * of out[k]); a reduction's result slot is mapped. */
				uint64_t back_bytes = kind ? n * esize : 0;
				for (unsigned c = 0; (uint64_t)c * sb->chunk_bytes < back_bytes && rc == 0; c++) {
					uint64_t first = (uint64_t)c * sb->chunk_bytes;
					struct copy_ctx back = {
						.src = &sb->out[c], .dst = check, .dst_offset = first,
						.bytes = back_bytes - first < sb->chunk_bytes ? back_bytes - first
											    : sb->chunk_bytes,
					};
					uint64_t ns;
					rc = time_once(gpu, record_copy, &back, &ns);
				}
				if (rc < 0)
					break;
				char why[256];
				bool ok = kind ? parallel_scan_check(op, dtype, o->exclusive, host, n, check->map, why,
								sizeof(why))
					       : ref_reduce_check(op, dtype, job.cmp, job.cmp_value, host, n,
								  kern_result_decode(gpu, &job, area), why, sizeof(why));
				if (ok && !kind)
					report_decode(gpu, &job, area);
				if (!ok) {
					fprintf(stderr, "vkreduce-bench: WRONG RESULT %s %s %s n=%llu: %s\n",
						kind_name, proto_op_name(op),
						proto_dtype_name(dtype), (unsigned long long)n, why);
					rc = -EPROTO;
				}
			}
		}
	}
	return rc;
}

static int measure_copy(struct gpu *gpu, const struct options *o, double *gbs)
{
	/* 2^max-log2 f32 elements, or one chunk of the series' buffers where that is more. */
	uint64_t bytes = chunk_bytes_for(gpu, ((uint64_t)1 << o->max_log2) * 4);
	struct gpu_buffer a, b;
	int rc = gpu_buffer_create(gpu, bytes, GPU_MEMORY_DEVICE, &a);
	if (rc < 0)
		return rc;
	rc = gpu_buffer_create(gpu, bytes, GPU_MEMORY_DEVICE, &b);
	if (rc < 0) {
		gpu_buffer_destroy(gpu, &a);
		return rc;
	}
	struct copy_ctx c = { .src = &a, .dst = &b, .bytes = bytes };
	double us = 0, dma_us = 0;
	/* The reference is the copy kernel (shader cores, 16-byte vectors): the ceiling of what
	 * a kernel that reads and writes memory can reach. vkCmdCopyBuffer is shown beside it. */
	rc = time_median(gpu, o->reps, record_copy_kernel, &c, &us);
	if (rc == 0)
		rc = time_median(gpu, o->reps, record_copy, &c, &dma_us);
	if (rc == 0) {
		*gbs = 2.0 * (double)bytes / (us * 1e3);
		printf("device copy kernel (vec4, read + write) of %llu MiB: %.2f us, %.1f GB/s\n",
		       (unsigned long long)(bytes >> 20), us, *gbs);
		printf("vkCmdCopyBuffer of the same: %.2f us, %.1f GB/s\n", dma_us,
		       2.0 * (double)bytes / (dma_us * 1e3));
		if (csv)
			fprintf(csv, "copy,copy,u8,%llu,%.3f,%.2f,1,1\n", (unsigned long long)bytes, us, *gbs);
	}
	gpu_buffer_destroy(gpu, &a);
	gpu_buffer_destroy(gpu, &b);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o = { .min_log2 = 10, .max_log2 = -1, .reps = 20, .reduce = true, .scan = true };
	memset(o.ops, 1, sizeof(o.ops));
	memset(o.dtypes, 1, sizeof(o.dtypes));
	static const struct option long_opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "ops", required_argument, NULL, 'o' },
		{ "dtypes", required_argument, NULL, 'd' },
		{ "min-log2", required_argument, NULL, 'm' },
		{ "max-log2", required_argument, NULL, 'M' },
		{ "reps", required_argument, NULL, 'r' },
		{ "csv", required_argument, NULL, 'c' },
		{ "reduce-only", no_argument, NULL, 'R' },
		{ "scan-only", no_argument, NULL, 'S' },
		{ "exclusive", no_argument, NULL, 'X' },
		{ "pcie", no_argument, NULL, 'P' },
		{ "pcie-ceilings", no_argument, NULL, 'C' },
		{ "times", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'a': break;
		case 'o':
			if (!parse_list(optarg, o.ops, VKR_OP_COUNT_, parse_op))
				return 2;
			break;
		case 'd':
			if (!parse_list(optarg, o.dtypes, VKR_DTYPE_COUNT_, parse_dtype))
				return 2;
			break;
		case 'm': o.min_log2 = atoi(optarg); break;
		case 'M': o.max_log2 = atoi(optarg); break;
		case 'r': o.reps = atoi(optarg); break;
		case 'c': o.csv = optarg; break;
		case 'R': o.scan = false; break;
		case 'S': o.reduce = false; break;
		case 'X': o.exclusive = true; break;
		case 'P': o.pcie = true; break;
		case 'C': o.pcie = o.pcie_ceilings_only = true; break;
		case 'T': o.times = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || o.reps < 1 || o.min_log2 < 0) {
		usage(stderr);
		return 2;
	}
	print_times = o.times;
	struct gpu_config config = { .verbose = true, .copy_queues = o.pcie && !o.pcie_ceilings_only };
	struct gpu *gpu;
	char err[512];
	if (gpu_create(&config, &gpu, err, sizeof(err)) < 0) {
		fprintf(stderr, "vkreduce-bench: %s\n", err);
		return 1;
	}
	const struct gpu_info *info = gpu_get_info(gpu);
	if (o.max_log2 < 0)
		o.max_log2 = strcmp(info->type, "cpu") == 0 ? 22 : 28;
	if (o.max_log2 > 30 || o.min_log2 > o.max_log2) {
		fprintf(stderr, "vkreduce-bench: sizes must satisfy min-log2 <= max-log2 <= 30\n");
		return 2;
	}
	if (o.csv) {
		csv = fopen(o.csv, "w");
		if (!csv) {
			fprintf(stderr, "vkreduce-bench: cannot write %s: %s\n", o.csv, strerror(errno));
			return 1;
		}
		fprintf(csv, "kind,op,dtype,n,us,gbs,of_copy,of_copy_same_bytes,of_read_same_bytes\n");
	}
	printf("device: %s (%s), subgroup %u, reduce workgroups %u, "
	       "reduce tree: %s, reduce partials: %s%s%s%s%s, copy workgroups %u, timestamp period %.3f ns, "
	       "scan: %s, single-pass tiles: %s (taken %s), tile scan: %s, subnormals f32/f64: %s/%s\n",
	       info->name, info->type, info->subgroup_size, info->reduce_workgroups,
	       info->reduce_subgroup_tree ? "subgroup" : "shared",
	       !info->reduce_one_dispatch ? "two passes" : !info->reduce_flagged_partials ? "fenced"
	       : info->reduce_flagged_wide ? "flagged" : "flagged (4-byte accumulators), fenced (8-byte)",
	       !info->reduce_atomic_tails ? ""
	       : "; none for count-if, integer sums, min and max (atomics on the result area)",
	       info->reduce_atomic_tails && info->reduce_float_limbs ? ", nor for float sums (limbs)" : "",
	       info->reduce_atomic_tails && info->reduce_product_exponents ? ", nor for integer products (exponents)"
									    : "",
	       kern_host_fold(info, VKR_DTYPE_F32, VKR_OP_PROD) ? "; the other sums and products' folded by the host"
								   : "",
	       info->copy_workgroups,
	       info->timestamp_period_ns,
	       info->scan_single_pass ? "single-pass" :
	       info->scan_reduce_then_scan || !info->scan_chunked ? "reduce-then-scan" :
	       "per op and dtype (single-pass but f64 min/max)",
	       info->scan_chunked ? "chunked" : "slots",
	       info->scan_tiles_by_workgroup ? "by workgroup id" : "from a counter",
	       info->scan_tile_subgroup ? "subgroup" : "blelloch",
	       info->denorm_preserve32 ? "preserved" : "compared by bits",
	       info->denorm_preserve64 ? "preserved" : "compared by bits");
	if (info->timestamp_period_ns <= 0) {
		fprintf(stderr, "vkreduce-bench: the device's queue has no timestamps\n");
		return 1;
	}
	/* A series' array of 2^max-log2 elements of the widest dtype asked for is held in chunks
	 * of chunk_bytes_for() bytes, and one job spans at most KERN_MAX_ELEMENTS: sizes that
	 * need more than BENCH_MAX_CHUNKS chunks, or more elements, are skipped, not failed on. */
	uint64_t chunk = chunk_bytes_for(gpu, UINT64_MAX);
	uint64_t widest = 4;
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_; d++)
		if (o.dtypes[d] && gpu_supports_dtype(gpu, d) && proto_dtype_size(d) > widest)
			widest = proto_dtype_size(d);
	int fits = o.max_log2;
	while (fits > 0 && ((uint64_t)1 << fits) > KERN_MAX_ELEMENTS)
		fits--;
	if (fits < o.max_log2)
		printf("(sizes above 2^%d skipped: one job spans at most %llu elements)\n", fits,
		       (unsigned long long)KERN_MAX_ELEMENTS);
	int fits_chunks = fits;
	while (fits_chunks > 0 &&
	       (((uint64_t)1 << fits_chunks) * widest + chunk - 1) / chunk > BENCH_MAX_CHUNKS)
		fits_chunks--;
	if (fits_chunks < fits)
		printf("(sizes above 2^%d skipped: 2^%d elements of %llu bytes need more than %u buffers of "
		       "%llu bytes, the most this device holds an array part in)\n", fits_chunks, fits,
		       (unsigned long long)widest, BENCH_MAX_CHUNKS, (unsigned long long)chunk);
	if (fits_chunks < o.min_log2) {
		fprintf(stderr, "vkreduce-bench: no size from 2^%d fits this device's allocations\n",
			o.min_log2);
		return 1;
	}
	o.max_log2 = fits_chunks;
	double copy_gbs = 0;
	uint64_t warm_bytes = strcmp(info->type, "cpu") == 0 ? (16u << 20) : (256u << 20);
	int rc = warm_buffers_create(gpu, warm_bytes);
	if (rc == 0)
		rc = warm_up(gpu);
	if (rc == 0)
		rc = measure_copy(gpu, &o, &copy_gbs);
	if (rc == 0 && o.pcie)
		rc = pcie_measure(gpu, o.reps, o.max_log2, o.pcie_ceilings_only);
	struct series_buffers sb = { 0 };
	bool series = o.reduce || o.scan;
	if (rc == 0 && series)
		rc = series_buffers_alloc(gpu, &o, &sb);
	if (rc == 0 && series)
		printf("%-9s %-5s %-4s %-5s %12s %10s %7s %9s %7s\n", "kind", "op", "type", "n", "gpu us", "GB/s",
		       "of copy", "same-size", "of read");
	for (unsigned d = 0; d < VKR_DTYPE_COUNT_ && rc == 0 && series; d++) {
		if (!o.dtypes[d])
			continue;
		if (!gpu_supports_dtype(gpu, d)) {
			printf("(%s not supported by this device)\n", proto_dtype_name(d));
			continue;
		}
		rc = bench_dtype(gpu, &o, &sb, d, copy_gbs);
	}
	series_buffers_free(gpu, &sb);
	if (rc < 0)
		fprintf(stderr, "vkreduce-bench: failed: %s\n", strerror(-rc));
	if (csv)
		fclose(csv);
	warm_buffers_destroy(gpu);
	gpu_destroy(gpu);
	return rc < 0 ? 1 : 0;
}
