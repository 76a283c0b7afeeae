/*
 * kern.h: reductions and scans, recorded into a command buffer the caller owns.
 *
 * A job names its input, output and scratch space by device address (gpu_buffer.address +
 * offset), so any number of jobs can share one command buffer. kern_record() records the
 * jobs phase by phase, with one barrier between phases for all of them, so that a batch of
 * k jobs costs the same number of barriers as one job. A job's dispatches depend only on
 * the job itself and the device, never on the other jobs recorded with it: the results are
 * bit-identical alone or batched.
 */
#ifndef VKR_KERN_H
#define VKR_KERN_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu.h"
#include "vkreduce_types.h"

enum kern_kind { KERN_REDUCE, KERN_SCAN };

/* Largest element count of one job: kernels index elements with 32-bit integers. */
#define KERN_MAX_ELEMENTS ((uint64_t)1 << 31)

/* Most buffers one job's array may span (struct kern_part). */
#define KERN_MAX_PARTS 32u

/* The piece of a job's array that lies in one buffer. No buffer is larger than one device
 * allocation (gpu_largest_buffer(): 4,292,870,144 bytes on the H200), so a larger array is
 * held in several, and its job lists them in order. A reduction folds the parts' partials
 * together; a scan runs part after part, each starting from the total of those before it
 * (the single pass: two phases per part; reduce-then-scan: each part's tiles numbered after
 * the previous part's). */
struct kern_part {
	uint64_t n;   /* elements, > 0 */
	uint64_t src; /* device address of the part's input, aligned to the element size */
	uint64_t dst; /* scan: device address of the part's output (aligned); reduce: unused */
};

struct kern_job {
	enum kern_kind kind;
	vkr_op op;           /* scan: sum, prod, min, max */
	vkr_dtype dtype;
	vkr_cmp cmp;         /* count only */
	vkr_value cmp_value; /* count only, in the member of dtype */
	bool exclusive;      /* scan only */
	uint64_t n;          /* elements */
	uint64_t src;        /* device address of n elements, aligned to the element size */
	/* reduce: device address of the result area (8 bytes, or kern_result_bytes()), 8-byte
	 * aligned, which must read zero when the command buffer starts: the atomic tails take
	 * every workgroup's value into it (kern_result_by_atomics; kern_result_decode reads it);
	 * scan: device address of n output elements, aligned to the element size */
	uint64_t dst;
	uint64_t scratch;    /* device address of kern_scratch_bytes() bytes, 16-byte aligned */
	/* scan: src or dst is host memory the device reaches over PCIe (imported shared memory).
	 * Such scans run single-pass (one read, one write over the bus) with whole-tile,
	 * contiguous accesses, where the device has shaderInt64. */
	bool host_memory;
	/* An array in several buffers: parts[0 .. part_count) in order, their n adding up to n;
	 * src and (for a scan) dst are then unused. part_count 0: one part, (n, src, dst).
	 * Borrowed: it must outlive kern_record(). */
	const struct kern_part *parts;
	uint32_t part_count;
};

/* Checks a job against the device: 0, -EINVAL (op not valid for the kind, min/max of an
 * empty array, misaligned address, parts that do not add up or overlap), -ENOTSUP (dtype not
 * supported by the device), -E2BIG (more than KERN_MAX_ELEMENTS, more than KERN_MAX_PARTS
 * parts, or a part of more bytes than info.array_buffer_limit). msg (if not NULL) receives a
 * one-line reason. */
int kern_validate(const struct gpu *gpu, const struct kern_job *job, char *msg, size_t msg_size);

/* Phases kern_record() records for the job, a barrier between each: 0 for a small reduction
 * (its workgroup in the small jobs' dispatch), 1 for a reduction of one buffer in one
 * dispatch, 2 for one in two; for a scan 3 (reduce-then-scan) or two per part (single pass). */
unsigned kern_job_phases(const struct gpu *gpu, const struct kern_job *job);

/* Scratch bytes the job needs (a multiple of 16; may be 0). */
uint64_t kern_scratch_bytes(const struct gpu *gpu, const struct kern_job *job);

/* Reductions of at most this many elements are "small": all small jobs of one op and dtype
 * in a kern_record() call share one dispatch, a workgroup each, described by a job table the
 * recorder writes into host-visible memory of the command buffer's own; a job of more than
 * KERN_SMALL_SPREAD_BYTES has a workgroup per 1024 vectors (at most 8). A small job runs the
 * same way alone, so its bits never depend on its batch. */
#define KERN_SMALL_MAX_ELEMENTS 16384
#define KERN_SMALL_SPREAD_BYTES 65536

/* Whether this device spreads small jobs of more than KERN_SMALL_SPREAD_BYTES over workgroups
 * (their builds have the reductions' tree by subgroup shuffles only). */
bool kern_small_jobs_spread(const struct gpu_info *info);

/* Shared memory of the single-pass scan (a 16 KiB tile stage in the pipelines for host
 * memory, the tile scan's subgroup totals or Blelloch tree, and the look-back's window),
 * rounded up; devices with less run every scan as reduce-then-scan. */
#define KERN_SINGLE_PASS_SHARED_BYTES 24576u

/* Records all jobs (already validated) into cmd: every phase of every job, separated by
 * compute->compute barriers. The caller makes inputs visible before (host writes are, by
 * submission; transfers need a barrier) and gpu_cmd_submit makes outputs visible to the
 * host. Returns 0; -ENOMEM (the small jobs' table could not be allocated) with nothing
 * recorded; or the -errno of a pipeline that could not be built on first use
 * (gpu_config.compile_on_first_use), after which the caller abandons cmd. At most once per
 * command buffer: the small jobs' table is the buffer's own. */
int kern_record(struct gpu *gpu, struct gpu_cmd *cmd, const struct kern_job *jobs, size_t count);

/* Records a copy of bytes (a multiple of 16, < 2^36) from src to dst (16-byte aligned
 * device addresses) by the shader cores, with the reduction's workgroup count. 0, or as
 * kern_record() when its pipeline cannot be built. */
int kern_record_copy(struct gpu *gpu, struct gpu_cmd *cmd, uint64_t src, uint64_t dst, uint64_t bytes);
/* As kern_record_copy(), into a command buffer of the caller's own (of the compute queue's
 * family): the benchmark's pipelines over several queues. */
int kern_record_copy_into(struct gpu *gpu, VkCommandBuffer cb, uint64_t src, uint64_t dst, uint64_t bytes);

/* Records a read of bytes (a multiple of 16, < 2^36) at src by `groups` workgroups of 256
 * invocations, which write nothing but may write one 16-byte vector at scratch: the
 * benchmark's read bandwidth. 0, or as kern_record_copy(). */
int kern_record_read(struct gpu *gpu, struct gpu_cmd *cmd, uint64_t src, uint64_t bytes, uint64_t scratch,
		     uint32_t groups);

/* A reduction's result area (kern_result.c). Decodes a completed reduction's result area:
 * the value in the member of the job's dtype, or u64 for count. The area of an atomic min
 * or max holds its value in a form of the atomics' own, and partials folded by the host are
 * folded in the device's subgroup tree, so decoding needs the device the job ran on. */
vkr_value kern_result_decode(const struct gpu *gpu, const struct kern_job *job, const void *slot);

/* Whether the job's workgroups take their values into its result area by atomics (an atomic
 * tail: kern_atomic_sums32(), kern_atomic_sums(), kern_atomic_extremes(),
 * kern_float_limb_sums(), kern_product_exponents()), a few atomics per workgroup: keep such an area in device-local
 * memory (upload memory on a device with resizable BAR), as atomics on host RAM cross the
 * bus one by one. */
bool kern_result_by_atomics(const struct gpu *gpu, const struct kern_job *job);

/* Whether the job's workgroups each store their partial into its result area, for the host
 * to fold (kern_host_fold()): plain stores, one per workgroup, so the area is best in host
 * RAM (readback memory), which the CPU then reads from its cache. */
bool kern_result_by_host_fold(const struct gpu *gpu, const struct kern_job *job);

/* Bytes of a reduction's result area at kern_job.dst (zeroed by the caller, 8-byte aligned):
 * 8; 24 for a product by exponents (kern_product_exponents); for a float sum by limbs
 * (kern_float_limb_sums) its flags, the limbs it reached and the limbs: 88 bytes for f32,
 * 544 for f64; for partials folded by the host, one accumulator (4 or 8 bytes) per
 * workgroup of pass 0, up to the device's reduce_workgroups. Known before the job's src is
 * (it is the most any alignment of the array needs), and at most kern_result_max_bytes(). */
uint64_t kern_result_bytes(const struct gpu *gpu, const struct kern_job *job);
uint64_t kern_result_max_bytes(const struct gpu *gpu);

/* Number of SPIR-V pipelines the engine builds and their creation (used by gpu.c). */
struct kern_pipeline_source {
	const char *name;
	const uint32_t *code;
	size_t size; /* bytes */
	/* The same kernel with the DenormPreserve execution mode, for float dtypes (else NULL),
	 * and the float width it needs the device to preserve subnormals for. */
	const uint32_t *code_denorm_preserve;
	size_t size_denorm_preserve;
	unsigned denorm_bits;
	/* The builds without subgroup operations, plain and DenormPreserve (NULL for the kernels
	 * without dtype): for scans, the Blelloch tile scan in shared memory rather than subgroup
	 * shuffles (devices without them, and VKR_SCAN_TILE=blelloch); for reductions, the
	 * workgroup tree in shared memory (devices without them, and VKR_REDUCE_TREE=shared). */
	const uint32_t *code_blelloch;
	size_t size_blelloch;
	const uint32_t *code_blelloch_denorm_preserve;
	size_t size_blelloch_denorm_preserve;
	/* The single-pass scan of device memory with its chunk rows a specialization constant
	 * (the scan_chained_rows build; plain and DenormPreserve), which gpu.c picks where
	 * kern_scan_chunk_rows() is not KERN_FIXED_CHUNK_ROWS, the rows the plain build has
	 * compiled in, or kern_scan_park_rows() is not 0. NULL for every other pipeline. */
	const uint32_t *code_specialized_rows;
	size_t size_specialized_rows;
	const uint32_t *code_specialized_rows_denorm_preserve;
	size_t size_specialized_rows_denorm_preserve;
	/* Shared memory the kernel needs beyond Vulkan's guaranteed 16 KiB (0 if it fits). */
	uint32_t shared_bytes;
	uint32_t spec[3]; /* specialization constants 0 (op), 1 (exclusive; for reductions gpu.c sets
			   * FLAGGED_PARTIALS), 2 (staged; for reductions ONE_DISPATCH) */
	/* The single-pass scan of device memory: chunked tiles in the subgroup build (gpu.c picks
	 * that build where info.scan_chunked). Built only where kern_device_scan_single_pass()
	 * says; otherwise gpu.c leaves its pipeline VK_NULL_HANDLE and kern.c runs
	 * reduce-then-scan there. */
	bool device_single_pass;
	bool reduction; /* reduce.comp (a reduction or count-if): gpu.c picks its build by info.reduce_subgroup_tree */
	bool one_dispatch; /* a reduction's pipeline for pass 3 only (built where info.reduce_one_dispatch) */
	bool spread_jobs; /* small jobs spread over workgroups (reduce.comp's SPREAD_JOBS builds) */
	/* pass 3 by atomics, without partials (reduce.comp's ATOMIC_SUM32 and
	 * ATOMIC_VALUE; built where kern_atomic_tail_used()) */
	bool atomic_tail;
	/* pass 3 storing partials for the host to fold (reduce.comp's HOST_FOLD; built where
	 * kern_host_fold()) */
	bool host_fold;
	bool counts; /* count-if (reduce.comp's KERNEL_COUNT): op is unused */
	/* a pass of reduce-then-scan (scan.comp: the tiles' totals, their scan, the apply) */
	bool reduce_then_scan;
	unsigned accumulator_bytes; /* reductions: 4 for count-if and 32-bit dtypes, else 8 */
	vkr_dtype dtype;
	vkr_op op;
	bool needs_float64;
	bool needs_int64;
};
size_t kern_pipeline_count(void);
const struct kern_pipeline_source *kern_pipeline_source(size_t index);

/* Whether a scan of device memory of this op and dtype runs single-pass: VKR_SCAN=single-pass,
 * or by default where the device has chunked tiles and they measured faster than
 * reduce-then-scan on the H200 (docs/BENCHMARKS.md, sessions 6 to 9). gpu.c builds those pipelines
 * only; kern.c runs them where they were built. */
bool kern_device_scan_single_pass(const struct gpu_info *info, vkr_dtype dtype, vkr_op op);

/* Rows of 16-byte vectors per invocation in the chunked tiles of the single-pass scan of
 * device memory (scan_chained.comp's CHUNK_ROWS: compiled in at KERN_FIXED_CHUNK_ROWS, from
 * shaders/meson.build, else gpu.c passes it to the scan_chained_rows build; the tile is
 * WG_SIZE x rows vectors): per op, dtype and exclusiveness as measured on the H200, or
 * info.scan_chunk_rows_override. */
#define KERN_MAX_CHUNK_ROWS 16u
uint32_t kern_scan_chunk_rows(const struct gpu_info *info, vkr_dtype dtype, vkr_op op, bool exclusive);

/* Rows of 16-byte vectors per invocation parked in shared memory in those tiles
 * (scan_chained.comp's PARK_ROWS, a part of the tile before the CHUNK_ROWS in registers; the
 * tile is WG_SIZE x (park + chunk rows) vectors): at most kern_scan_chunk_rows() and what
 * the device's shared memory holds beside KERN_CHUNKED_SHARED_BYTES; per op, dtype and
 * exclusiveness as measured on the H200, or info.scan_park_rows_override. */
#define KERN_CHUNKED_SHARED_BYTES 16384u
uint32_t kern_scan_park_rows(const struct gpu_info *info, vkr_dtype dtype, vkr_op op, bool exclusive);

/* Whether one-dispatch reductions with accumulators of this size keep flagged partials in
 * the command buffer's table (reduce.comp's FLAGGED_PARTIALS, which gpu.c sets per pipeline
 * from this): where info.reduce_flagged_partials, for 4-byte accumulators (32-bit dtypes and
 * every count-if); 8-byte ones keep fenced partials in the scratch (docs/BENCHMARKS.md,
 * session 15) unless info.reduce_flagged_wide (VKR_REDUCE=flagged). */
bool kern_flagged_partials(const struct gpu_info *info, unsigned accumulator_bytes);

/* Whether one-dispatch reductions of this op and dtype run by 32-bit atomic sums
 * (reduce.comp's ATOMIC_SUM32): count-if of every dtype and sums of i32 and u32, where
 * info.reduce_atomic_tails. Each workgroup adds its sum to the result slot by one atomic;
 * no partials. */
bool kern_atomic_sums32(const struct gpu_info *info, vkr_dtype dtype, vkr_op op);

/* Whether one-dispatch sums of this float dtype run by limbs (reduce.comp's LIMB_SUM): where
 * info.reduce_float_limbs (VKR_REDUCE_FLOAT_SUM=limbs) and the atomic tails run, for f32 and
 * f64 where the device does not preserve subnormals. Each workgroup adds its partial exactly
 * into fixed-point limbs of the result area by a few atomics; the host rounds their sum once
 * (kern_result_decode). The exact sum of the partials rounded once, where the partials'
 * tails fold them in order with a rounding at each step: the last bits may differ. */
bool kern_float_limb_sums(const struct gpu_info *info, vkr_dtype dtype, vkr_op op);

/* Whether one-dispatch products of this integer dtype run by exponents (reduce.comp's
 * ATOMIC_VALUE with ATOMIC_PROD): where info.reduce_product_exponents
 * (VKR_REDUCE_INT_PROD=exponents) and the atomic tails run. Each workgroup takes its partial
 * apart into 2^t * (+-1) * 5^e and adds t and e and XORs the sign into the result area by
 * posted atomics; the host multiplies them out again (kern_result_decode). The same bits as
 * the ordered fold: products modulo 2^k do not depend on the order. */
bool kern_product_exponents(const struct gpu_info *info, vkr_dtype dtype, vkr_op op);

/* Whether one-dispatch sums and products of this dtype and op without an atomic tail (float
 * sums but by limbs, float products, integer products but by exponents) leave their
 * partials to the host (reduce.comp's HOST_FOLD): where info.reduce_host_fold
 * (VKR_REDUCE_FOLD=host, the default) and the atomic tails run, and readback memory is
 * cached (info.readback_cached). Each workgroup stores its
 * partial into the result area and ends; kern_result_decode folds them as the GPU's last
 * workgroup would. The same bits as the partials' tails, but where the device flushes a subnormal. */
bool kern_host_fold(const struct gpu_info *info, vkr_dtype dtype, vkr_op op);

/* Whether one-dispatch sums of this dtype run by atomics (reduce.comp's ATOMIC_VALUE with
 * ATOMIC_SUM): i64 and u64, where info.reduce_atomic_tails. Each workgroup adds its sum to the
 * result slot by one atomic; no partials. Wrapping sums of integers
 * give the same bits in any order. */
bool kern_atomic_sums(const struct gpu_info *info, vkr_dtype dtype, vkr_op op);

/* Whether one-dispatch min and max of this dtype run by atomics (reduce.comp's
 * ATOMIC_VALUE): each workgroup takes its value into the result slot by one atomic max;
 * no partials. Where info.reduce_atomic_tails, for integers, and for
 * floats where the device compares them by keys (no DenormPreserve at that width: the keyed
 * build is the only one, and the two-pass path must give the same bits). */
bool kern_atomic_extremes(const struct gpu_info *info, vkr_dtype dtype, vkr_op op);

/* Whether kern.c ever records the atomic-tail pipeline src on this device (gpu.c builds only
 * those): by kern_atomic_sums32(), kern_atomic_sums(), kern_atomic_extremes(),
 * kern_float_limb_sums() or kern_product_exponents() for its op and dtype. */
bool kern_atomic_tail_used(const struct gpu_info *info, const struct kern_pipeline_source *src);

/* Whether kern.c never records src on this device because another pipeline that gpu.c builds
 * does its work (gpu.c then builds src neither): a one-dispatch reduction's generic pipeline
 * where its op and dtype have an atomic tail or partials folded by the host, or where every
 * scan writes host memory (gpu_config.host_memory_scans_only, the daemon), a
 * reduce-then-scan pass whose op and dtype run the staged single pass. */
bool kern_pipeline_superseded(const struct gpu *gpu, const struct kern_pipeline_source *src);

#endif /* VKR_KERN_H */
