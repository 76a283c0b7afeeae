/*
 * pcie.h: vkreduce-bench's --pcie measurements, the ceilings of a request on shared memory:
 * host RAM <-> device copies by the copy engine and by the copy kernel, a scan staged through
 * device memory in chunks (on one queue, and on queues of their own), and copies on queues
 * of their own.
 */
#ifndef VKREDUCE_BENCH_PCIE_H
#define VKREDUCE_BENCH_PCIE_H

#include <stdbool.h>

#include "gpu.h"

/* Prints every --pcie figure, each the median of reps runs, the copies moving 2^max_log2 x 4
 * bytes (at most one buffer, as the series' copy reference). Warms up with warm_up(), so the
 * warm buffers must exist (warm_buffers_create()); times the queues of gpu_config.copy_queues
 * (fewer than two: says so, not timed). 0, or -errno (-EPROTO where a staged copy or a scan
 * of host memory came out wrong). ceilings_only: the copies on one queue alone (each
 * direction, both at once as one transfer and as two) and the scans of host memory in place,
 * without the staged pipelines and the queues. */
int pcie_measure(struct gpu *gpu, int reps, int max_log2, bool ceilings_only);

#endif
