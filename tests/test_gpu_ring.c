/* test_gpu_ring.c: the staging ring frees space only when the fence of the batch that used
 * it completes, never wraps an allocation, and refuses what cannot fit. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine_harness.h"
#include "gpu_ring.h"

static void test_ring_reuses_space_only_after_its_fence_completes(void **state)
{
	(void)state;
	struct gpu *gpu = harness_gpu();
	struct gpu_ring ring;
	assert_int_equal(gpu_ring_init(&ring, gpu, 4096, GPU_MEMORY_UPLOAD), 0);
	uint64_t a, b, c;
	assert_int_equal(gpu_ring_alloc(&ring, 1000, 16, &a), 0);
	assert_int_equal(a, 0);
	assert_int_equal(gpu_ring_alloc(&ring, 1000, 256, &b), 0);
	assert_int_equal(b, 1024); /* aligned */
	assert_int_equal(gpu_ring_fence(&ring, 5), 0);
	assert_int_equal(gpu_ring_alloc(&ring, 2000, 16, &c), 0);
	assert_int_equal(c, 2032);
	assert_int_equal(gpu_ring_fence(&ring, 6), 0);
	/* Full until value 5 completes; an allocation never wraps around the end. */
	assert_int_equal(gpu_ring_alloc(&ring, 100, 16, &a), -EAGAIN);
	gpu_ring_reclaim(&ring, 4);
	assert_int_equal(gpu_ring_alloc(&ring, 100, 16, &a), -EAGAIN);
	gpu_ring_reclaim(&ring, 5);
	assert_int_equal(gpu_ring_alloc(&ring, 100, 16, &a), 0);
	assert_int_equal(a, 0); /* skipped the tail end, started over */
	gpu_ring_rollback(&ring);
	gpu_ring_reclaim(&ring, 6);
	assert_int_equal(gpu_ring_used(&ring), 0);
	/* With everything free, a whole-ring allocation fits. */
	assert_int_equal(gpu_ring_alloc(&ring, 4096, 16, &a), 0);
	assert_int_equal(gpu_ring_alloc(&ring, 8192, 16, &a), -E2BIG);
	assert_int_equal(gpu_ring_alloc(&ring, 16, 3, &a), -EINVAL);
	gpu_ring_finish(&ring, gpu);
	harness_gpu_done(gpu);
}

static void test_ring_refuses_when_fence_slots_run_out(void **state)
{
	(void)state;
	struct gpu *gpu = harness_gpu();
	struct gpu_ring ring;
	assert_int_equal(gpu_ring_init(&ring, gpu, 1 << 20, GPU_MEMORY_UPLOAD), 0);
	uint64_t off;
	for (unsigned i = 0; i < GPU_RING_MAX_FENCES; i++) {
		assert_int_equal(gpu_ring_alloc(&ring, 16, 16, &off), 0);
		assert_int_equal(gpu_ring_fence(&ring, i + 1), 0);
	}
	assert_int_equal(gpu_ring_alloc(&ring, 16, 16, &off), -EBUSY);
	gpu_ring_reclaim(&ring, 1);
	assert_int_equal(gpu_ring_alloc(&ring, 16, 16, &off), 0);
	gpu_ring_finish(&ring, gpu);
	harness_gpu_done(gpu);
}

/* A ring of a configured size that is no multiple of the largest alignment (1 MiB + 8 bytes)
 * is rounded up, so that allocations at every alignment work on it. */
static void test_ring_of_odd_size_takes_every_alignment(void **state)
{
	(void)state;
	struct gpu *gpu = harness_gpu();
	struct gpu_ring ring;
	assert_int_equal(gpu_ring_init(&ring, gpu, (1 << 20) + 8, GPU_MEMORY_UPLOAD), 0);
	assert_int_equal(ring.buffer.size % GPU_RING_MAX_ALIGN, 0);
	assert_true(ring.buffer.size >= (1 << 20) + 8);
	uint64_t off;
	assert_int_equal(gpu_ring_alloc(&ring, 100, 16, &off), 0);
	assert_int_equal(gpu_ring_alloc(&ring, 100, GPU_RING_MAX_ALIGN, &off), 0);
	assert_int_equal(off % GPU_RING_MAX_ALIGN, 0);
	gpu_ring_finish(&ring, gpu);
	harness_gpu_done(gpu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_reuses_space_only_after_its_fence_completes),
		cmocka_unit_test(test_ring_refuses_when_fence_slots_run_out),
		cmocka_unit_test(test_ring_of_odd_size_takes_every_alignment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
