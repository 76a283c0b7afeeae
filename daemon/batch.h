/*
 * batch.h: group commit. Jobs from every connection queue here; at the end of each loop
 * turn (a uv_check_t hook), whenever fewer than max_batches_in_flight command buffers are
 * on the GPU, all pending jobs (round-robin across connections, at most max_batch_jobs)
 * are recorded into one command buffer with kern_record() and submitted. A completion
 * thread waits on each submitted timeline value in order and wakes the loop, which then
 * decodes results, replies in completion order and releases every reference the jobs
 * held. Loop thread only, except the completion thread's private part.
 */
#ifndef VKRD_BATCH_H
#define VKRD_BATCH_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu.h"
#include "kern.h"

struct vkrd;
struct conn;
struct shm_region;
struct batch;
struct rxbuf;
struct batch_parts;

/* One reduce or scan request, from validation to reply. */
struct batch_job {
	struct batch_job *next;         /* borrowed: queue link */
	struct conn *conn;              /* owned reference */
	uint32_t msgid;
	struct kern_job kern;           /* addresses are filled in when the job is placed */
	const void *inline_data;        /* may be NULL: borrowed from rx (inline input) */
	struct rxbuf *rx;               /* owned reference, may be NULL: keeps inline_data alive */
	struct shm_region *src_region;  /* owned reference, may be NULL (inline input) */
	uint64_t src_offset;            /* bytes into src_region */
	struct shm_region *dst_region;  /* owned reference, may be NULL (scan result inline) */
	uint64_t dst_offset;            /* bytes into dst_region */
	uint64_t charged_bytes;         /* counted in conn->bytes_in_flight */
	uint64_t enqueue_ns;            /* received (dispatched) */
	uint64_t submit_ns;             /* its batch was submitted */

	/* Placement, set when the job is recorded. */
	struct gpu_buffer own_src;      /* owned when size != 0: input too big for the ring */
	struct gpu_buffer own_dst;      /* owned when size != 0: output too big for the ring */
	struct gpu_buffer own_scratch;  /* owned when size != 0 */
	void *src_host;                 /* may be NULL: where the input is copied to */
	const void *dst_host;           /* may be NULL: where the result is read from */
	/* Owned, may be NULL: an array larger than one buffer, placed in parts (then src_host is
	 * NULL, and dst_host too for a scan: batch_parts says where each part is). */
	struct batch_parts *parts;
};

/* Per-connection queue, embedded in struct conn and managed only by batch.c. */
struct batch_lane {
	struct batch_job *head, *tail;  /* borrowed: queued jobs, oldest first */
	size_t count;
	bool scheduled;                 /* in the round-robin list */
	struct conn *rr_next;           /* borrowed: next connection with queued jobs */
};

/* Creates the rings, the check and async handles and the completion thread. */
int batch_create(struct vkrd *d, struct batch **out, char *err, size_t err_size);
/* Stops the completion thread and frees the rings. The loop must have closed the handles
 * (batch_close) and the GPU must be idle. Accepts NULL. */
void batch_destroy(struct batch *batch);
/* Closes the loop handles so that uv_run can return. */
void batch_close(struct batch *batch);

/* Takes ownership of job (and its references) and queues it on job->conn's lane. */
void batch_enqueue(struct batch *batch, struct batch_job *job);
/* Drops the queued (not yet submitted) jobs of a closing connection, without replies. */
void batch_drop_conn(struct batch *batch, struct conn *conn);
/* Nothing queued and nothing on the GPU. */
bool batch_idle(const struct batch *batch);
/* Answers every queued (not yet submitted) job with the wire error code and frees it; work
 * already on the GPU is left to complete and be answered. Returns the number answered. Used
 * when a shutdown's drain timeout expires. */
size_t batch_fail_queued(struct batch *batch, int code, const char *what);

/* The largest array one request may hold: the parts the engine takes (KERN_MAX_PARTS),
 * split where the buffers of its input and of its output end, each at most
 * gpu_array_part_bytes() (30 GiB on the H200, beyond KERN_MAX_ELEMENTS of any dtype). */
uint64_t batch_max_array_bytes(const struct gpu *gpu);

/* A zeroed job from the batch's free list (or malloc), or NULL when out of memory. */
struct batch_job *batch_job_alloc(struct batch *batch);
/* Frees a job that never reached the GPU or whose batch completed, releasing its
 * references and its own buffers. */
void batch_job_free(struct vkrd *d, struct batch_job *job);

#endif /* VKRD_BATCH_H */
