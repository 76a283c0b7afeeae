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
	/* Each test builds only the pipelines it runs; test_gpu checks building all at start. */
	struct gpu_config config = { .verbose = true, .compile_on_first_use = true };
	struct gpu *gpu = NULL;
	char err[512] = "";
	int rc = gpu_create(&config, &gpu, err, sizeof(err));
	if (rc < 0)
		fail_msg("no usable Vulkan device: %s", err);
	return gpu;
}

struct gpu *harness_gpu_with_env(const char *name, const char *value)
{
	const char *saved = getenv(name);
	char *copy = saved ? strdup(saved) : NULL;
	assert_true(!saved || copy);
	assert_int_equal(setenv(name, value, 1), 0);
	struct gpu *gpu = harness_gpu();
	assert_int_equal(copy ? setenv(name, copy, 1) : unsetenv(name), 0);
	free(copy);
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

static unsigned job_parts(const struct host_job *job)
{
	return job->parts > 1 ? job->parts : 1;
}

/* Where part k of a job begins, in elements: even shares of n. */
static size_t part_begin(const struct host_job *job, unsigned k)
{
	return job->n * k / job_parts(job);
}

/* Byte offsets of each job's parts in the input and output buffers. */
struct part_offsets {
	uint64_t in[KERN_MAX_PARTS], out[KERN_MAX_PARTS];
};

void harness_run(struct gpu *gpu, struct host_job *jobs, size_t count)
{
	struct kern_job *kj = calloc(count ? count : 1, sizeof(*kj));
	struct part_offsets *off = calloc(count ? count : 1, sizeof(*off));
	struct kern_part (*parts)[KERN_MAX_PARTS] = calloc(count ? count : 1, sizeof(*parts));
	uint64_t *scratch_off = calloc(count ? count : 1, sizeof(*scratch_off));
	assert_non_null(kj);
	assert_non_null(off);
	assert_non_null(parts);
	assert_non_null(scratch_off);

	uint64_t in_bytes = 16, out_bytes = 16, scratch_bytes = 16;
	for (size_t i = 0; i < count; i++) {
		size_t size = proto_dtype_size(jobs[i].dtype);
		unsigned nparts = job_parts(&jobs[i]);
		assert_true(nparts <= KERN_MAX_PARTS && (nparts == 1 || nparts <= jobs[i].n));
		for (unsigned k = 0; k < nparts; k++) {
			size_t part_n = part_begin(&jobs[i], k + 1) - part_begin(&jobs[i], k);
			/* Parts lie 16 bytes apart, each misaligned differently. */
			unsigned misalign = (jobs[i].misalign + k) % (unsigned)(16 / size);
			off[i].in[k] = align_up(in_bytes, 16) + (k ? 16 : 0) + misalign * size;
			in_bytes = off[i].in[k] + part_n * size;
			if (jobs[i].kind == KERN_SCAN && !jobs[i].in_place) {
				off[i].out[k] = align_up(out_bytes, 16) + (k ? 16 + (k % 2) * size : 0);
				out_bytes = off[i].out[k] + part_n * size;
			}
		}
		if (jobs[i].kind == KERN_REDUCE) {
			off[i].out[0] = align_up(out_bytes, 16);
			out_bytes = off[i].out[0] + kern_result_max_bytes(gpu); /* before the job's parts are known */
		}
	}
	/* Inputs live in host-visible memory that the kernels also write for in-place scans. */
	struct gpu_buffer in, out, scratch;
	assert_int_equal(gpu_buffer_create(gpu, in_bytes, GPU_MEMORY_READBACK, &in), 0);
	assert_int_equal(gpu_buffer_create(gpu, out_bytes, GPU_MEMORY_READBACK, &out), 0);
	for (size_t i = 0; i < count; i++) {
		size_t size = proto_dtype_size(jobs[i].dtype);
		unsigned nparts = job_parts(&jobs[i]);
		for (unsigned k = 0; k < nparts; k++) {
			size_t begin = part_begin(&jobs[i], k), part_n = part_begin(&jobs[i], k + 1) - begin;
			if (part_n)
				memcpy((char *)in.map + off[i].in[k], (const char *)jobs[i].input + begin * size,
				       part_n * size);
			parts[i][k] = (struct kern_part){
				.n = part_n,
				.src = in.address + off[i].in[k],
				.dst = jobs[i].in_place ? in.address + off[i].in[k] : out.address + off[i].out[k],
			};
		}
		kj[i] = (struct kern_job){
			.kind = jobs[i].kind,
			.op = jobs[i].op,
			.dtype = jobs[i].dtype,
			.cmp = jobs[i].cmp,
			.cmp_value = jobs[i].cmp_value,
			.exclusive = jobs[i].exclusive,
			.n = jobs[i].n,
			.src = parts[i][0].src,
			.dst = jobs[i].kind == KERN_REDUCE ? out.address + off[i].out[0] : parts[i][0].dst,
			.host_memory = jobs[i].host_memory || (jobs[i].kind == KERN_SCAN && all_host_memory()),
			.parts = nparts > 1 ? parts[i] : NULL,
			.part_count = nparts > 1 ? nparts : 0,
		};
		if (jobs[i].kind == KERN_REDUCE) /* the area reads zero when the work starts (kern.h) */
			memset((char *)out.map + off[i].out[0], 0, kern_result_bytes(gpu, &kj[i]));
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
		if (jobs[i].kind == KERN_REDUCE) {
			jobs[i].result = kern_result_decode(gpu, &kj[i], (char *)out.map + off[i].out[0]);
			continue;
		}
		for (unsigned k = 0; k < job_parts(&jobs[i]); k++) {
			size_t begin = part_begin(&jobs[i], k), part_n = part_begin(&jobs[i], k + 1) - begin;
			const struct gpu_buffer *where = jobs[i].in_place ? &in : &out;
			uint64_t at = jobs[i].in_place ? off[i].in[k] : off[i].out[k];
			if (part_n)
				memcpy((char *)jobs[i].output + begin * size, (char *)where->map + at, part_n * size);
		}
	}
	gpu_buffer_destroy(gpu, &in);
	gpu_buffer_destroy(gpu, &out);
	gpu_buffer_destroy(gpu, &scratch);
	free(kj);
	free(off);
	free(parts);
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
