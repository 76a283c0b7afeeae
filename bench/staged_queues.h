/*
 * staged_queues.h: times a staged copy of host memory through device memory, its stages
 * (copy up, copy kernel, copy down) on queues of their own, ordered by timeline semaphores.
 */
#ifndef VKREDUCE_BENCH_STAGED_QUEUES_H
#define VKREDUCE_BENCH_STAGED_QUEUES_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu.h"

struct staged_queues_config {
	/* queues[0] copies up (unused with kernel_from_host), queues[1] runs the copy kernel
	 * (the compute family), queues[2] copies down; two stages may share a queue */
	struct gpu_copy_queue queues[3];
	bool kernel_from_host; /* the kernel reads host_src itself: no copy up */
	bool kernel_to_host;   /* the kernel writes host_dst itself: no copy down (not both) */
	const struct gpu_buffer *host_src, *host_dst;
	const struct gpu_buffer *ring[6]; /* 3 slots in, 3 out, device memory of >= chunk bytes */
	uint64_t bytes, chunk;            /* multiples of 16 */
};

/* Median wall time (ms) of `reps` runs of the whole pipeline, after one more to warm up.
 * Buffers cross queue families without ownership transfers (the daemon's version would
 * create them shared), so the caller checks host_dst itself. 0, -EINVAL, -ENOMEM or -EIO. */
int staged_queues_time(struct gpu *gpu, const struct staged_queues_config *c, int reps, double *ms);

#endif
