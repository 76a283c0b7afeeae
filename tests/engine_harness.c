#include "engine_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "proto_names.h"

struct gpu *harness_gpu(void)
{
	struct gpu_config config = { .verbose = true };
	struct gpu *gpu = NULL;
	char err[512] = "";
	int rc = gpu_create(&config, &gpu, err, sizeof(err));
	if (rc < 0)
		fail_msg("no usable Vulkan device: %s", err);
	return gpu;
}

void harness_gpu_done(struct gpu *gpu)
{
	uint64_t messages = gpu_validation_messages(gpu);
	gpu_destroy(gpu);
	assert_int_equal(messages, 0);
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static bool all_host_memory(void)
{
	const char *env = getenv("VKR_TEST_HOST_MEMORY");
	return env && strcmp(env, "1") == 0;
}

void harness_run(struct gpu *gpu, struct host_job *jobs, size_t count)
{
	struct kern_job *kj = calloc(count ? count : 1, sizeof(*kj));
	uint64_t *in_off = calloc(count ? count : 1, sizeof(*in_off));
	uint64_t *out_off = calloc(count ? count : 1, sizeof(*out_off));
	uint64_t *scratch_off = calloc(count ? count : 1, sizeof(*scratch_off));
	assert_non_null(kj);
	assert_non_null(in_off);
	assert_non_null(out_off);
	assert_non_null(scratch_off);

	uint64_t in_bytes = 16, out_bytes = 16, scratch_bytes = 16;
	for (size_t i = 0; i < count; i++) {
		size_t size = proto_dtype_size(jobs[i].dtype);
		in_off[i] = align_up(in_bytes, 16) + jobs[i].misalign * size;
		in_bytes = in_off[i] + jobs[i].n * size;
		if (jobs[i].kind == KERN_SCAN && !jobs[i].in_place) {
			out_off[i] = align_up(out_bytes, 16);
			out_bytes = out_off[i] + jobs[i].n * size;
		} else if (jobs[i].kind == KERN_REDUCE) {
			out_off[i] = align_up(out_bytes, 16);
			out_bytes = out_off[i] + 8;
		}
	}
	/* Inputs live in host-visible memory that the kernels also write for in-place scans. */
	struct gpu_buffer in, out, scratch;
	assert_int_equal(gpu_buffer_create(gpu, in_bytes, GPU_MEMORY_READBACK, &in), 0);
	assert_int_equal(gpu_buffer_create(gpu, out_bytes, GPU_MEMORY_READBACK, &out), 0);
	for (size_t i = 0; i < count; i++) {
		size_t size = proto_dtype_size(jobs[i].dtype);
		if (jobs[i].n)
			memcpy((char *)in.map + in_off[i], jobs[i].input, jobs[i].n * size);
		kj[i] = (struct kern_job){
			.kind = jobs[i].kind,
			.op = jobs[i].op,
			.dtype = jobs[i].dtype,
			.cmp = jobs[i].cmp,
			.cmp_value = jobs[i].cmp_value,
			.exclusive = jobs[i].exclusive,
			.n = jobs[i].n,
			.src = in.address + in_off[i],
			.dst = jobs[i].in_place ? in.address + in_off[i] : out.address + out_off[i],
			.host_memory = jobs[i].host_memory || (jobs[i].kind == KERN_SCAN && all_host_memory()),
		};
		scratch_off[i] = align_up(scratch_bytes, 16);
		scratch_bytes = scratch_off[i] + kern_scratch_bytes(gpu, &kj[i]);
	}
	assert_int_equal(gpu_buffer_create(gpu, scratch_bytes, GPU_MEMORY_DEVICE, &scratch), 0);
	for (size_t i = 0; i < count; i++) {
		char msg[256];
		kj[i].scratch = scratch.address + scratch_off[i];
		int rc = kern_validate(gpu, &kj[i], msg, sizeof(msg));
		if (rc < 0)
			fail_msg("job %zu rejected: %s", i, msg);
	}

	struct gpu_cmd *cmd;
	uint64_t value;
	assert_int_equal(gpu_cmd_begin(gpu, &cmd), 0);
	assert_int_equal(kern_record(gpu, cmd, kj, count), 0);
	assert_int_equal(gpu_cmd_submit(gpu, cmd, &value), 0);
	assert_int_equal(gpu_wait(gpu, value, 600ull * 1000000000ull), 0);
	gpu_cmd_recycle(gpu, cmd);

	for (size_t i = 0; i < count; i++) {
		size_t size = proto_dtype_size(jobs[i].dtype);
		if (jobs[i].kind == KERN_REDUCE)
			jobs[i].result = kern_result_decode(&kj[i], (char *)out.map + out_off[i]);
		else if (jobs[i].n == 0)
			continue;
		else if (jobs[i].in_place)
			memcpy(jobs[i].output, (char *)in.map + in_off[i], jobs[i].n * size);
		else
			memcpy(jobs[i].output, (char *)out.map + out_off[i], jobs[i].n * size);
	}
	gpu_buffer_destroy(gpu, &in);
	gpu_buffer_destroy(gpu, &out);
	gpu_buffer_destroy(gpu, &scratch);
	free(kj);
	free(in_off);
	free(out_off);
	free(scratch_off);
}

uint64_t harness_seed(void)
{
	static uint64_t seed;
	if (!seed) {
		const char *env = getenv("VKR_TEST_SEED");
		seed = env && *env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + 1;
		if (!seed)
			seed = 1;
		printf("random seed: VKR_TEST_SEED=%llu\n", (unsigned long long)seed);
		fflush(stdout);
	}
	return seed;
}
