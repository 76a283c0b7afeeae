/*
 * copy_pool.h: a few threads that help the loop thread copy a batch's inline inputs into
 * the upload ring. On the H200 that copy cost the loop ~0.4 us per 4 KiB request (about
 * 10 GB/s from one core), a quarter of its time under load; spread over four cores it
 * takes a fraction of that.
 */
#ifndef VKRD_COPY_POOL_H
#define VKRD_COPY_POOL_H

#include <stddef.h>

struct copy_task {
	void *dst;
	const void *src;
	size_t bytes;
};

struct copy_pool;

/* Starts threads helpers (0: none; copies then run on the caller alone). 0 or -errno. */
int copy_pool_create(unsigned threads, struct copy_pool **out);
/* Stops and joins the helpers. Accepts NULL. */
void copy_pool_destroy(struct copy_pool *pool);
/* Runs every task, the caller taking part, and returns when all are done. Batches smaller
 * than COPY_POOL_MIN_BYTES in all are copied by the caller alone: waking the helpers costs
 * more than they save. pool may be NULL. Not reentrant: one caller (the loop thread). */
void copy_pool_run(struct copy_pool *pool, const struct copy_task *tasks, size_t count);

#define COPY_POOL_MIN_BYTES ((size_t)256 * 1024)

#endif /* VKRD_COPY_POOL_H */
