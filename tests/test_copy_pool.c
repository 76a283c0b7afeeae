/* test_copy_pool.c: the loop's copy helpers copy every byte of every task, once, at every
 * batch size, with and without helpers, across many batches in a row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "copy_pool.h"

#define MAX_TASKS 600
#define MAX_BYTES 9000

static unsigned char src[MAX_TASKS][MAX_BYTES];
static unsigned char dst[MAX_TASKS][MAX_BYTES + 1]; /* one guard byte each */

static void run_batches(unsigned threads)
{
	struct copy_pool *pool;
	struct copy_task tasks[MAX_TASKS];
	uint32_t seed = 12345;

	assert_int_equal(copy_pool_create(threads, &pool), 0);
	assert_true(threads == 0 ? pool == NULL : pool != NULL);
	/* Batch sizes around the thresholds: below and above a chunk, below and above
	 * COPY_POOL_MIN_BYTES in all. */
	const size_t counts[] = { 0, 1, 3, 4, 5, 17, 64, 65, 255, 600 };
	for (int round = 0; round < 50; round++) {
		size_t count = counts[(size_t)round % (sizeof(counts) / sizeof(counts[0]))];
		for (size_t i = 0; i < count; i++) {
			seed = seed * 1664525u + 1013904223u;
			size_t bytes = round % 3 == 0 ? 4096 : 1 + seed % MAX_BYTES;
			for (size_t k = 0; k < bytes; k++)
				src[i][k] = (unsigned char)(seed >> 8) + (unsigned char)k;
			memset(dst[i], 0xEE, MAX_BYTES + 1);
			tasks[i] = (struct copy_task){ dst[i], src[i], bytes };
		}
		copy_pool_run(pool, tasks, count);
		for (size_t i = 0; i < count; i++) {
			assert_memory_equal(dst[i], src[i], tasks[i].bytes);
			assert_int_equal(dst[i][tasks[i].bytes], 0xEE);
		}
	}
	copy_pool_destroy(pool);
}

static void test_copies_without_helpers(void **state)
{
	(void)state;
	run_batches(0);
}

static void test_copies_with_one_helper(void **state)
{
	(void)state;
	run_batches(1);
}

static void test_copies_with_many_helpers(void **state)
{
	(void)state;
	run_batches(7);
}

static void test_destroy_accepts_null(void **state)
{
	(void)state;
	copy_pool_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copies_without_helpers),
		cmocka_unit_test(test_copies_with_one_helper),
		cmocka_unit_test(test_copies_with_many_helpers),
		cmocka_unit_test(test_destroy_accepts_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
