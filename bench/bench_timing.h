/*
 * bench_timing.h: what vkreduce-bench's kernel series (vkreduce_bench.c) and its PCIe
 * measurements (pcie.c) both time with: a command buffer's GPU time from its timestamp
 * queries, the median of several runs, the warm-up that brings the GPU to working clocks
 * first, and the copies the figures are compared with.
 */
#ifndef VKREDUCE_BENCH_BENCH_TIMING_H
#define VKREDUCE_BENCH_BENCH_TIMING_H

#include <stdint.h>
#include <time.h>

#include "gpu.h"

/* Submits what rec() records, waits, returns the command buffer's GPU time. A recording that
 * fails (0 or -errno from rec) is abandoned, not timed. */
typedef int (*record_fn)(struct gpu *gpu, struct gpu_cmd *cmd, void *ctx);

/* A copy for record_copy() and record_copy_kernel(): bytes from the start of src into dst. */
struct copy_ctx {
	struct gpu_buffer *src, *dst;
	uint64_t bytes;
	uint64_t dst_offset; /* where in dst the bytes land (a chunk's place in the check buffer) */
};

/* qsort()'s order of uint64_t: timings are sorted for their median. */
int cmp_u64(const void *a, const void *b);

/* One run of what rec() records, its GPU time in *ns: 0, or -errno (the run is not timed). */
int time_once(struct gpu *gpu, record_fn rec, void *ctx, uint64_t *ns);

/* The median of reps runs in *us, after one untimed run that pays for caches and clocks. */
int time_median(struct gpu *gpu, int reps, record_fn rec, void *ctx, double *us);

/* Records a copy of bytes from src at src_offset to dst at dst_offset by the copy engine
 * (vkCmdCopyBuffer) into any command buffer: the series', the staged pipelines'. */
void record_dma(VkCommandBuffer cb, const struct gpu_buffer *src, uint64_t src_offset,
		const struct gpu_buffer *dst, uint64_t dst_offset, uint64_t bytes);

/* A struct copy_ctx by the copy engine (vkCmdCopyBuffer), the figure shown beside the kernel's. */
int record_copy(struct gpu *gpu, struct gpu_cmd *cmd, void *ctx);

/* A struct copy_ctx by the copy kernel (16-byte vectors): the reference a kernel is compared with. */
int record_copy_kernel(struct gpu *gpu, struct gpu_cmd *cmd, void *ctx);

/* Nanoseconds from one clock_gettime() reading to a later one, for wall-clock timings. */
int64_t elapsed_ns(const struct timespec *from, const struct timespec *to);

/* The two device buffers of bytes each that warm_up() copies between, created once, before
 * the first warm_up(), so that no warm-up allocates. */
int warm_buffers_create(struct gpu *gpu, uint64_t bytes);
void warm_buffers_destroy(struct gpu *gpu);

/* Copies src to dst until the GPU's clocks have risen, so that the figures after it are taken
 * at working clocks (idle GPUs lower theirs). */
int keep_busy(struct gpu *gpu, struct gpu_buffer *src, struct gpu_buffer *dst, uint64_t bytes);

/* keep_busy() over the warm buffers: before a figure whose own buffers need no warming. */
int warm_up(struct gpu *gpu);

/* Bytes of each buffer an array of array_bytes is held in: the daemon's part size, at most the
 * array, so that the benchmark's buffers are the daemon's. */
uint64_t chunk_bytes_for(const struct gpu *gpu, uint64_t array_bytes);

#endif
