/*
 * copy_pool.c: parallel memcpy of a batch's inputs (copy_pool.h).
 *
 * The caller publishes a task list under the mutex and wakes the helpers; everyone then
 * claims chunks of tasks from one atomic word that holds the generation in its high half
 * and the next task index in its low half. A helper that wakes late, after the caller has
 * returned or moved to the next list, fails its claim (the generation differs or the index
 * is past the end), so it never touches a task list that is gone. The caller returns once
 * the number of tasks done equals the count: every claimed chunk has been copied.
 */
#include "copy_pool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_relax.h"

#define COPY_POOL_MAX_THREADS 16
#define CHUNK_TASKS 4u /* tasks per claim: 16 KiB of 4 KiB requests */

struct copy_pool {
	pthread_t threads[COPY_POOL_MAX_THREADS];
	unsigned nthreads;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	/* The published list, under mu. */
	uint32_t generation;
	const struct copy_task *tasks;
	size_t count;
	/* generation << 32 | next task index. */
	atomic_uint_fast64_t claim;
	atomic_size_t done;
};

/* Claims and copies chunks of generation gen's list until none is left. */
static void work(struct copy_pool *p, uint32_t gen, const struct copy_task *tasks, size_t count)
{
	for (;;) {
		uint_fast64_t cur = atomic_load_explicit(&p->claim, memory_order_acquire);
		for (;;) {
			size_t index = (size_t)(cur & UINT32_MAX);
			if ((uint32_t)(cur >> 32) != gen || index >= count)
				return;
			if (atomic_compare_exchange_weak_explicit(&p->claim, &cur, cur + CHUNK_TASKS,
								  memory_order_acq_rel, memory_order_acquire))
				break;
		}
		size_t first = (size_t)(cur & UINT32_MAX);
		size_t end = first + CHUNK_TASKS < count ? first + CHUNK_TASKS : count;
		for (size_t i = first; i < end; i++)
			memcpy(tasks[i].dst, tasks[i].src, tasks[i].bytes);
		atomic_fetch_add_explicit(&p->done, end - first, memory_order_release);
	}
}

static void *helper_main(void *arg)
{
	struct copy_pool *p = arg;
	uint32_t seen = 0;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->generation == seen && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		seen = p->generation;
		const struct copy_task *tasks = p->tasks;
		size_t count = p->count;
		pthread_mutex_unlock(&p->mu);
		work(p, seen, tasks, count);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int copy_pool_create(unsigned threads, struct copy_pool **out)
{
	struct copy_pool *p;

	*out = NULL;
	if (threads == 0)
		return 0;
	if (threads > COPY_POOL_MAX_THREADS)
		threads = COPY_POOL_MAX_THREADS;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	atomic_init(&p->claim, 0);
	atomic_init(&p->done, 0);
	for (unsigned i = 0; i < threads; i++) {
		int r = pthread_create(&p->threads[i], NULL, helper_main, p);
		if (r) {
			copy_pool_destroy(p);
			return -r;
		}
		p->nthreads++;
		char name[16]; /* the kernel's limit, with the NUL */
		snprintf(name, sizeof(name), "vkr-copy-%u", i);
		(void)pthread_setname_np(p->threads[i], name); /* a label only */
	}
	*out = p;
	return 0;
}

void copy_pool_destroy(struct copy_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}

void copy_pool_run(struct copy_pool *p, const struct copy_task *tasks, size_t count)
{
	size_t bytes = 0;

	for (size_t i = 0; i < count && bytes < COPY_POOL_MIN_BYTES; i++)
		bytes += tasks[i].bytes;
	if (!p || count <= CHUNK_TASKS || bytes < COPY_POOL_MIN_BYTES || count > UINT32_MAX) {
		for (size_t i = 0; i < count; i++)
			memcpy(tasks[i].dst, tasks[i].src, tasks[i].bytes);
		return;
	}
	pthread_mutex_lock(&p->mu);
	uint32_t gen = ++p->generation;
	if (gen == 0) /* the helpers start at 0 as "seen": never publish it */
		gen = ++p->generation;
	p->tasks = tasks;
	p->count = count;
	atomic_store_explicit(&p->done, 0, memory_order_relaxed);
	atomic_store_explicit(&p->claim, (uint_fast64_t)gen << 32, memory_order_release);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	work(p, gen, tasks, count);
	/* A helper holding the last chunk may have been descheduled: after a while, give it the
	 * core instead of spinning through its time slice. */
	for (unsigned spins = 0; atomic_load_explicit(&p->done, memory_order_acquire) < count; spins++) {
		if (spins < 4096)
			cpu_relax();
		else
			sched_yield();
	}
}
