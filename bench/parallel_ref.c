/* parallel_ref.c: the benchmark's input generation and scan checks over threads. */
#include "parallel_ref.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kern_gen.h"
#include "kern_ref.h"
#include "proto_names.h"

#define MAX_THREADS 32
#define FILL_PART_ELEMENTS ((size_t)1 << 20)
#define PARALLEL_MIN_ELEMENTS ((size_t)1 << 20)

static unsigned thread_count(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	return cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (unsigned)cores;
}

/* Runs fn(arg + i * arg_size) for i in [0, count) on threads, the first on this one. Where a
 * thread cannot be started, its share runs here too, so every i runs exactly once. */
static void run_parallel(void *(*fn)(void *), void *args, size_t arg_size, unsigned count)
{
	pthread_t threads[MAX_THREADS];
	bool started[MAX_THREADS] = { false };
	for (unsigned i = 1; i < count; i++)
		started[i] = pthread_create(&threads[i], NULL, fn, (char *)args + i * arg_size) == 0;
	fn(args);
	for (unsigned i = 1; i < count; i++) {
		if (started[i])
			pthread_join(threads[i], NULL);
		else
			fn((char *)args + i * arg_size);
	}
}

struct fill_task {
	vkr_dtype dtype;
	vkr_op op;
	char *out;
	size_t n;
	uint64_t seed;
	unsigned first, step; /* parts first, first + step, ... */
};

static void *fill_parts(void *arg)
{
	const struct fill_task *t = arg;
	size_t esize = proto_dtype_size(t->dtype);
	for (size_t part = t->first; part * FILL_PART_ELEMENTS < t->n; part += t->step) {
		size_t begin = part * FILL_PART_ELEMENTS;
		size_t count = t->n - begin < FILL_PART_ELEMENTS ? t->n - begin : FILL_PART_ELEMENTS;
		uint64_t rng = t->seed ^ (0x9E3779B97F4A7C15ull * (part + 1)); /* never 0 for part < 2^32 */
		gen_fill(t->dtype, t->op, t->out + begin * esize, count, &rng);
	}
	return NULL;
}

void parallel_fill(vkr_dtype dtype, vkr_op op, void *out, size_t n, uint64_t seed)
{
	struct fill_task tasks[MAX_THREADS];
	size_t parts = (n + FILL_PART_ELEMENTS - 1) / FILL_PART_ELEMENTS;
	unsigned count = thread_count();
	if (parts < count) /* no thread without a part */
		count = parts ? (unsigned)parts : 1;
	for (unsigned i = 0; i < count; i++)
		tasks[i] = (struct fill_task){
			.dtype = dtype, .op = op, .out = out, .n = n, .seed = seed, .first = i, .step = count,
		};
	run_parallel(fill_parts, tasks, sizeof(tasks[0]), count);
}

struct check_task {
	vkr_op op;
	vkr_dtype dtype;
	bool exclusive;
	const void *data, *got;
	size_t begin, end;
	struct ref_scan_state state; /* fold: the part's own, from the start; check: before it */
	bool ok;
	char why[256];
};

static void *fold_part(void *arg)
{
	struct check_task *t = arg;
	t->state = ref_scan_start(t->op, t->dtype);
	ref_scan_fold(t->op, t->dtype, t->data, t->begin, t->end, &t->state);
	return NULL;
}

static void *check_part(void *arg)
{
	struct check_task *t = arg;
	t->ok = ref_scan_check_range(t->op, t->dtype, t->exclusive, t->data, t->begin, t->end, t->state,
				     t->got, t->why, sizeof(t->why));
	return NULL;
}

bool parallel_scan_check(vkr_op op, vkr_dtype dtype, bool exclusive, const void *data, size_t n,
			 const void *got, char *why, size_t why_size)
{
	unsigned count = thread_count();
	if (n < PARALLEL_MIN_ELEMENTS || count == 1)
		return ref_scan_check(op, dtype, exclusive, data, n, got, why, why_size);
	struct check_task tasks[MAX_THREADS];
	for (unsigned i = 0; i < count; i++)
		tasks[i] = (struct check_task){
			.op = op, .dtype = dtype, .exclusive = exclusive, .data = data, .got = got,
			.begin = n / count * i, .end = i + 1 == count ? n : n / count * (i + 1),
		};
	run_parallel(fold_part, tasks, sizeof(tasks[0]), count);
	/* Each part's starting state: the start, then every earlier part's fold in order. */
	struct ref_scan_state before = ref_scan_start(op, dtype);
	for (unsigned i = 0; i < count; i++) {
		struct ref_scan_state own = tasks[i].state;
		tasks[i].state = before;
		ref_scan_combine(op, dtype, &before, &own);
	}
	run_parallel(check_part, tasks, sizeof(tasks[0]), count);
	for (unsigned i = 0; i < count; i++) {
		if (!tasks[i].ok) {
			snprintf(why, why_size, "%s", tasks[i].why);
			return false;
		}
	}
	return true;
}
