/* test_gpu.c: device selection, limits, memory kinds, host import, timestamps. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine_harness.h"

/* As the daemon starts: every pipeline built in gpu_create (under the validation setup, every
 * one checked by the layer). The other tests' devices build theirs on first use. */
static void test_gpu_picks_a_device_reads_its_limits_and_builds_every_pipeline(void **state)
{
	(void)state;
	struct gpu *gpu = NULL;
	char err[512] = "";
	struct gpu_config at_start = { .verbose = true };
	unsetenv("VKR_COMPILE_ON_FIRST_USE");
	if (gpu_create(&at_start, &gpu, err, sizeof(err)) < 0)
		fail_msg("no usable Vulkan device: %s", err);
	assert_false(gpu_builds_on_first_use(gpu));
	size_t available = 0;
	for (uint32_t i = 0; i < kern_pipeline_count(); i++) {
		if (!gpu_pipeline_available(gpu, i))
			continue;
		assert_true(gpu_pipeline_built(gpu, i)); /* by gpu_create, before any use */
		available++;
	}
	print_message("%zu of %zu pipelines built at start\n", available, kern_pipeline_count());
	assert_true(available > 0);
	const struct gpu_info *info = gpu_get_info(gpu);
	print_message("device \"%s\" (%s): subgroup %u, storage range %llu, %u reduce workgroups, "
		      "f64 %d, i64 %d, host import %d (alignment %llu)\n",
		      info->name, info->type, info->subgroup_size,
		      (unsigned long long)info->max_storage_buffer_range, info->reduce_workgroups,
		      info->shader_float64, info->shader_int64, info->host_import,
		      (unsigned long long)info->host_import_alignment);
	assert_true(info->name[0] != '\0');
	assert_true(info->subgroup_size >= 1);
	assert_true(info->max_storage_buffer_range >= 128u << 20 || info->max_storage_buffer_range > 0);
	assert_true(info->reduce_workgroups >= 1 && info->reduce_workgroups <= info->max_workgroup_count_x);
	assert_true(info->copy_workgroups >= 1 && info->copy_workgroups <= info->max_workgroup_count_x);
	assert_non_null(strstr(info->choice_reason, "best of"));
	harness_gpu_done(gpu);
}

/* f64 asks shaderInt64 of a device that compares floats by keys (an f64 key is an int64) and
 * not of one that keeps subnormals; 64-bit integers ask it always, 32-bit types nothing. */
static void test_gpu_dtype_support_follows_the_features(void **state)
{
	(void)state;
	struct gpu_info info;
	memset(&info, 0, sizeof(info));
	assert_true(gpu_info_supports_dtype(&info, VKR_DTYPE_F32));
	assert_true(gpu_info_supports_dtype(&info, VKR_DTYPE_U32));
	assert_false(gpu_info_supports_dtype(&info, VKR_DTYPE_F64));
	assert_false(gpu_info_supports_dtype(&info, VKR_DTYPE_I64));
	info.shader_float64 = true;
	assert_false(gpu_info_supports_dtype(&info, VKR_DTYPE_F64)); /* keys without shaderInt64 */
	info.denorm_preserve64 = true;
	assert_true(gpu_info_supports_dtype(&info, VKR_DTYPE_F64)); /* compared natively */
	assert_false(gpu_info_supports_dtype(&info, VKR_DTYPE_U64));
	info.denorm_preserve64 = false;
	info.shader_int64 = true;
	assert_true(gpu_info_supports_dtype(&info, VKR_DTYPE_F64));
	assert_true(gpu_info_supports_dtype(&info, VKR_DTYPE_I64));
	info.shader_float64 = false;
	assert_false(gpu_info_supports_dtype(&info, VKR_DTYPE_F64));
	assert_false(gpu_info_supports_dtype(&info, (vkr_dtype)VKR_DTYPE_COUNT_));
}

static void test_gpu_device_override_by_index_and_name(void **state)
{
	(void)state;
	struct gpu *first = harness_gpu();
	char name[256];
	snprintf(name, sizeof(name), "%s", gpu_get_info(first)->name);
	harness_gpu_done(first);

	struct gpu *gpu = NULL;
	char err[256] = "";
	struct gpu_config by_index = { .device = "0", .compile_on_first_use = true };
	assert_int_equal(gpu_create(&by_index, &gpu, err, sizeof(err)), 0);
	assert_non_null(strstr(gpu_get_info(gpu)->choice_reason, "index"));
	harness_gpu_done(gpu);

	/* A lower-case substring of the name selects it too. */
	char sub[8] = "";
	for (size_t i = 0; i < 4 && name[i]; i++)
		sub[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
	struct gpu_config by_name = { .device = sub, .compile_on_first_use = true };
	assert_int_equal(gpu_create(&by_name, &gpu, err, sizeof(err)), 0);
	assert_string_equal(gpu_get_info(gpu)->name, name);
	harness_gpu_done(gpu);
}

static void test_gpu_unknown_device_is_a_clear_error(void **state)
{
	(void)state;
	struct gpu *gpu = NULL;
	char err[256] = "";
	struct gpu_config config = { .device = "no-such-gpu-anywhere" };
	assert_int_equal(gpu_create(&config, &gpu, err, sizeof(err)), -ENODEV);
	assert_null(gpu);
	assert_non_null(strstr(err, "no-such-gpu-anywhere"));
	config.device = "99";
	assert_int_equal(gpu_create(&config, &gpu, err, sizeof(err)), -ENODEV);
	assert_null(strchr(err, '\n'));
}

/* Points the loader at a driver list, by both of its variables: VK_DRIVER_FILES, where set,
 * overrides VK_ICD_FILENAMES (loader 1.3.207 and later; the GPU machine's env.sh sets it). */
static const char *const driver_variables[] = { "VK_DRIVER_FILES", "VK_ICD_FILENAMES" };
enum { DRIVER_VARIABLES = sizeof(driver_variables) / sizeof(driver_variables[0]) };

static void test_gpu_no_vulkan_driver_is_a_clear_one_line_error(void **state)
{
	(void)state;
	char *saved[DRIVER_VARIABLES];
	for (size_t i = 0; i < DRIVER_VARIABLES; i++) {
		const char *value = getenv(driver_variables[i]);
		saved[i] = value ? strdup(value) : NULL;
		assert_true(!value || saved[i]);
		assert_int_equal(setenv(driver_variables[i], "/nonexistent/vkreduce-test-icd.json", 1), 0);
	}
	struct gpu *gpu = NULL;
	char err[256] = "";
	int rc = gpu_create(NULL, &gpu, err, sizeof(err));
	for (size_t i = 0; i < DRIVER_VARIABLES; i++) {
		if (saved[i])
			assert_int_equal(setenv(driver_variables[i], saved[i], 1), 0);
		else
			assert_int_equal(unsetenv(driver_variables[i]), 0);
		free(saved[i]);
	}
	assert_int_equal(rc, -ENODEV);
	assert_null(gpu);
	assert_non_null(strstr(err, "no Vulkan"));
	assert_null(strchr(err, '\n'));
}

static void test_gpu_buffers_of_every_kind_have_addresses(void **state)
{
	(void)state;
	struct gpu *gpu = harness_gpu();
	struct gpu_buffer b[4];
	for (int kind = GPU_MEMORY_DEVICE; kind <= GPU_MEMORY_STAGING; kind++) {
		assert_int_equal(gpu_buffer_create(gpu, 4096, kind, &b[kind]), 0);
		assert_true(b[kind].address != 0);
		if (kind != GPU_MEMORY_DEVICE)
			assert_non_null(b[kind].map);
	}
	for (int kind = GPU_MEMORY_DEVICE; kind <= GPU_MEMORY_STAGING; kind++)
		gpu_buffer_destroy(gpu, &b[kind]);
	struct gpu_buffer huge;
	assert_int_equal(gpu_buffer_create(gpu, UINT64_MAX / 2, GPU_MEMORY_DEVICE, &huge), -E2BIG);
	gpu_buffer_destroy(gpu, NULL);
	harness_gpu_done(gpu);
}

/* Reduces n u32 at a device address in place (op sum or max) and returns the result; the
 * timeline and the command buffer's timestamps must say the work ran. */
static uint32_t reduce_u32_at(struct gpu *gpu, vkr_op op, uint64_t address, uint64_t n)
{
	struct gpu_buffer out, scratch;
	struct kern_job job = { .kind = KERN_REDUCE, .op = op, .dtype = VKR_DTYPE_U32,
				.n = n, .src = address };
	assert_int_equal(gpu_buffer_create(gpu, kern_result_bytes(gpu, &job), GPU_MEMORY_READBACK, &out), 0);
	assert_int_equal(gpu_buffer_create(gpu, kern_scratch_bytes(gpu, &job) + 16, GPU_MEMORY_DEVICE, &scratch), 0);
	job.dst = out.address;
	memset(out.map, 0, kern_result_bytes(gpu, &job)); /* zero when the work starts (kern.h) */
	job.scratch = scratch.address;
	assert_int_equal(kern_validate(gpu, &job, NULL, 0), 0);
	struct gpu_cmd *cmd;
	uint64_t value;
	assert_int_equal(gpu_cmd_begin(gpu, &cmd), 0);
	assert_int_equal(kern_record(gpu, cmd, &job, 1), 0);
	assert_int_equal(gpu_cmd_submit(gpu, cmd, &value), 0);
	assert_int_equal(gpu_wait(gpu, value, 60ull * 1000000000ull), 0);
	assert_true(gpu_completed_value(gpu) >= value);
	if (gpu_get_info(gpu)->timestamp_period_ns > 0)
		assert_true(gpu_cmd_elapsed_ns(gpu, cmd) > 0);
	gpu_cmd_recycle(gpu, cmd);
	uint32_t r = kern_result_decode(gpu, &job, out.map).u32;
	gpu_buffer_destroy(gpu, &out);
	gpu_buffer_destroy(gpu, &scratch);
	return r;
}

static void test_gpu_reads_imported_host_memory_in_place(void **state)
{
	(void)state;
	struct gpu *gpu = harness_gpu();
	const struct gpu_info *info = gpu_get_info(gpu);
	if (!info->host_import) {
		struct gpu_buffer b;
		assert_int_equal(gpu_buffer_import_host(gpu, NULL, 4096, &b), -ENOTSUP);
		harness_gpu_done(gpu);
		return;
	}
	size_t size = 1 << 20;
	uint32_t *pages = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(pages != MAP_FAILED);
	for (size_t i = 0; i < size / 4; i++)
		pages[i] = (uint32_t)i;
	struct gpu_buffer imported;
	assert_int_equal(gpu_buffer_import_host(gpu, (char *)pages + 1, 4096, &imported), -EINVAL);
	assert_int_equal(gpu_buffer_import_host(gpu, pages, size, &imported), 0);
	uint32_t want = 0;
	for (size_t i = 0; i < size / 4; i++)
		want += (uint32_t)i;
	assert_int_equal(reduce_u32_at(gpu, VKR_OP_SUM, imported.address, size / 4), want);
	gpu_buffer_destroy(gpu, &imported);
	munmap(pages, size);
	harness_gpu_done(gpu);
}

/* Which host memory the device imports: anonymous pages, and a memfd mapped shared
 * read-write and read-only (what the daemon maps for clients' regions). Printed so that a
 * run on each device records it; anonymous read-write pages must import wherever the
 * extension is offered, and whatever imports must read correctly. */
static void test_gpu_host_import_of_memfd_mappings(void **state)
{
	(void)state;
	struct gpu *gpu = harness_gpu();
	const struct gpu_info *info = gpu_get_info(gpu);
	if (!info->host_import) {
		print_message("no VK_EXT_external_memory_host on this device\n");
		harness_gpu_done(gpu);
		return;
	}
	size_t size = 4u << 20;
	int fd = memfd_create("vkr-import-test", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	struct {
		const char *name;
		void *map;
	} cases[3] = {
		{ "anonymous, private, read-write",
		  mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) },
		{ "memfd, shared, read-write", mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) },
		{ "memfd, shared, read-only", NULL },
	};
	assert_true(cases[0].map != MAP_FAILED);
	assert_true(cases[1].map != MAP_FAILED);
	for (size_t i = 0; i < size / 4; i++)
		((uint32_t *)cases[0].map)[i] = ((uint32_t *)cases[1].map)[i] = (uint32_t)i;
	cases[2].map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(cases[2].map != MAP_FAILED);
	for (int c = 0; c < 3; c++) {
		struct gpu_buffer imported;
		int rc = gpu_buffer_import_host(gpu, cases[c].map, size, &imported);
		print_message("host import of %s memory: %s\n", cases[c].name, rc == 0 ? "ok" : strerror(-rc));
		if (c == 0)
			assert_int_equal(rc, 0);
		if (rc == 0) {
			assert_int_equal(reduce_u32_at(gpu, VKR_OP_MAX, imported.address, size / 4), size / 4 - 1);
			gpu_buffer_destroy(gpu, &imported);
		}
		munmap(cases[c].map, size);
	}
	close(fd);
	harness_gpu_done(gpu);
}

static void test_gpu_wait_times_out_on_a_value_never_submitted(void **state)
{
	(void)state;
	struct gpu *gpu = harness_gpu();
	assert_int_equal(gpu_wait(gpu, gpu_last_submitted_value(gpu) + 1, 1000000), -ETIMEDOUT);
	assert_false(gpu_is_lost(gpu));
	harness_gpu_done(gpu);
}

static void test_gpu_injected_submit_failure_reports_device_lost(void **state)
{
	(void)state;
	struct gpu *gpu = harness_gpu();
	setenv("VKR_FAULT_SUBMIT_EVERY", "1", 1);
	struct gpu_cmd *cmd;
	uint64_t value = 0;
	assert_int_equal(gpu_cmd_begin(gpu, &cmd), 0);
	assert_int_equal(gpu_cmd_submit(gpu, cmd, &value), -EIO);
	assert_true(gpu_is_lost(gpu));
	unsetenv("VKR_FAULT_SUBMIT_EVERY");
	harness_gpu_done(gpu);
}

static void write_file(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
}

static void test_gpu_pipeline_cache_is_saved_reloaded_and_bad_files_ignored(void **state)
{
	(void)state;
	char dir[] = "/tmp/vkr-cache-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/pipelines.cache", dir);
	struct gpu_config config = { .pipeline_cache_path = path, .compile_on_first_use = true };
	struct gpu *gpu = NULL;
	char err[256];

	/* No file yet: starts, and saves one (holding the one pipeline built). */
	assert_int_equal(gpu_create(&config, &gpu, err, sizeof(err)), 0);
	assert_false(gpu_pipeline_cache_was_loaded(gpu));
	VkPipeline built;
	assert_false(gpu_pipeline_built(gpu, 0)); /* first use: nothing built yet */
	assert_int_equal(gpu_pipeline(gpu, 0, &built), 0);
	assert_true(gpu_pipeline_built(gpu, 0));
	assert_int_equal(gpu_save_pipeline_cache(gpu, path), 0);
	harness_gpu_done(gpu);

	/* The saved file is used on the next start. */
	assert_int_equal(gpu_create(&config, &gpu, err, sizeof(err)), 0);
	assert_true(gpu_pipeline_cache_was_loaded(gpu));
	harness_gpu_done(gpu);

	/* A corrupt file and one from another device: ignored with a warning, start succeeds. */
	write_file(path, "garbage, not a pipeline cache", 29);
	assert_int_equal(gpu_create(&config, &gpu, err, sizeof(err)), 0);
	assert_false(gpu_pipeline_cache_was_loaded(gpu));
	harness_gpu_done(gpu);
	VkPipelineCacheHeaderVersionOne foreign = {
		.headerSize = sizeof(foreign),
		.headerVersion = VK_PIPELINE_CACHE_HEADER_VERSION_ONE,
		.vendorID = 0x10de,
		.deviceID = 0x2335,
	};
	write_file(path, &foreign, sizeof(foreign));
	assert_int_equal(gpu_create(&config, &gpu, err, sizeof(err)), 0);
	assert_false(gpu_pipeline_cache_was_loaded(gpu));
	harness_gpu_done(gpu);
	unlink(path);
	rmdir(dir);
}

/* Under the validation setup (VKR_VALIDATION=1) the layer must really be watching: a
 * dispatch recorded without a pipeline is reported and counted. Without it, nothing is
 * counted. The command buffer is never submitted. */
static void test_gpu_validation_layer_reports_misuse_when_enabled(void **state)
{
	(void)state;
	const char *env = getenv("VKR_VALIDATION");
	bool on = env && *env && strcmp(env, "0") != 0;
	struct gpu *gpu = harness_gpu();
	if (on) {
		/* Only under the layer: a driver may crash on the misuse itself (NVIDIA does). */
		struct gpu_cmd *cmd;
		assert_int_equal(gpu_cmd_begin(gpu, &cmd), 0);
		vkCmdDispatch(gpu_cmd_handle(cmd), 1, 1, 1);
		gpu_cmd_abandon(gpu, cmd);
		assert_true(gpu_validation_messages(gpu) > 0);
	} else {
		assert_int_equal(gpu_validation_messages(gpu), 0);
	}
	print_message("validation %s: %llu message(s) for the misuse\n", on ? "on" : "off",
		      (unsigned long long)gpu_validation_messages(gpu));
	gpu_destroy(gpu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_picks_a_device_reads_its_limits_and_builds_every_pipeline),
		cmocka_unit_test(test_gpu_dtype_support_follows_the_features),
		cmocka_unit_test(test_gpu_device_override_by_index_and_name),
		cmocka_unit_test(test_gpu_unknown_device_is_a_clear_error),
		cmocka_unit_test(test_gpu_no_vulkan_driver_is_a_clear_one_line_error),
		cmocka_unit_test(test_gpu_buffers_of_every_kind_have_addresses),
		cmocka_unit_test(test_gpu_reads_imported_host_memory_in_place),
		cmocka_unit_test(test_gpu_host_import_of_memfd_mappings),
		cmocka_unit_test(test_gpu_wait_times_out_on_a_value_never_submitted),
		cmocka_unit_test(test_gpu_injected_submit_failure_reports_device_lost),
		cmocka_unit_test(test_gpu_validation_layer_reports_misuse_when_enabled),
		cmocka_unit_test(test_gpu_pipeline_cache_is_saved_reloaded_and_bad_files_ignored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
