/*
 * engine_harness.h: runs kern_jobs described with host arrays on the real device, for the
 * engine tests and the benchmark's correctness check.
 */
#ifndef VKR_ENGINE_HARNESS_H
#define VKR_ENGINE_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu.h"
#include "kern.h"

struct host_job {
	enum kern_kind kind;
	vkr_op op;
	vkr_dtype dtype;
	vkr_cmp cmp;
	vkr_value cmp_value;
	bool exclusive;
	const void *input;  /* borrowed: n elements */
	size_t n;
	unsigned misalign;  /* elements by which the device copy starts past a 16-byte boundary */
	bool in_place;      /* scan: write the output over the input on the device */
	bool host_memory;   /* scan: run as for host memory (kern_job.host_memory); also set for
			     * every scan by VKR_TEST_HOST_MEMORY=1 */
	unsigned parts;     /* > 1: the array is held as this many parts (kern_part), apart from
			     * each other and at different misalignments, as if in several buffers */
	void *output;       /* borrowed, scan only: n elements */
	vkr_value result;   /* reduce: filled in */
};

/* Creates the device or fails the test (no device is a failure, never a skip). */
struct gpu *harness_gpu(void);
/* The same, created with environment variable name set to value (the engine reads its
 * VKR_* choices when a device is created); name is restored afterwards. */
struct gpu *harness_gpu_with_env(const char *name, const char *value);
/* Frees the device after checking no validation message was reported. */
void harness_gpu_done(struct gpu *gpu);
/* Records every job into one command buffer, submits, waits, and fills results/outputs. */
void harness_run(struct gpu *gpu, struct host_job *jobs, size_t count);

/* The seed for random inputs: VKR_TEST_SEED or the time, printed once. */
uint64_t harness_seed(void);

#endif
