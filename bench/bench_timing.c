/*
 * bench_timing.c: the timing that vkreduce-bench's kernel series (vkreduce_bench.c) and its
 * PCIe measurements (pcie.c) share: GPU time from timestamp queries, medians of runs, the
 * warm-up to working clocks, and the copies (by the copy engine and by the copy kernel) the
 * figures are compared with.
 */
#include "bench_timing.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int time_once(struct gpu *gpu, record_fn rec, void *ctx, uint64_t *ns)
{
	struct gpu_cmd *cmd;
	uint64_t value;
	int rc = gpu_cmd_begin(gpu, &cmd);
	if (rc < 0)
		return rc;
	rc = rec(gpu, cmd, ctx);
	if (rc < 0) {
		gpu_cmd_abandon(gpu, cmd);
		return rc;
	}
	rc = gpu_cmd_submit(gpu, cmd, &value);
	if (rc < 0)
		return rc;
	rc = gpu_wait(gpu, value, 120ull * 1000000000ull);
	if (rc < 0)
		return rc;
	*ns = gpu_cmd_elapsed_ns(gpu, cmd);
	gpu_cmd_recycle(gpu, cmd);
	return 0;
}

int time_median(struct gpu *gpu, int reps, record_fn rec, void *ctx, double *us)
{
	uint64_t *t = calloc((size_t)reps, sizeof(*t));
	if (!t)
		return -ENOMEM;
	uint64_t warm = 0;
	int rc = time_once(gpu, rec, ctx, &warm); /* first run pays for caches and clocks */
	for (int i = 0; i < reps && rc == 0; i++)
		rc = time_once(gpu, rec, ctx, &t[i]);
	if (rc == 0) {
		qsort(t, (size_t)reps, sizeof(*t), cmp_u64);
		*us = (double)t[reps / 2] / 1000.0;
		/* A spread this wide means the figure is not steady: say so, with the untimed first
		 * run's time, to tell a slow start from a slow series. */
		if (t[reps - 1] > t[0] + t[0] / 2)
			fprintf(stderr, "vkreduce-bench: runs from %.1f to %.1f us, median %.1f, first run %.1f\n",
				(double)t[0] / 1e3, (double)t[reps - 1] / 1e3, *us, (double)warm / 1e3);
	}
	free(t);
	return rc;
}

void record_dma(VkCommandBuffer cb, const struct gpu_buffer *src, uint64_t src_offset,
		const struct gpu_buffer *dst, uint64_t dst_offset, uint64_t bytes)
{
	const VkBufferCopy region = { .srcOffset = src_offset, .dstOffset = dst_offset, .size = bytes };
	vkCmdCopyBuffer(cb, src->handle, dst->handle, 1, &region);
}

int record_copy(struct gpu *gpu, struct gpu_cmd *cmd, void *ctx)
{
	(void)gpu;
	struct copy_ctx *c = ctx;
	record_dma(gpu_cmd_handle(cmd), c->src, 0, c->dst, c->dst_offset, c->bytes);
	return 0;
}

int record_copy_kernel(struct gpu *gpu, struct gpu_cmd *cmd, void *ctx)
{
	struct copy_ctx *c = ctx;
	int rc = kern_record_copy(gpu, cmd, c->src->address, c->dst->address + c->dst_offset, c->bytes);
	if (rc < 0)
		fprintf(stderr, "vkreduce-bench: could not record the copy kernel: %s\n", strerror(-rc));
	return rc;
}

int64_t elapsed_ns(const struct timespec *from, const struct timespec *to)
{
	return (to->tv_sec - from->tv_sec) * 1000000000L + (to->tv_nsec - from->tv_nsec);
}

/* GPUs lower their clocks when idle and take a while to raise them: the first run of this
 * benchmark measured a 1 GiB copy at 237 GB/s on an idle H200 and 4 TB/s a few seconds
 * later. Before each series, keep the GPU busy for a while so every figure is taken at
 * working clocks. */
static struct gpu_buffer warm_a, warm_b;

/* Copies src to dst (the copy kernel) for at least 1.5 s, and on until no copy has been 1%
 * faster than the best for 500 ms (at most 5 s). The H200 drops its SM clock to 345 MHz
 * within about a second of idling (as while the CPU generates 2^28 inputs) and brings it
 * back in steps: 345, then 600 to 780 MHz for 0.2 to 0.9 s, then 1980 MHz (session 7, run 5,
 * nvidia-smi every 100 ms). Copies are steady within each step, so the former warm-up (300
 * ms, then 200 ms without a 1% gain) could end on the middle step, and the series after it
 * ran 2 to 4 times slower with the memory clock unchanged: the "slow series" of sessions 3
 * to 6. Says so on stderr when it took longer than the minimum. */
int keep_busy(struct gpu *gpu, struct gpu_buffer *src, struct gpu_buffer *dst, uint64_t bytes)
{
	struct copy_ctx c = { .src = src, .dst = dst, .bytes = bytes };
	struct timespec start, now, improved;
	clock_gettime(CLOCK_MONOTONIC, &start);
	improved = start;
	uint64_t best = UINT64_MAX, first = 0;
	for (;;) {
		uint64_t ns;
		int rc = time_once(gpu, record_copy_kernel, &c, &ns);
		if (rc < 0)
			return rc;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!first)
			first = ns;
		if (ns < best - best / 100) {
			best = ns;
			improved = now;
		} else if (ns < best) {
			best = ns;
		}
		int64_t total = elapsed_ns(&start, &now);
		if ((total > 1500000000L && elapsed_ns(&improved, &now) > 500000000L) || total > 5000000000L) {
			if (total > 1600000000L)
				fprintf(stderr, "vkreduce-bench: warm-up took %.1f s (first copy %.0f us, best %.0f us)\n",
					(double)total / 1e9, (double)first / 1e3, (double)best / 1e3);
			return 0;
		}
	}
}

int warm_up(struct gpu *gpu)
{
	return keep_busy(gpu, &warm_a, &warm_b, warm_a.size);
}

int warm_buffers_create(struct gpu *gpu, uint64_t bytes)
{
	int rc = gpu_buffer_create(gpu, bytes, GPU_MEMORY_DEVICE, &warm_a);
	if (rc == 0)
		rc = gpu_buffer_create(gpu, bytes, GPU_MEMORY_DEVICE, &warm_b);
	return rc;
}

void warm_buffers_destroy(struct gpu *gpu)
{
	gpu_buffer_destroy(gpu, &warm_a);
	gpu_buffer_destroy(gpu, &warm_b);
}

/* Bytes of each buffer an array of array_bytes is held in: the daemon's part size
 * (gpu_array_part_bytes(): the largest power of two within one allocation, 2 GiB on the H200,
 * or within VKR_MAX_ARRAY_BUFFER_BYTES, which kern_validate() holds parts to), so that every
 * chunk boundary is a multiple of every element size and of the copy kernel's 16 bytes; but
 * no more than the array (at least 16 bytes, room for a reduction's result slot), so that an
 * array that fits one buffer is one buffer. */
uint64_t chunk_bytes_for(const struct gpu *gpu, uint64_t array_bytes)
{
	uint64_t chunk = gpu_array_part_bytes(gpu);
	if (array_bytes < 16)
		array_bytes = 16;
	return chunk < array_bytes ? chunk : array_bytes;
}
