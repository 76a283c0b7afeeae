/* batch.c: group commit of jobs into command buffers, and their completion. */
#include "batch.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "batch_predict.h"
#include "conn.h"
#include "copy_pool.h"
#include "cpu_relax.h"
#include "daemon.h"
#include "gpu_ring.h"
#include "log.h"
#include "notify.h"
#include "proto_names.h"
#include "shm.h"

/* A job's array in several buffers: where each part's input and output are, and the buffers
 * of the job's own that hold the parts outside imported regions. */
struct batch_parts {
	uint32_t count;
	struct kern_part kern[KERN_MAX_PARTS];
	uint64_t first[KERN_MAX_PARTS];            /* element index where each part begins */
	struct gpu_buffer own_src[KERN_MAX_PARTS]; /* size != 0: the part's input is copied here */
	struct gpu_buffer own_dst[KERN_MAX_PARTS]; /* size != 0: the part's output lands here */
};

/* The completion thread waits in slices so that it notices a stop request. */
#define WAIT_SLICE_NS (200ull * 1000 * 1000)
#define MAX_IN_FLIGHT 32

/* One submitted command buffer and the jobs recorded into it. */
struct inflight {
	uint64_t value;            /* timeline value that signals completion */
	struct gpu_cmd *cmd;       /* owned until recycled */
	struct batch_job **jobs;   /* owned array of owned jobs */
	size_t count, cap;         /* jobs, and room in the array */
	bool lost;                 /* completed with device loss */
	unsigned slot;             /* index in wait_values / done_ns */
	uint64_t done_ns;          /* when the completion thread saw it complete */
	uint64_t bytes[PREDICT_KINDS]; /* what its jobs move (batch_predict.h) */
	uint64_t expect_ns;        /* its expected GPU time (batch_predict.h); 0: none */
	uint64_t due_ns, margin_ns; /* its expected end and how far to poll around it */
	struct inflight *next;     /* borrowed: next newer batch */
};

struct batch {
	struct vkrd *d;                  /* borrowed */
	struct gpu_ring upload;          /* inputs, host-visible */
	struct gpu_ring readback;        /* reduce slots and scan outputs, host-visible */
	struct gpu_ring scratch;         /* kernel scratch, device-local */
	bool rings_ready;
	uv_check_t check;                /* end-of-turn flush */
	uv_idle_t idle;                  /* while active, the loop polls instead of sleeping */
	bool idle_active;
	uint64_t loop_spin_ns;           /* how long the loop polls after activity */
	uint64_t loop_spin_until;
	uint64_t idle_bytes_in;          /* the loop's bytes_in at its last idle turn */
	uv_async_t async;                /* completion thread -> loop */
	/* Polling around the expected end of long batches (batch_predict.h): on unless
	 * VKR_LOOP_PREDICT=0, where the loop polls at all (VKR_LOOP_SPIN_US). */
	bool predict_on;
	struct batch_predict predict;
	uv_timer_t due_timer;            /* starts the loop polling shortly before the oldest batch's end */
	uint64_t gpu_free_ns;            /* expected end of the last batch submitted with a prediction */
	bool handles_open;

	struct conn *rr_head, *rr_tail;  /* borrowed: connections with queued jobs, in turn */
	size_t pending;                  /* jobs queued on all lanes */
	struct inflight *oldest, *newest; /* owned: batches on the GPU, oldest first */
	struct inflight *retired;        /* owned: answered; command buffers not yet recycled */
	struct inflight *spare;          /* owned: records kept for reuse */
	size_t spare_count;
	size_t inflight_count;
	struct batch_job **sel;          /* owned: scratch array of max_batch_jobs */
	struct copy_task *copies;        /* owned: scratch array of max_batch_jobs + KERN_MAX_PARTS */
	struct copy_pool *copy_pool;     /* owned, may be NULL: helpers for the input copies */
	struct kern_job *kjobs;          /* owned: scratch array of max_batch_jobs */
	struct batch_job *free_jobs;     /* owned: freed jobs kept for reuse */
	size_t free_count;

	/* Shared with the completion thread, under mu. */
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t wait_values[MAX_IN_FLIGHT]; /* submitted values to wait for, in order */
	uint64_t done_ns[MAX_IN_FLIGHT]; /* when each of them was seen to complete */
	unsigned wait_first, wait_count;
	/* wait_count, for the loop to read without the mutex: a batch the loop answered itself
	 * (process_completions' loop_seen) stays in the queue until this thread pops it, so the
	 * loop submits only while the queue has room (on_check). */
	atomic_uint wait_queued;
	uint64_t done_value;             /* every value <= this has completed */
	bool lost;                       /* gpu_wait reported device loss */
	/* done_value, and UINT64_MAX after a loss, for the polling loop to read without the
	 * mutex: a loop taking the mutex at every turn delays the completion thread. */
	atomic_uint_fast64_t done_hint;
	bool stop;
	atomic_uint_fast64_t submits;    /* batches handed to the thread (read while spinning) */
	uint64_t spin_ns;                /* how long the thread waits for the next batch awake */

	uint64_t rebuild_after_ns;       /* device loss: earliest next attempt after a failure */
	unsigned long fault_restart_fails; /* VKR_FAULT_THREAD_RESTART_FAILS: restarts yet to fail */
};

/* ---- completion thread ----------------------------------------------------------------- */

static void *completion_main(void *arg)
{
	struct batch *b = arg;
	bool may_spin = false;

	pthread_mutex_lock(&b->mu);
	for (;;) {
		uint64_t value;
		int r;

		while (b->wait_count == 0 && !b->stop) {
			/* After a completion, the next batch often follows within microseconds (a
			 * client answered sends its next request): wait for it awake, briefly, so
			 * that its completion is not delayed by this thread's wake-up. */
			if (may_spin && b->spin_ns > 0) {
				uint_fast64_t seen = atomic_load_explicit(&b->submits, memory_order_acquire);
				uint64_t start = vkrd_now_ns();
				may_spin = false;
				pthread_mutex_unlock(&b->mu);
				while (atomic_load_explicit(&b->submits, memory_order_acquire) == seen &&
				       vkrd_now_ns() - start < b->spin_ns)
					cpu_relax();
				pthread_mutex_lock(&b->mu);
				continue;
			}
			pthread_cond_wait(&b->cv, &b->mu);
		}
		may_spin = true;
		if (b->stop)
			break;
		value = b->wait_values[b->wait_first];
		pthread_mutex_unlock(&b->mu);
		r = gpu_wait(b->d->gpu, value, WAIT_SLICE_NS);
		pthread_mutex_lock(&b->mu);
		if (r == -ETIMEDOUT)
			continue;
		if (r == 0) {
			b->done_value = value;
			b->done_ns[b->wait_first] = vkrd_now_ns();
		} else {
			b->lost = true;
		}
		uint64_t hint = b->lost ? UINT64_MAX : b->done_value;
		b->wait_first = (b->wait_first + 1) % MAX_IN_FLIGHT;
		b->wait_count--;
		atomic_store_explicit(&b->wait_queued, b->wait_count, memory_order_release);
		/* The polling loop takes the mutex as soon as it reads the hint, so the hint is
		 * published, and the loop woken, only once the mutex is free: a loop that found it
		 * held slept in the kernel until this thread let go, and a woken thread waits for
		 * the scheduler (3 to 11 us from a completion to its reply on the H200's machines,
		 * against ~2 us now: BENCHMARKS, session 18). */
		pthread_mutex_unlock(&b->mu);
		atomic_store_explicit(&b->done_hint, hint, memory_order_release);
		uv_async_send(&b->async);
		pthread_mutex_lock(&b->mu);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

static void rebuild_device(struct batch *b);
static void loop_spin(struct batch *b);
static void rebase_due(struct batch *b, uint64_t now);
static void arm_due_timer(struct batch *b);

/* ---- queues ---------------------------------------------------------------------------- */

static void schedule(struct batch *b, struct conn *conn, bool front)
{
	if (conn->lane.scheduled)
		return;
	conn->lane.scheduled = true;
	if (front) {
		conn->lane.rr_next = b->rr_head;
		b->rr_head = conn;
		if (!b->rr_tail)
			b->rr_tail = conn;
	} else {
		conn->lane.rr_next = NULL;
		if (b->rr_tail)
			b->rr_tail->lane.rr_next = conn;
		else
			b->rr_head = conn;
		b->rr_tail = conn;
	}
}

void batch_enqueue(struct batch *b, struct batch_job *job)
{
	struct batch_lane *lane = &job->conn->lane;

	job->next = NULL;
	if (lane->tail)
		lane->tail->next = job;
	else
		lane->head = job;
	lane->tail = job;
	lane->count++;
	b->pending++;
	schedule(b, job->conn, false);
}

/* Takes the next job in round-robin order: one from the first connection, which then goes to
 * the back of the line if it has more. */
static struct batch_job *take_next(struct batch *b)
{
	struct conn *conn = b->rr_head;
	struct batch_job *job;

	if (!conn)
		return NULL;
	b->rr_head = conn->lane.rr_next;
	if (!b->rr_head)
		b->rr_tail = NULL;
	conn->lane.scheduled = false;
	conn->lane.rr_next = NULL;
	job = conn->lane.head;
	conn->lane.head = job->next;
	if (!conn->lane.head)
		conn->lane.tail = NULL;
	conn->lane.count--;
	b->pending--;
	job->next = NULL;
	if (conn->lane.count)
		schedule(b, conn, false);
	return job;
}

/* Takes conn out of the round-robin line, if it is in it. */
static void rr_unlink(struct batch *b, struct conn *conn)
{
	if (!conn->lane.scheduled)
		return;
	struct conn **pp = &b->rr_head, *prev = NULL;
	while (*pp != conn) {
		prev = *pp;
		pp = &(*pp)->lane.rr_next;
	}
	*pp = conn->lane.rr_next;
	if (b->rr_tail == conn)
		b->rr_tail = prev;
	conn->lane.scheduled = false;
}

/* Puts a job back at the front of its lane and its connection at the front of the line. */
static void untake(struct batch *b, struct batch_job *job)
{
	struct conn *conn = job->conn;

	if (conn->closing) {
		/* Its connection closed meanwhile (an error reply to another of its jobs can
		 * close a slow reader): nobody waits for this job, so drop it, not requeue it. */
		b->d->stats.jobs_dropped++;
		batch_job_free(b->d, job);
		return;
	}
	job->next = conn->lane.head;
	conn->lane.head = job;
	if (!conn->lane.tail)
		conn->lane.tail = job;
	conn->lane.count++;
	b->pending++;
	rr_unlink(b, conn); /* to move it to the front */
	schedule(b, conn, true);
}

/* Jobs kept for reuse: enough for a full window of many clients without malloc. */
#define FREE_JOBS_MAX 8192

struct batch_job *batch_job_alloc(struct batch *b)
{
	struct batch_job *job = b->free_jobs;

	if (!job)
		return calloc(1, sizeof(*job));
	b->free_jobs = job->next;
	b->free_count--;
	memset(job, 0, sizeof(*job));
	return job;
}

void batch_job_free(struct vkrd *d, struct batch_job *job)
{
	struct conn *conn = job->conn;
	struct batch *b = d->batch;

	conn->requests_in_flight--;
	conn->bytes_in_flight -= job->charged_bytes;
	d->stats.memory_bytes -= job->charged_bytes;
	rxbuf_unref(job->rx);
	shm_region_unref(job->src_region);
	shm_region_unref(job->dst_region);
	if (job->own_src.size)
		gpu_buffer_destroy(d->gpu, &job->own_src);
	if (job->own_dst.size)
		gpu_buffer_destroy(d->gpu, &job->own_dst);
	if (job->own_scratch.size)
		gpu_buffer_destroy(d->gpu, &job->own_scratch);
	if (job->parts) {
		for (uint32_t i = 0; i < job->parts->count; i++) {
			gpu_buffer_destroy(d->gpu, &job->parts->own_src[i]);
			gpu_buffer_destroy(d->gpu, &job->parts->own_dst[i]);
		}
		free(job->parts);
		job->parts = NULL;
	}
	if (b && b->free_count < FREE_JOBS_MAX) {
		job->next = b->free_jobs;
		b->free_jobs = job;
		b->free_count++;
	} else {
		free(job);
	}
	conn_unref(conn);
}

void batch_drop_conn(struct batch *b, struct conn *conn)
{
	struct batch_job *job;

	rr_unlink(b, conn);
	/* Queued jobs never reach the GPU; freeing one may drop the last reference to conn
	 * only after the loop, because the socket still holds its own. */
	while ((job = conn->lane.head)) {
		conn->lane.head = job->next;
		conn->lane.count--;
		b->pending--;
		b->d->stats.jobs_dropped++;
		batch_job_free(b->d, job);
	}
	conn->lane.tail = NULL;
}

bool batch_idle(const struct batch *b)
{
	return b->pending == 0 && b->inflight_count == 0;
}

/* ---- placement ------------------------------------------------------------------------- */

/* Allocates from a ring, or (too big for it, or force) a buffer of the job's own.
 * Returns 0, -EAGAIN (ring full for now) or another -errno. */
static int alloc_space(struct batch *b, struct gpu_ring *ring, struct gpu_buffer *own,
		       enum gpu_memory_kind kind, uint64_t bytes, uint64_t align, bool force,
		       uint64_t *address, void **host)
{
	uint64_t offset;
	int r;

	if (own->size == 0) {
		r = gpu_ring_alloc(ring, bytes, align, &offset);
		if (r == 0) {
			*address = ring->buffer.address + offset;
			*host = ring->buffer.map ? (char *)ring->buffer.map + offset : NULL;
			return 0;
		}
		if ((r == -EAGAIN || r == -EBUSY) && !force)
			return -EAGAIN;
		if (r != -E2BIG && r != -EAGAIN && r != -EBUSY)
			return r;
		/* A large upload of its own goes to host RAM: the CPU writes the BAR memory that
		 * the upload ring prefers at a few GB/s only (measured 3.6 GB/s end to end). */
		enum gpu_memory_kind own_kind = kind == GPU_MEMORY_UPLOAD && bytes >= (16u << 20)
							? GPU_MEMORY_STAGING : kind;
		r = gpu_buffer_create(b->d->gpu, bytes, own_kind, own);
		if (r && own_kind != kind) /* host RAM can be scarce for the driver (pinned) */
			r = gpu_buffer_create(b->d->gpu, bytes, kind, own);
		if (r)
			return r;
		b->d->stats.dedicated_buffers++;
	}
	*address = own->address;
	*host = own->map;
	return 0;
}

uint64_t batch_max_array_bytes(const struct gpu *gpu)
{
	/* Within 15 * part_bytes, each side (input, output) has at most 15 buffer ends (pieces of
	 * an imported region, or buffers of the job's own): 1 + 2 * 15 parts at most. */
	return (uint64_t)(KERN_MAX_PARTS / 2 - 1) * gpu_array_part_bytes(gpu);
}

/* Elements from element pos of an array to the end of the buffer that holds it: a piece of
 * an imported region, or else a buffer of the job's own, one every part_bytes. */
static uint64_t run_to_buffer_end(const struct shm_region *region, uint64_t offset, uint64_t pos,
				  uint64_t esize, uint64_t part_bytes)
{
	if (region && region->imported) {
		uint64_t contiguous;
		shm_region_address(region, offset + pos * esize, &contiguous);
		return contiguous / esize;
	}
	return (part_bytes - pos * esize % part_bytes) / esize;
}

/* Whether one side of a job (its input, or a scan's output) lies in one buffer: within one
 * piece of an imported region, or else within the limit of a buffer of its own. */
static bool side_fits(const struct shm_region *region, uint64_t offset, uint64_t bytes, uint64_t limit)
{
	uint64_t contiguous;
	if (!region || !region->imported)
		return bytes <= limit;
	shm_region_address(region, offset, &contiguous);
	return contiguous >= bytes;
}

/* Whether the job's input and (for a scan) output each lie in one buffer. */
static bool fits_one_buffer(const struct gpu *gpu, const struct batch_job *job)
{
	const struct kern_job *k = &job->kern;
	uint64_t bytes = k->n * proto_dtype_size(k->dtype);
	uint64_t limit = gpu_get_info(gpu)->array_buffer_limit;
	if (bytes == 0)
		return true;
	return side_fits(job->src_region, job->src_offset, bytes, limit) &&
	       (k->kind != KERN_SCAN || side_fits(job->dst_region, job->dst_offset, bytes, limit));
}

/* Splits the job's array where a buffer of its input or output ends and gives each part its
 * addresses: in an imported region, or in buffers of the job's own (host memory, as for a
 * large input or output of one buffer). Placed once: a job placed again keeps its parts. */
static int place_parts(struct batch *b, struct batch_job *job)
{
	struct kern_job *k = &job->kern;
	struct gpu *gpu = b->d->gpu;
	uint64_t esize = proto_dtype_size(k->dtype);
	uint64_t part_bytes = gpu_array_part_bytes(gpu);
	struct batch_parts *p = job->parts;
	int r;

	if (p) {
		k->parts = p->kern;
		k->part_count = p->count;
		return 0;
	}
	p = job->parts = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (uint64_t pos = 0; pos < k->n; p->count++) {
		if (p->count == KERN_MAX_PARTS)
			return -E2BIG; /* batch_max_array_bytes() keeps requests below this */
		uint64_t len = k->n - pos;
		uint64_t run = run_to_buffer_end(job->src_region, job->src_offset, pos, esize, part_bytes);
		if (run < len)
			len = run;
		if (k->kind == KERN_SCAN) {
			run = run_to_buffer_end(job->dst_region, job->dst_offset, pos, esize, part_bytes);
			if (run < len)
				len = run;
		}
		p->first[p->count] = pos;
		p->kern[p->count].n = len;
		pos += len;
	}
	for (uint32_t i = 0; i < p->count; i++) {
		struct kern_part *part = &p->kern[i];
		uint64_t at = p->first[i] * esize, bytes = part->n * esize, contiguous;
		if (job->src_region && job->src_region->imported) {
			part->src = shm_region_address(job->src_region, job->src_offset + at, &contiguous);
		} else {
			/* Host RAM, as for any large input (alloc_space), else host-visible memory. */
			r = gpu_buffer_create(gpu, bytes, GPU_MEMORY_STAGING, &p->own_src[i]);
			if (r)
				r = gpu_buffer_create(gpu, bytes, GPU_MEMORY_UPLOAD, &p->own_src[i]);
			if (r)
				return r;
			b->d->stats.dedicated_buffers++;
			part->src = p->own_src[i].address;
		}
		if (k->kind != KERN_SCAN)
			continue;
		if (job->dst_region && job->dst_region->imported) {
			part->dst = shm_region_address(job->dst_region, job->dst_offset + at, &contiguous);
		} else {
			r = gpu_buffer_create(gpu, bytes, GPU_MEMORY_READBACK, &p->own_dst[i]);
			if (r)
				return r;
			b->d->stats.dedicated_buffers++;
			part->dst = p->own_dst[i].address;
		}
	}
	k->parts = p->kern;
	k->part_count = p->count;
	return 0;
}

/* Gives the job its input, output and scratch addresses. force: make room with buffers of
 * the job's own when a ring is full (used when nothing else could free ring space). */
static int place(struct batch *b, struct batch_job *job, bool force)
{
	struct kern_job *k = &job->kern;
	uint64_t esize = proto_dtype_size(k->dtype);
	uint64_t bytes = k->n * esize;
	uint64_t scratch_bytes;
	void *host = NULL;
	bool in_parts = job->parts || !fits_one_buffer(b->d->gpu, job);
	int r;

	if (in_parts) {
		r = place_parts(b, job);
		if (r)
			return r;
		job->src_host = NULL;
		job->dst_host = NULL;
	}
	/* Output first: the reduce slot's address also serves as the input of an empty
	 * reduction, which reads nothing. */
	if (k->kind == KERN_REDUCE) {
		/* A result area that every workgroup's atomics reach (kern.h) in upload memory,
		 * device-local where the atomic tails run; the others in readback memory, which
		 * the CPU reads from its cache. Zero, as kern_job.dst must be. */
		uint64_t result_bytes = kern_result_bytes(b->d->gpu, k);
		if (kern_result_by_atomics(b->d->gpu, k))
			r = alloc_space(b, &b->upload, &job->own_dst, GPU_MEMORY_UPLOAD, result_bytes, 8, force,
					&k->dst, &host);
		else
			r = alloc_space(b, &b->readback, &job->own_dst, GPU_MEMORY_READBACK, result_bytes, 8, force,
					&k->dst, &host);
		if (r == 0)
			memset(host, 0, result_bytes);
		job->dst_host = host;
	} else if (in_parts) {
		r = 0;
	} else if (job->dst_region && job->dst_region->imported) {
		uint64_t contiguous;
		k->dst = shm_region_address(job->dst_region, job->dst_offset, &contiguous);
		job->dst_host = (char *)job->dst_region->map + job->dst_offset;
		r = 0;
	} else {
		r = alloc_space(b, &b->readback, &job->own_dst, GPU_MEMORY_READBACK, bytes, 16, force, &k->dst,
				&host);
		job->dst_host = host;
	}
	if (r)
		return r;

	if (in_parts) {
		/* placed by place_parts */
	} else if (bytes == 0) {
		k->src = k->dst;
		job->src_host = NULL;
	} else if (job->src_region && job->src_region->imported) {
		uint64_t contiguous;
		k->src = shm_region_address(job->src_region, job->src_offset, &contiguous);
		job->src_host = NULL;
	} else {
		r = alloc_space(b, &b->upload, &job->own_src, GPU_MEMORY_UPLOAD, bytes, 16, force, &k->src, &host);
		if (r)
			return r;
		job->src_host = host;
	}

	/* A scan's output always lands in host memory (an imported region or the readback ring),
	 * written over the bus: the kernels then move whole tiles, contiguously. */
	k->host_memory = k->kind == KERN_SCAN;
	scratch_bytes = kern_scratch_bytes(b->d->gpu, k);
	k->scratch = 0;
	if (scratch_bytes > 0) {
		r = alloc_space(b, &b->scratch, &job->own_scratch, GPU_MEMORY_DEVICE, scratch_bytes, 16, force,
				&k->scratch, &host);
		if (r)
			return r;
	}
	return 0;
}

static void rollback_rings(struct batch *b)
{
	gpu_ring_rollback(&b->upload);
	gpu_ring_rollback(&b->readback);
	gpu_ring_rollback(&b->scratch);
}

/* Answers a job that could not run and frees it. */
static void fail_job(struct batch *b, struct batch_job *job, int code, const char *what)
{
	if (!job->conn->closing)
		conn_reply_error(job->conn, job->msgid, code, "%s", what);
	batch_job_free(b->d, job);
}

/* ---- submission ------------------------------------------------------------------------ */

static void fail_all(struct batch *b, struct batch_job **jobs, size_t count, int code, const char *what)
{
	for (size_t i = 0; i < count; i++)
		fail_job(b, jobs[i], code, what);
}

/* A batch that will not run: frees its flight record (may be NULL), gives back the ring space
 * its jobs took, and answers each of them. */
static void drop_batch(struct batch *b, struct inflight *f, size_t count, int code, const char *what)
{
	if (f)
		free(f->jobs);
	free(f);
	rollback_rings(b);
	fail_all(b, b->sel, count, code, what);
}

size_t batch_fail_queued(struct batch *b, int code, const char *what)
{
	struct batch_job *job;
	size_t n = 0;

	while ((job = take_next(b))) {
		fail_job(b, job, code, what);
		n++;
	}
	return n;
}

/* Records and submits one batch. Returns the number of jobs submitted, 0 when none could be
 * placed now (rings full until a batch completes), or -errno. */
static int submit_one(struct batch *b)
{
	struct vkrd *d = b->d;
	struct gpu *gpu = d->gpu;
	struct inflight *f;
	struct gpu_cmd *cmd;
	bool force0 = b->inflight_count == 0;
	bool multi = false;
	uint64_t now, value;
	size_t count = 0;
	int r;

	while (count < d->limits.max_batch_jobs) {
		struct batch_job *job = take_next(b);
		if (!job)
			break;
		r = place(b, job, count == 0 && force0);
		if (r == -EAGAIN) {
			untake(b, job);
			/* The refused job may hold partial ring space; only a full rollback can drop
			 * it, so place the accepted jobs again (same sizes, same order, same ring
			 * state: the same offsets). */
			rollback_rings(b);
			for (size_t i = 0; i < count; i++) {
				if (place(b, b->sel[i], i == 0 && force0) != 0) {
					log_error("batch: re-placing %zu jobs failed; retrying later", count);
					rollback_rings(b);
					while (count > 0)
						untake(b, b->sel[--count]);
					return 0;
				}
			}
			break;
		}
		if (r) {
			char what[160];
			if (r == -E2BIG) /* batch_max_array_bytes() keeps requests from this */
				snprintf(what, sizeof(what), "src: %" PRIu64 " elements need more than %u buffers",
					 job->kern.n, KERN_MAX_PARTS);
			else
				snprintf(what, sizeof(what), "src: no device memory for %" PRIu64 " elements (%s)",
					 job->kern.n, strerror(-r));
			fail_job(b, job, VKR_WIRE_TOO_LARGE, what);
			continue;
		}
		b->sel[count++] = job;
	}
	if (count == 0) {
		rollback_rings(b);
		return 0;
	}

	uint64_t t_copy = now = vkrd_now_ns();
	size_t ncopies = 0;
	for (size_t i = 0; i < count; i++) {
		struct batch_job *job = b->sel[i];
		uint64_t esize = proto_dtype_size(job->kern.dtype), bytes = job->kern.n * esize;
		const char *from = job->src_region ? (const char *)job->src_region->map + job->src_offset
						   : job->inline_data;
		size_t need = (job->src_host && bytes > 0) + (job->parts ? job->parts->count : 0);
		/* The copies array has room for a batch of jobs and one job's parts: run what it
		 * holds when this job's copies would not fit. */
		if (ncopies + need > d->limits.max_batch_jobs + KERN_MAX_PARTS) {
			copy_pool_run(b->copy_pool, b->copies, ncopies);
			ncopies = 0;
		}
		if (job->src_host && bytes > 0)
			b->copies[ncopies++] = (struct copy_task){
				.dst = job->src_host, .src = from, .bytes = (size_t)bytes,
			};
		if (!job->parts)
			continue;
		for (uint32_t p = 0; p < job->parts->count; p++)
			if (job->parts->own_src[p].size)
				b->copies[ncopies++] = (struct copy_task){
					.dst = job->parts->own_src[p].map,
					.src = from + job->parts->first[p] * esize,
					.bytes = (size_t)(job->parts->kern[p].n * esize),
				};
	}
	copy_pool_run(b->copy_pool, b->copies, ncopies);
	for (size_t i = 0; i < count; i++) {
		struct batch_job *job = b->sel[i];
		uint64_t queued = now - job->enqueue_ns;
		/* The inline bytes are in the staging ring now: the receive buffer may be reused. */
		if (job->rx) {
			rxbuf_unref(job->rx);
			job->rx = NULL;
			job->inline_data = NULL;
		}
		job->submit_ns = now;
		b->kjobs[i] = job->kern;
		multi |= job->conn != b->sel[0]->conn;
		d->stats.queue_ns += queued;
		if (queued > d->stats.queue_ns_max)
			d->stats.queue_ns_max = queued;
	}

	f = b->spare;
	if (f) {
		b->spare = f->next;
		b->spare_count--;
	} else {
		f = calloc(1, sizeof(*f));
	}
	if (f && f->cap < count) {
		struct batch_job **jobs = realloc(f->jobs, count * sizeof(*f->jobs));
		if (jobs) {
			f->jobs = jobs;
			f->cap = count;
		}
	}
	if (!f || f->cap < count) {
		drop_batch(b, f, count, VKR_WIRE_INTERNAL, "out of memory");
		return -ENOMEM;
	}
	f->next = NULL;
	f->lost = false;
	f->done_ns = 0;
	uint64_t t_record = vkrd_now_ns();
	d->stats.loop_copy_ns += t_record - t_copy;
	r = gpu_cmd_begin(gpu, &cmd);
	if (r) {
		drop_batch(b, f, count, VKR_WIRE_INTERNAL, "could not begin a command buffer");
		return r;
	}
	r = kern_record(gpu, cmd, b->kjobs, count);
	uint64_t t_submit = vkrd_now_ns();
	d->stats.loop_record_ns += t_submit - t_record;
	if (r) {
		/* The small jobs' table had no memory (retryable), or a pipeline built on first use
		 * failed (compile_on_first_use; logged by the engine). The device is fine. */
		gpu_cmd_abandon(gpu, cmd);
		log_error("batch: recording %zu jobs failed: %s", count, strerror(-r));
		drop_batch(b, f, count, r == -ENOMEM ? VKR_WIRE_BUSY : VKR_WIRE_INTERNAL,
			   r == -ENOMEM ? "out of memory; retry later" : "a kernel could not be built; see the daemon's log");
		return r;
	}
	r = gpu_cmd_submit(gpu, cmd, &value);
	d->stats.loop_submit_ns += vkrd_now_ns() - t_submit;
	if (r) {
		d->stats.device_lost += r != -ENOMEM;
		log_error("batch: submit of %zu jobs failed: %s", count, strerror(-r));
		/* Both answers are retryable: out of memory passes, a lost device is rebuilt. */
		drop_batch(b, f, count, r == -ENOMEM ? VKR_WIRE_BUSY : VKR_WIRE_DEVICE_LOST,
			   r == -ENOMEM ? "submit: out of memory; retry later" : "the device was lost; retry later");
		return r;
	}
	if (gpu_ring_fence(&b->upload, value) || gpu_ring_fence(&b->readback, value) ||
	    gpu_ring_fence(&b->scratch, value))
		log_error("batch: ring fence failed; ring space may be reclaimed late");
	memcpy(f->jobs, b->sel, count * sizeof(*f->jobs));
	f->count = count;
	f->cmd = cmd;
	f->value = value;
	memset(f->bytes, 0, sizeof(f->bytes));
	for (size_t i = 0; i < count; i++)
		batch_predict_count(f->bytes, &b->kjobs[i]);
	f->expect_ns = f->due_ns = f->margin_ns = 0;
	uint64_t expect = b->predict_on ? batch_predict_ns(&b->predict, f->bytes) : 0;
	/* A batch expected to end within the loop's own poll after this submission needs none:
	 * at 1 MiB (28 us on an H100 host) predicting it changed nothing (run S41-11). */
	if (expect > b->loop_spin_ns) {
		/* The GPU runs batches in order: this one starts when the one before it ends, or
		 * now, after its copies, recording and submission. */
		uint64_t submitted = vkrd_now_ns();
		uint64_t start = b->oldest && b->gpu_free_ns > submitted ? b->gpu_free_ns : submitted;
		f->expect_ns = expect;
		f->due_ns = b->gpu_free_ns = start + expect;
		f->margin_ns = batch_predict_margin_ns(expect);
		d->stats.batches_predicted++;
	}
	if (b->newest)
		b->newest->next = f;
	else
		b->oldest = f;
	b->newest = f;
	b->inflight_count++;
	stats_count_batch(&d->stats, count, multi ? 2 : 1);

	pthread_mutex_lock(&b->mu);
	f->slot = (b->wait_first + b->wait_count) % MAX_IN_FLIGHT;
	b->wait_values[f->slot] = value;
	b->wait_count++;
	atomic_store_explicit(&b->wait_queued, b->wait_count, memory_order_release);
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	/* After the unlock: the spinning completion thread takes the mutex as soon as it sees
	 * the count move, and would sleep on it if this thread still held it. */
	atomic_fetch_add_explicit(&b->submits, 1, memory_order_release);
	loop_spin(b);
	arm_due_timer(b);
	return (int)count;
}

static int start_thread(struct batch *b, bool restart);
static struct log_ratelimit thread_rl = LOG_RATELIMIT_INIT(5);

static void on_check(uv_check_t *handle)
{
	struct batch *b = handle->data;
	struct vkrd *d = b->d;

	/* A completion thread that could not start after a device rebuild (pthread_create
	 * failed) is tried again; while it cannot run, nothing submitted would be answered, so
	 * the queued requests are answered "busy" instead of waiting for ever. */
	if (b->pending > 0 && !b->thread_started && !gpu_is_lost(d->gpu)) {
		int r = start_thread(b, true);
		if (r) {
			struct batch_job *job;
			if (log_ratelimit_ok(&thread_rl))
				log_error("the completion thread does not start: %s; answering 'busy'", strerror(r));
			while ((job = take_next(b)))
				fail_job(b, job, VKR_WIRE_BUSY, "the daemon cannot start a thread now; retry later");
		} else {
			log_info("the completion thread started");
		}
	}
	while (b->pending > 0 && b->inflight_count < d->limits.max_batches_in_flight &&
	       atomic_load_explicit(&b->wait_queued, memory_order_acquire) < MAX_IN_FLIGHT &&
	       !gpu_is_lost(d->gpu) && b->thread_started) {
		if (submit_one(b) <= 0)
			break;
	}
	if (gpu_is_lost(d->gpu)) {
		struct batch_job *job;
		while ((job = take_next(b)))
			fail_job(b, job, VKR_WIRE_DEVICE_LOST, "the device was lost; retry later");
		/* The answers go out before the rebuild, which builds every pipeline (a second
		 * or more), not after it. */
		conn_flush_dirty(d);
		rebuild_device(b);
	}
	conn_flush_dirty(d);
	/* Memory freed in this turn (replies written, work done, connections closed) lets
	 * connections that wait to receive a large message read again. */
	conn_admit_waiting(d, false);
	/* Work can end here without a completion (a failed submit or placement, a lost device,
	 * a client that closed with jobs queued): the drain must not wait for one. */
	if (d->shutting_down && batch_idle(b) && d->on_idle)
		d->on_idle(d);
}

/* ---- completion ------------------------------------------------------------------------ */

/* msgpack encoders for the reduce reply, which is built without the packer's callbacks. */
static char *put_be(char *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (char)(v >> (8 * (bytes - 1 - i)));
	return p + bytes;
}

static char *put_uint(char *p, uint64_t v)
{
	if (v < 128) {
		*p++ = (char)v;
		return p;
	}
	if (v <= UINT8_MAX) {
		*p++ = (char)0xcc;
		return put_be(p, v, 1);
	}
	if (v <= UINT16_MAX) {
		*p++ = (char)0xcd;
		return put_be(p, v, 2);
	}
	if (v <= UINT32_MAX) {
		*p++ = (char)0xce;
		return put_be(p, v, 4);
	}
	*p++ = (char)0xcf;
	return put_be(p, v, 8);
}

static char *put_int(char *p, int64_t v)
{
	if (v >= 0)
		return put_uint(p, (uint64_t)v);
	if (v >= -32) {
		*p++ = (char)(uint8_t)(int8_t)v;
		return p;
	}
	if (v >= INT8_MIN) {
		*p++ = (char)0xd0;
		return put_be(p, (uint64_t)v, 1);
	}
	if (v >= INT16_MIN) {
		*p++ = (char)0xd1;
		return put_be(p, (uint64_t)v, 2);
	}
	if (v >= INT32_MIN) {
		*p++ = (char)0xd2;
		return put_be(p, (uint64_t)v, 4);
	}
	*p++ = (char)0xd3;
	return put_be(p, (uint64_t)v, 8);
}

/* Most bytes a reduce reply takes: array, msgid, nil, map with two keys and two values. */
#define REDUCE_REPLY_MAX 48

/* Encodes [1, msgid, nil, {"value": v, "count": n}] at p; returns the end. */
static char *encode_reduce_reply(char *p, uint32_t msgid, const struct kern_job *k, vkr_value v)
{
	*p++ = (char)0x94;
	*p++ = 0x01;
	p = put_uint(p, msgid);
	*p++ = (char)0xc0;
	*p++ = (char)0x82;
	memcpy(p, "\xa5" "value", 6);
	p += 6;
	if (k->op == VKR_OP_COUNT) {
		p = put_uint(p, v.u64);
	} else {
		uint32_t u32;
		uint64_t u64;
		switch (k->dtype) {
		case VKR_DTYPE_F32:
			memcpy(&u32, &v.f32, 4);
			*p++ = (char)0xca;
			p = put_be(p, u32, 4);
			break;
		case VKR_DTYPE_F64:
			memcpy(&u64, &v.f64, 8);
			*p++ = (char)0xcb;
			p = put_be(p, u64, 8);
			break;
		case VKR_DTYPE_I32: p = put_int(p, v.i32); break;
		case VKR_DTYPE_U32: p = put_uint(p, v.u32); break;
		case VKR_DTYPE_I64: p = put_int(p, v.i64); break;
		default: p = put_uint(p, v.u64); break;
		}
	}
	memcpy(p, "\xa5" "count", 6);
	p += 6;
	return put_uint(p, k->n);
}

/* Copies a scan's output from where the device wrote it (not an imported region) to dst. */
static void copy_result(const struct batch_job *job, char *dst)
{
	uint64_t esize = proto_dtype_size(job->kern.dtype);
	if (!job->parts) {
		memcpy(dst, job->dst_host, job->kern.n * esize);
		return;
	}
	for (uint32_t p = 0; p < job->parts->count; p++)
		memcpy(dst + job->parts->first[p] * esize, job->parts->own_dst[p].map,
		       job->parts->kern[p].n * esize);
}

static void reply_job(const struct gpu *gpu, struct batch_job *job)
{
	struct conn *conn = job->conn;
	const struct kern_job *k = &job->kern;
	uint64_t bytes = k->n * proto_dtype_size(k->dtype);
	msgpack_packer *pk;

	if (conn->closing)
		return;
	if (k->kind == KERN_REDUCE) {
		vkr_value v = kern_result_decode(gpu, k, job->dst_host);
		char *p = conn_reply_raw_begin(conn, REDUCE_REPLY_MAX);
		conn_reply_raw_end(conn, p ? (size_t)(encode_reduce_reply(p, job->msgid, k, v) - p) : 0);
		return;
	}
	if (job->dst_region) {
		/* Without host import the result went through the readback ring, or buffers of
		 * the job's own. */
		if (!job->dst_region->imported)
			copy_result(job, (char *)job->dst_region->map + job->dst_offset);
		pk = conn_reply_begin(conn, job->msgid);
		msgpack_pack_map(pk, 1);
		stats_pack_str(pk, "count");
		msgpack_pack_uint64(pk, k->n);
		conn_reply_end(conn);
		return;
	}
	pk = conn_reply_begin(conn, job->msgid);
	msgpack_pack_map(pk, 1);
	stats_pack_str(pk, "data");
	msgpack_pack_bin(pk, (size_t)bytes);
	if (!job->parts) {
		msgpack_pack_bin_body(pk, job->dst_host, (size_t)bytes);
	} else {
		uint64_t esize = proto_dtype_size(k->dtype);
		for (uint32_t p = 0; p < job->parts->count; p++)
			msgpack_pack_bin_body(pk, job->parts->own_dst[p].map, (size_t)(job->parts->kern[p].n * esize));
	}
	conn_reply_end(conn);
}

/* Answers the jobs of the oldest batch and moves it to the retired list. */
static void complete(struct batch *b, struct inflight *f, bool lost, uint64_t wake_ns)
{
	struct vkrd *d = b->d;

	if (lost)
		d->stats.device_lost++;
	for (size_t i = 0; i < f->count; i++) {
		if (lost)
			fail_job(b, f->jobs[i], VKR_WIRE_DEVICE_LOST, "the device was lost");
		else {
			struct batch_job *job = f->jobs[i];
			if (f->done_ns && wake_ns) {
				d->stats.req_queue_ns += job->submit_ns - job->enqueue_ns;
				d->stats.req_gpu_ns += f->done_ns > job->submit_ns ? f->done_ns - job->submit_ns : 0;
				d->stats.req_wake_ns += wake_ns > f->done_ns ? wake_ns - f->done_ns : 0;
				d->stats.req_timed++;
			}
			reply_job(d->gpu, job);
			batch_job_free(d, job);
		}
	}
	b->oldest = f->next;
	if (!b->oldest)
		b->newest = NULL;
	b->inflight_count--;
	f->lost = lost;
	f->next = b->retired;
	b->retired = f;
}

/* Reads the GPU times of answered batches and recycles their command buffers. Done after
 * the replies are written: reading query results can take microseconds (16 us on lavapipe). */
static void retire(struct batch *b)
{
	struct vkrd *d = b->d;

	while (b->retired) {
		struct inflight *f = b->retired;
		b->retired = f->next;
		if (!f->lost) {
			uint64_t ns = gpu_cmd_elapsed_ns(d->gpu, f->cmd);
			batch_predict_learn(&b->predict, f->bytes, ns);
			d->stats.gpu_ns += ns;
			if (ns > d->stats.gpu_ns_max)
				d->stats.gpu_ns_max = ns;
		}
		gpu_cmd_recycle(d->gpu, f->cmd);
		f->cmd = NULL;
		if (b->spare_count < MAX_IN_FLIGHT) {
			f->next = b->spare;
			b->spare = f;
			b->spare_count++;
		} else {
			free(f->jobs);
			free(f);
		}
	}
}

/* Answers every batch that completed, writes the replies, then does the bookkeeping.
 * loop_seen: a timeline value the polling loop read from the GPU itself (0: none), which
 * may be ahead of the completion thread's. */
static void process_completions(struct batch *b, uint64_t loop_seen)
{
	struct vkrd *d = b->d;
	uint64_t done, wake_ns = vkrd_now_ns(), timed0 = d->stats.req_timed, written_ns;
	bool lost;

	pthread_mutex_lock(&b->mu);
	done = b->done_value;
	lost = b->lost;
	for (struct inflight *f = b->oldest; f && f->value <= done; f = f->next)
		f->done_ns = b->done_ns[f->slot];
	pthread_mutex_unlock(&b->mu);
	/* Batches the loop saw complete before the completion thread did: their done_ns slots
	 * are not written yet, so they count as seen now (no wake-up). The thread still waits
	 * for them, finds them done and wakes the loop, which then has nothing to answer. */
	for (struct inflight *f = b->oldest; f && f->value > done && f->value <= loop_seen; f = f->next) {
		f->done_ns = wake_ns;
		d->stats.batches_seen_by_loop++;
	}
	if (loop_seen > done)
		done = loop_seen;
	if (!b->oldest || (b->oldest->value > done && !lost))
		return; /* already answered (the loop was polling) */
	while (b->oldest && (b->oldest->value <= done || lost))
		complete(b, b->oldest, b->oldest->value > done, wake_ns);
	rebase_due(b, wake_ns);
	loop_spin(b);
	arm_due_timer(b);
	/* Replies first; the bookkeeping below is off the clients' critical path. */
	conn_flush_dirty(d);
	/* Replies of the jobs timed above are in their sockets (or buffered for a slow reader). */
	written_ns = vkrd_now_ns();
	d->stats.req_reply_ns += (d->stats.req_timed - timed0) * (written_ns - wake_ns);
	retire(b);
	/* The GPU completed work: the watchdog may be fed (notify.c). */
	if (!lost)
		notify_progress(d->notify);
	gpu_ring_reclaim(&b->upload, done);
	gpu_ring_reclaim(&b->readback, done);
	gpu_ring_reclaim(&b->scratch, done);
	if (gpu_is_lost(d->gpu))
		rebuild_device(b);
	d->stats.loop_complete_ns += vkrd_now_ns() - wake_ns;
	if (d->shutting_down && batch_idle(b) && d->on_idle)
		d->on_idle(d);
}

static void on_async(uv_async_t *handle)
{
	process_completions(handle->data, 0);
}

/* While the loop polls (VKR_LOOP_SPIN_US after a submission or a completion), a completed
 * batch is answered without waiting for the completion thread's wake-up of the loop, and a
 * client's next request is read without the loop's own wake-up. The loop reads the GPU's
 * timeline itself rather than only the completion thread's hint, so that its answer does
 * not wait for that thread to be scheduled: on one H100 host some daemons paid ~24 us per
 * request between the thread seeing a batch complete and the polling loop answering it
 * (BENCHMARKS, session 34, run S34-6). */
static void on_loop_idle(uv_idle_t *handle)
{
	struct batch *b = handle->data;
	/* Only a turn that read nothing since the last asks the GPU: while clients keep the
	 * loop reading, the driver call on every turn is loop time taken from them, and a batch
	 * completing then is answered as soon as the loop stops reading, or by the completion
	 * thread. A precaution whose gain is unmeasured: on H100 hosts (BENCHMARKS, session 36)
	 * the lone client kept its p50 (run S36-3), and 32 pipelining clients showed no
	 * difference beyond the spread between daemons, with reads on every turn, on quiet
	 * turns or on none (S36-3). */
	bool quiet_turn = b->d->stats.bytes_in == b->idle_bytes_in;

	b->idle_bytes_in = b->d->stats.bytes_in;
	if (b->oldest) {
		if (b->oldest->value <= atomic_load_explicit(&b->done_hint, memory_order_acquire))
			process_completions(b, 0);
		else if (quiet_turn) {
			uint64_t seen = gpu_completed_value(b->d->gpu);
			/* A device reported lost is left to the completion thread's wait, which
			 * fails the batches. */
			if (b->oldest->value <= seen && !gpu_is_lost(b->d->gpu))
				process_completions(b, seen);
		}
	}
	if (vkrd_now_ns() >= b->loop_spin_until) {
		uv_idle_stop(&b->idle);
		b->idle_active = false;
	}
}

/* Keeps the loop polling until at least the given time. */
static void loop_spin_until(struct batch *b, uint64_t until)
{
	if (b->loop_spin_ns == 0 || !b->handles_open)
		return;
	if (until > b->loop_spin_until)
		b->loop_spin_until = until;
	if (!b->idle_active) {
		b->idle_bytes_in = b->d->stats.bytes_in; /* the first idle turn may be a quiet one */
		uv_idle_start(&b->idle, on_loop_idle);
		b->idle_active = true;
	}
}

/* Keeps the loop polling for loop_spin_ns from now. */
static void loop_spin(struct batch *b)
{
	loop_spin_until(b, vkrd_now_ns() + b->loop_spin_ns);
}

/* Batches answered just now ended by now: those still in flight start from here, one after
 * another, rather than from their predecessors' predicted ends, so that an error in one
 * prediction does not carry into the next ones. */
static void rebase_due(struct batch *b, uint64_t now)
{
	uint64_t t = now;
	for (struct inflight *f = b->oldest; f; f = f->next)
		if (f->expect_ns) {
			f->due_ns = t + f->expect_ns;
			t = f->due_ns;
		}
	b->gpu_free_ns = t;
}

/* The oldest batch's expected end is near: poll through it (the polling loop answers the
 * batch as soon as the GPU's timeline shows it done). A timer that fired early (libuv
 * counts from its loop's cached time) is set again. */
static void on_due_timer(uv_timer_t *handle)
{
	struct batch *b = handle->data;
	struct inflight *f = b->oldest;
	if (!f || !f->due_ns)
		return;
	if (f->due_ns > f->margin_ns + 1000000 && vkrd_now_ns() < f->due_ns - f->margin_ns - 1000000) {
		arm_due_timer(b);
		return;
	}
	loop_spin_until(b, f->due_ns + f->margin_ns);
}

/* Starts the loop polling a margin before the oldest batch's expected end, now if that is
 * already past. libuv's timers count whole milliseconds, so the timer is set to fire up to
 * a millisecond early rather than late. */
static void arm_due_timer(struct batch *b)
{
	if (!b->predict_on || !b->handles_open)
		return;
	struct inflight *f = b->oldest;
	if (!f || !f->due_ns) {
		uv_timer_stop(&b->due_timer);
		return;
	}
	uint64_t now = vkrd_now_ns(), from = f->due_ns > f->margin_ns ? f->due_ns - f->margin_ns : 0;
	if (from <= now) {
		uv_timer_stop(&b->due_timer);
		loop_spin_until(b, f->due_ns + f->margin_ns);
		return;
	}
	uv_update_time(b->d->loop); /* the timeout counts from the loop's time: make it now */
	if (uv_timer_start(&b->due_timer, on_due_timer, (from - now) / 1000000, 0) != 0)
		loop_spin_until(b, f->due_ns + f->margin_ns); /* no timer: poll from now */
}

/* ---- life cycle ------------------------------------------------------------------------ */

/* Creates the three rings on gpu; on failure none is left. */
static int rings_init(struct gpu *gpu, const struct limits *l, struct gpu_ring *upload,
		      struct gpu_ring *readback, struct gpu_ring *scratch, char *err, size_t err_size)
{
	int r;

	/* The upload ring stays in device-local host-visible memory: in cached host RAM (read by
	 * the GPU over the bus) the H200's small-request p50 rose from 66 to 88 us and
	 * throughput did not move (session 3). */
	if ((r = gpu_ring_init(upload, gpu, l->upload_ring_bytes, GPU_MEMORY_UPLOAD))) {
		snprintf(err, err_size, "upload ring of %" PRIu64 " bytes: %s", l->upload_ring_bytes, strerror(-r));
		return r;
	}
	if ((r = gpu_ring_init(readback, gpu, l->readback_ring_bytes, GPU_MEMORY_READBACK))) {
		snprintf(err, err_size, "readback ring of %" PRIu64 " bytes: %s", l->readback_ring_bytes,
			 strerror(-r));
		gpu_ring_finish(upload, gpu);
		return r;
	}
	if ((r = gpu_ring_init(scratch, gpu, l->scratch_ring_bytes, GPU_MEMORY_DEVICE))) {
		snprintf(err, err_size, "scratch ring of %" PRIu64 " bytes: %s", l->scratch_ring_bytes,
			 strerror(-r));
		gpu_ring_finish(readback, gpu);
		gpu_ring_finish(upload, gpu);
		return r;
	}
	return 0;
}

static void stop_thread(struct batch *b)
{
	if (!b->thread_started)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = true;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->thread, NULL);
	b->thread_started = false;
	b->stop = false;
}

/* 0 or a positive errno of pthread_create. restart: a start after a device rebuild
 * (rebuild_device's, and on_check's retries of it), not the first at batch_create.
 *
 * Fault injection for tests (VKR_FAULT_THREAD_RESTART_FAILS=N, read once by batch_create):
 * the first N restarts fail with EAGAIN as if pthread_create had, without calling it; the
 * start at boot never does. With VKR_FAULT_SUBMIT_EVERY (which brings the rebuilds) it tests
 * on_check's retry and its "busy" answers (test_reliability.py, thread_restart). */
static int start_thread(struct batch *b, bool restart)
{
	int r;

	if (restart && b->fault_restart_fails > 0) {
		b->fault_restart_fails--;
		r = EAGAIN;
	} else {
		r = pthread_create(&b->thread, NULL, completion_main, b);
	}
	b->thread_started = r == 0;
	/* Named for top -H, perf and /proc/PID/task: where it runs decides a lone client's
	 * latency on some hosts (BENCHMARKS, session 35). A name is only a label: ignore failure. */
	if (r == 0)
		(void)pthread_setname_np(b->thread, "vkr-complete");
	return r;
}

/*
 * After device loss: once nothing is on the GPU any more (every job of the lost batches
 * has been answered "device lost"), creates the device, its pipelines and the rings again
 * and swaps them in. Connections and their regions stay; regions that were imported into
 * the old device are imported into the new one. The new device and rings are made before
 * the old ones go, so a failed attempt changes nothing and is retried a second later (on
 * the next request: until then every request is answered "device lost", retryable).
 */
static void rebuild_device(struct batch *b)
{
	struct vkrd *d = b->d;
	struct gpu_config cfg = { 0 };
	struct gpu_ring up, rb, sc;
	struct gpu *ng = NULL, *old = d->gpu;
	char index[16], err[256];
	uint64_t now = vkrd_now_ns();
	int r;

	if (b->inflight_count > 0 || b->pending > 0 || d->shutting_down || now < b->rebuild_after_ns)
		return;
	if (d->gpu_config) {
		cfg = *d->gpu_config;
	} else {
		snprintf(index, sizeof(index), "%u", gpu_get_info(old)->device_index);
		cfg.device = index;
		cfg.host_memory_scans_only = true; /* as main.c's */
	}
	log_warn("device lost: creating the device again");
	r = gpu_create(&cfg, &ng, err, sizeof(err));
	if (r == 0 && (r = rings_init(ng, &d->limits, &up, &rb, &sc, err, sizeof(err))))
		gpu_destroy(ng);
	if (r) {
		d->stats.device_rebuild_failures++;
		b->rebuild_after_ns = now + UINT64_C(1000000000);
		log_error("device rebuild failed (retrying in a second): %s", err);
		return;
	}
	stop_thread(b);
	/* Nothing of the old device may outlive it: region imports, then the rings. */
	for (struct conn *c = d->conns; c; c = c->next)
		for (size_t i = 0; i < c->regions.count; i++) {
			d->stats.regions_imported -= c->regions.regions[i]->imported;
			shm_region_drop_import(c->regions.regions[i]);
		}
	gpu_ring_finish(&b->scratch, old);
	gpu_ring_finish(&b->readback, old);
	gpu_ring_finish(&b->upload, old);
	if (gpu_validation_messages(old) > 0)
		log_error("the validation layer reported %" PRIu64 " messages on the lost device",
			  gpu_validation_messages(old));
	gpu_destroy(old);
	d->gpu = ng;
	b->upload = up;
	b->readback = rb;
	b->scratch = sc;
	b->lost = false;
	b->done_value = 0;
	atomic_store(&b->done_hint, 0);
	b->wait_first = b->wait_count = 0;
	atomic_store(&b->wait_queued, 0);
	for (struct conn *c = d->conns; c; c = c->next)
		for (size_t i = 0; i < c->regions.count; i++) {
			shm_region_import(c->regions.regions[i], ng);
			d->stats.regions_imported += c->regions.regions[i]->imported;
		}
	if ((r = start_thread(b, true)))
		log_error("device rebuilt, but the completion thread did not start: %s", strerror(r));
	d->stats.device_rebuilds++;
	log_info("device rebuilt: %s", gpu_get_info(ng)->name);
}

int batch_create(struct vkrd *d, struct batch **out, char *err, size_t err_size)
{
	struct batch *b = calloc(1, sizeof(*b));
	int r;

	*out = NULL;
	if (!b) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	b->d = d;
	atomic_init(&b->submits, 0);
	atomic_init(&b->done_hint, 0);
	atomic_init(&b->wait_queued, 0);
	/* As gpu_wait's poll (VKR_WAIT_SPIN_US, default 100 us on GPUs and 0 on CPU devices,
	 * whose workers need the cores). */
	{
		const char *spin_us = getenv("VKR_WAIT_SPIN_US");
		const char *type = gpu_get_info(d->gpu)->type;
		b->spin_ns = spin_us && *spin_us ? strtoull(spin_us, NULL, 10) * 1000
			   : type && strcmp(type, "cpu") == 0 ? 0 : 100000;
		/* VKR_LOOP_SPIN_US: how long the loop polls (instead of sleeping in epoll) after
		 * a submission or a completion; default 50 us on GPUs (longer than a small
		 * batch's round trip, so a lone client's request meets an awake loop at both
		 * ends), 0 on CPU devices. On the H200, p50 of a synchronous request: 47 us
		 * polling 50 us, 63 us not polling (means of two interleaved runs; session 3). */
		spin_us = getenv("VKR_LOOP_SPIN_US");
		b->loop_spin_ns = spin_us && *spin_us ? strtoull(spin_us, NULL, 10) * 1000
				: type && strcmp(type, "cpu") == 0 ? 0 : 50000;
		/* VKR_LOOP_PREDICT=0: no polling around the expected end of long batches. */
		const char *predict = getenv("VKR_LOOP_PREDICT");
		b->predict_on = b->loop_spin_ns > 0 && !(predict && strcmp(predict, "0") == 0);
		/* VKR_COPY_THREADS: helpers for copying a batch's inline inputs into the upload
		 * ring; default 6 on GPUs, at most half the cores (H200, 32 clients: 575k req/s
		 * with none, 632k with 3, 681k with 6), 0 on CPU devices, whose workers need the
		 * cores. */
		const char *threads = getenv("VKR_COPY_THREADS");
		cpu_set_t allowed;
		long cpus = sched_getaffinity(0, sizeof(allowed), &allowed) == 0 ? CPU_COUNT(&allowed)
											: sysconf(_SC_NPROCESSORS_ONLN);
		unsigned long copy_threads = threads && *threads ? strtoul(threads, NULL, 10)
					   : (type && strcmp(type, "cpu") == 0) || cpus <= 1 ? 0
					   : cpus / 2 < 6 ? (unsigned long)(cpus / 2) : 6;
		/* VKR_FAULT_THREAD_RESTART_FAILS=N: tests' fault injection, see start_thread. */
		const char *fails = getenv("VKR_FAULT_THREAD_RESTART_FAILS");
		long n_fails = fails && *fails ? strtol(fails, NULL, 10) : 0;
		b->fault_restart_fails = n_fails > 0 ? (unsigned long)n_fails : 0;
		if ((r = copy_pool_create(copy_threads > 16 ? 16 : (unsigned)copy_threads, &b->copy_pool))) {
			snprintf(err, err_size, "copy threads: %s", strerror(-r));
			goto fail;
		}
	}
	b->sel = calloc(d->limits.max_batch_jobs, sizeof(*b->sel));
	b->kjobs = calloc(d->limits.max_batch_jobs, sizeof(*b->kjobs));
	b->copies = calloc(d->limits.max_batch_jobs + KERN_MAX_PARTS, sizeof(*b->copies));
	if (!b->sel || !b->kjobs || !b->copies) {
		snprintf(err, err_size, "out of memory for %" PRIu64 " batch jobs", d->limits.max_batch_jobs);
		r = -ENOMEM;
		goto fail;
	}
	if ((r = rings_init(d->gpu, &d->limits, &b->upload, &b->readback, &b->scratch, err, err_size)))
		goto fail;
	b->rings_ready = true;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	uv_idle_init(d->loop, &b->idle);
	b->idle.data = b;
	uv_check_init(d->loop, &b->check);
	b->check.data = b;
	uv_check_start(&b->check, on_check);
	uv_async_init(d->loop, &b->async, on_async);
	b->async.data = b;
	uv_timer_init(d->loop, &b->due_timer);
	b->due_timer.data = b;
	b->handles_open = true;
	if ((r = start_thread(b, false))) {
		snprintf(err, err_size, "completion thread: %s", strerror(r));
		batch_close(b);
		*out = b; /* the caller runs the loop to close the handles, then destroys */
		return -r;
	}
	*out = b;
	return 0;
fail:
	copy_pool_destroy(b->copy_pool);
	free(b->sel);
	free(b->kjobs);
	free(b->copies);
	free(b);
	return r;
}

void batch_close(struct batch *b)
{
	stop_thread(b);
	if (b->handles_open) {
		uv_close((uv_handle_t *)&b->check, NULL);
		uv_close((uv_handle_t *)&b->idle, NULL);
		b->idle_active = false;
		uv_close((uv_handle_t *)&b->async, NULL);
		uv_close((uv_handle_t *)&b->due_timer, NULL);
		b->handles_open = false;
	}
}

void batch_destroy(struct batch *b)
{
	if (!b)
		return;
	batch_close(b);
	/* Whatever is still in flight (shutdown without waiting): wait for the device. */
	while (b->oldest) {
		struct inflight *f = b->oldest;
		gpu_wait(b->d->gpu, f->value, UINT64_MAX);
		complete(b, f, false, 0);
	}
	retire(b);
	while (b->spare) {
		struct inflight *f = b->spare;
		b->spare = f->next;
		free(f->jobs);
		free(f);
	}
	if (b->rings_ready) {
		gpu_ring_finish(&b->scratch, b->d->gpu);
		gpu_ring_finish(&b->readback, b->d->gpu);
		gpu_ring_finish(&b->upload, b->d->gpu);
		pthread_mutex_destroy(&b->mu);
		pthread_cond_destroy(&b->cv);
	}
	while (b->free_jobs) {
		struct batch_job *job = b->free_jobs;
		b->free_jobs = job->next;
		free(job);
	}
	copy_pool_destroy(b->copy_pool);
	free(b->sel);
	free(b->kjobs);
	free(b->copies);
	free(b);
}
