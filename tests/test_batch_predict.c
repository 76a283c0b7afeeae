/* test_batch_predict.c: the expected GPU time of a batch (daemon/batch_predict.c): nothing is
 * predicted before a kind's time is learnt, for small batches, or for a kind not learnt; a
 * learnt rate predicts a batch of another size in proportion; mixed and small batches teach
 * nothing; the moving average follows a change by a quarter per batch; sizes are learnt apart
 * by class, and a class not learnt takes the nearest; the margin's bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "batch_predict.h"

#define MIB ((uint64_t)1 << 20)

static struct kern_job job(enum kern_kind kind, vkr_dtype dtype, uint64_t n)
{
	return (struct kern_job){ .kind = kind, .op = VKR_OP_SUM, .dtype = dtype, .n = n };
}

static void test_count_moves_a_scans_bytes_both_ways(void **state)
{
	(void)state;
	uint64_t bytes[PREDICT_KINDS] = { 0 };
	struct kern_job r = job(KERN_REDUCE, VKR_DTYPE_F64, 1000), s = job(KERN_SCAN, VKR_DTYPE_F32, 1000);
	batch_predict_count(bytes, &r);
	batch_predict_count(bytes, &s);
	batch_predict_count(bytes, &r);
	assert_int_equal(bytes[PREDICT_REDUCE], 16000);
	assert_int_equal(bytes[PREDICT_SCAN], 8000);
}

static void test_nothing_predicted_until_learnt(void **state)
{
	(void)state;
	struct batch_predict p = { 0 };
	uint64_t big[PREDICT_KINDS] = { [PREDICT_REDUCE] = 1024 * MIB };
	assert_int_equal(batch_predict_ns(&p, big), 0);
	/* 1 GiB in 20 ms: 20 ms for the same, 5 ms for a quarter, 0 below PREDICT_MIN_BYTES */
	batch_predict_learn(&p, big, 20000000);
	assert_true(batch_predict_ns(&p, big) > 19990000 && batch_predict_ns(&p, big) <= 20000000);
	uint64_t quarter[PREDICT_KINDS] = { [PREDICT_REDUCE] = 256 * MIB };
	assert_true(batch_predict_ns(&p, quarter) > 4990000 && batch_predict_ns(&p, quarter) <= 5000000);
	uint64_t small[PREDICT_KINDS] = { [PREDICT_REDUCE] = PREDICT_MIN_BYTES - 1 };
	assert_int_equal(batch_predict_ns(&p, small), 0);
	/* a batch with a scan, whose rate is not known: no prediction */
	uint64_t mixed[PREDICT_KINDS] = { [PREDICT_REDUCE] = 64 * MIB, [PREDICT_SCAN] = 64 * MIB };
	assert_int_equal(batch_predict_ns(&p, mixed), 0);
}

static void test_mixed_and_small_batches_teach_nothing(void **state)
{
	(void)state;
	struct batch_predict p = { 0 };
	uint64_t mixed[PREDICT_KINDS] = { [PREDICT_REDUCE] = 64 * MIB, [PREDICT_SCAN] = 64 * MIB };
	batch_predict_learn(&p, mixed, 5000000);
	uint64_t small[PREDICT_KINDS] = { [PREDICT_SCAN] = MIB / 2 };
	batch_predict_learn(&p, small, 5000000);
	uint64_t zero_time[PREDICT_KINDS] = { [PREDICT_SCAN] = 64 * MIB };
	batch_predict_learn(&p, zero_time, 0);
	for (unsigned c = 0; c < PREDICT_CLASSES; c++) {
		assert_int_equal(p.ps_per_kib[PREDICT_REDUCE][c], 0);
		assert_int_equal(p.ps_per_kib[PREDICT_SCAN][c], 0);
	}
}

static void test_average_moves_a_quarter_per_batch(void **state)
{
	(void)state;
	struct batch_predict p = { 0 };
	uint64_t bytes[PREDICT_KINDS] = { [PREDICT_SCAN] = 1024 * MIB };
	batch_predict_learn(&p, bytes, 20000000);
	unsigned c = batch_predict_class(bytes[PREDICT_SCAN]);
	uint64_t first = p.ps_per_kib[PREDICT_SCAN][c];
	batch_predict_learn(&p, bytes, 28000000); /* 1.4 times slower */
	uint64_t second = p.ps_per_kib[PREDICT_SCAN][c];
	assert_true(second > first + first / 10 - 2 && second < first + first / 10 + 2);
	for (int i = 0; i < 60; i++)
		batch_predict_learn(&p, bytes, 28000000);
	assert_true(batch_predict_ns(&p, bytes) > 27900000 && batch_predict_ns(&p, bytes) <= 28000000);
}

static void test_classes_of_sizes(void **state)
{
	(void)state;
	assert_int_equal(batch_predict_class(0), 0);
	assert_int_equal(batch_predict_class(PREDICT_MIN_BYTES - 1), 0);
	assert_int_equal(batch_predict_class(MIB), 0);
	assert_int_equal(batch_predict_class(2 * MIB - 1), 0);
	assert_int_equal(batch_predict_class(2 * MIB), 1);
	assert_int_equal(batch_predict_class(1024 * MIB), 10);
	assert_int_equal(batch_predict_class((uint64_t)1 << 36), PREDICT_CLASSES - 1);
	assert_int_equal(batch_predict_class(UINT64_MAX), PREDICT_CLASSES - 1);
}

/* A batch's fixed cost: 16 MiB in 0.4 ms is 24 ps a byte, 1 GiB in 21 ms 19.6. Each size keeps
 * its own rate when the two alternate; a size not learnt takes the nearest learnt one's, on a
 * tie the smaller's. */
static void test_sizes_learnt_apart(void **state)
{
	(void)state;
	struct batch_predict p = { 0 };
	uint64_t small[PREDICT_KINDS] = { [PREDICT_REDUCE] = 16 * MIB };
	uint64_t large[PREDICT_KINDS] = { [PREDICT_REDUCE] = 1024 * MIB };
	for (int i = 0; i < 8; i++) {
		batch_predict_learn(&p, small, 400000);
		batch_predict_learn(&p, large, 21000000);
	}
	assert_true(batch_predict_ns(&p, small) > 399000 && batch_predict_ns(&p, small) <= 400000);
	assert_true(batch_predict_ns(&p, large) > 20990000 && batch_predict_ns(&p, large) <= 21000000);
	/* 64 MiB: 16 MiB's class is two away, 1 GiB's four: 16 MiB's rate */
	uint64_t mid[PREDICT_KINDS] = { [PREDICT_REDUCE] = 64 * MIB };
	assert_true(batch_predict_ns(&p, mid) > 1599000 && batch_predict_ns(&p, mid) <= 1600000);
	/* 256 MiB: two away from 1 GiB's, four from 16 MiB's: 1 GiB's rate */
	uint64_t quarter[PREDICT_KINDS] = { [PREDICT_REDUCE] = 256 * MIB };
	assert_true(batch_predict_ns(&p, quarter) > 5249000 && batch_predict_ns(&p, quarter) <= 5250000);
	/* equally far from both (128 MiB is three from each): the smaller's */
	uint64_t tie[PREDICT_KINDS] = { [PREDICT_REDUCE] = 128 * MIB };
	assert_true(batch_predict_ns(&p, tie) > 3199000 && batch_predict_ns(&p, tie) <= 3200000);
	/* the farthest class learnt serves too: only 1 MiB known, a 1 GiB batch ten classes up,
	 * and only the largest known, a 1 MiB one sixteen down */
	struct batch_predict only_small = { 0 }, only_large = { 0 };
	uint64_t one[PREDICT_KINDS] = { [PREDICT_SCAN] = MIB };
	uint64_t gib[PREDICT_KINDS] = { [PREDICT_SCAN] = 1024 * MIB };
	uint64_t top[PREDICT_KINDS] = { [PREDICT_SCAN] = (uint64_t)1 << 40 };
	batch_predict_learn(&only_small, one, 40000);
	assert_true(batch_predict_ns(&only_small, gib) > 40900000 && batch_predict_ns(&only_small, gib) <= 40960000);
	batch_predict_learn(&only_large, top, 20000000000);
	assert_true(batch_predict_ns(&only_large, one) > 19000 && batch_predict_ns(&only_large, one) <= 19100);
	/* the largest class takes every larger batch, and predicts it in proportion */
	uint64_t huge[PREDICT_KINDS] = { [PREDICT_REDUCE] = (uint64_t)1 << 40 };
	batch_predict_learn(&p, huge, 20000000000);
	uint64_t huger[PREDICT_KINDS] = { [PREDICT_REDUCE] = (uint64_t)1 << 41 };
	assert_true(batch_predict_ns(&p, huger) > 39990000000 && batch_predict_ns(&p, huger) <= 40000000000);
}

static void test_margin_bounds(void **state)
{
	(void)state;
	assert_int_equal(batch_predict_margin_ns(0), 50000);
	assert_int_equal(batch_predict_margin_ns(320000), 50000);
	assert_int_equal(batch_predict_margin_ns(16000000), 1000000);
	assert_int_equal(batch_predict_margin_ns(1000000000), 2000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_moves_a_scans_bytes_both_ways),
		cmocka_unit_test(test_nothing_predicted_until_learnt),
		cmocka_unit_test(test_mixed_and_small_batches_teach_nothing),
		cmocka_unit_test(test_average_moves_a_quarter_per_batch),
		cmocka_unit_test(test_classes_of_sizes),
		cmocka_unit_test(test_sizes_learnt_apart),
		cmocka_unit_test(test_margin_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
