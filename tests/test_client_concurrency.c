/*
 * test_client_concurrency.c: 8 client processes x 200 mixed requests at once against one
 * real vkreduced: sizes 1 to 10^6 (log-uniform, so that most are small as in real traffic),
 * every op and dtype, inline and through shared memory, blocking and pipelined through the
 * async API. Every answer must match the CPU reference, every request must be answered
 * exactly once, and the daemon's stats must show batches that mixed connections (the point
 * of the daemon: one command buffer serves many clients).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_ref.h"
#include "vkreduce.h"

#define CLIENTS 8
#define REQUESTS 200
#define MAX_N 1000000
#define PIPELINE 8

static size_t esz(vkr_dtype t)
{
	return (t == VKR_DTYPE_F64 || t == VKR_DTYPE_I64 || t == VKR_DTYPE_U64) ? 8 : 4;
}

/* One request of the mix, with everything needed to check its answer. */
struct req {
	int id;
	bool scan, exclusive, has_opts;
	vkr_op op;
	vkr_dtype dtype;
	vkr_reduce_opts opts;
	size_t n;
	void *in, *out; /* owned */
	int calls; /* callbacks seen: must end at exactly 1 */
	int status;
	vkr_value value;
};

static void req_make(struct req *r, uint64_t *rng, int id)
{
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->dtype = (vkr_dtype)(ref_rand(rng) % VKR_DTYPE_COUNT_);
	r->scan = ref_rand(rng) % 3 == 0;
	r->op = (vkr_op)(ref_rand(rng) % (r->scan ? 4 : 5));
	r->exclusive = ref_rand(rng) % 2;
	double u = (double)(ref_rand(rng) >> 11) / 9007199254740992.0;
	r->n = (size_t)exp(u * log((double)MAX_N)); /* 1 .. 10^6, log-uniform */
	if (r->n < 1)
		r->n = 1;
	r->in = malloc(r->n * esz(r->dtype));
	r->out = r->scan ? malloc(r->n * esz(r->dtype)) : NULL;
	if (!r->in || (r->scan && !r->out))
		abort();
	ref_fill(rng, r->op == VKR_OP_COUNT ? VKR_OP_SUM : r->op, r->dtype, r->in, r->n);
	if (r->op == VKR_OP_COUNT) {
		r->has_opts = true;
		r->opts.cmp = (vkr_cmp)(ref_rand(rng) % VKR_CMP_COUNT_);
		memcpy(&r->opts.value, (char *)r->in + (r->n / 2) * esz(r->dtype), esz(r->dtype));
	}
}

static bool req_check(const struct req *r)
{
	char why[256];
	bool ok;
	if (r->calls != 1) {
		fprintf(stderr, "request %d answered %d times\n", r->id, r->calls);
		return false;
	}
	if (r->status != 0) {
		fprintf(stderr, "request %d (%s, n=%zu): %s\n", r->id, r->scan ? "scan" : "reduce",
		        r->n, vkr_strerror(r->status));
		return false;
	}
	if (r->scan)
		ok = ref_scan_ok(r->op, r->dtype, r->in, r->n, r->exclusive, r->out, why, sizeof(why));
	else
		ok = ref_reduce_ok(r->op, r->dtype, r->in, r->n, r->has_opts ? &r->opts : NULL,
		                   r->value, why, sizeof(why));
	if (!ok)
		fprintf(stderr, "request %d (%s op %d dtype %d n=%zu): %s\n", r->id,
		        r->scan ? "scan" : "reduce", (int)r->op, (int)r->dtype, r->n, why);
	return ok;
}

static void req_free(struct req *r)
{
	free(r->in);
	free(r->out);
}

static void on_reduce(vkr_client *c, int status, const vkr_value *v, void *ud)
{
	struct req *r = ud;
	(void)c;
	r->calls++;
	r->status = status;
	if (v)
		r->value = *v;
}

static void on_scan(vkr_client *c, int status, uint64_t count, void *ud)
{
	struct req *r = ud;
	(void)c;
	r->calls++;
	r->status = status;
	if (status == 0 && count != r->n)
		r->status = -EPROTO;
}

/* Runs a blocking request, inline or through the client's shm buffer. */
static void run_blocking(vkr_client *c, struct req *r, vkr_shm *shm, vkr_region region)
{
	size_t bytes = r->n * esz(r->dtype);
	bool via_shm = r->id % 2 == 0;
	const vkr_reduce_opts *o = r->has_opts ? &r->opts : NULL;

	if (via_shm) {
		/* Source in the first half, scan output in the second half of the region. */
		memcpy(vkr_shm_data(shm), r->in, bytes);
		if (r->scan) {
			size_t half = vkr_shm_size(shm) / 2;
			r->status = vkr_scan_shm(c, r->op, r->dtype, region, 0, r->n, r->exclusive, region,
			                         half);
			memcpy(r->out, (char *)vkr_shm_data(shm) + half, bytes);
		} else {
			r->status = vkr_reduce_shm(c, r->op, r->dtype, region, 0, r->n, o, &r->value);
		}
	} else if (r->scan) {
		r->status = vkr_scan(c, r->op, r->dtype, r->in, r->n, r->exclusive, r->out);
	} else {
		r->status = vkr_reduce(c, r->op, r->dtype, r->in, r->n, o, &r->value);
	}
	r->calls++;
}

static int child(const char *socket, int barrier_fd, int index)
{
	uint64_t rng = ref_seed("test_client_concurrency child") + (uint64_t)index * 7919;
	vkr_client *c;
	vkr_shm *shm;
	vkr_region region;
	int bad = 0, done = 0;
	char b;

	if (vkr_connect(socket, &c) < 0 || vkr_shm_create((size_t)2 * MAX_N * 8, &shm) < 0 ||
	    vkr_shm_register(c, shm, true, &region) < 0) {
		fprintf(stderr, "child %d: set-up failed\n", index);
		return 1;
	}
	/* Start together, so that the daemon sees all connections at once. */
	if (read(barrier_fd, &b, 1) < 0)
		return 1;
	close(barrier_fd);

	while (done < REQUESTS) {
		if (ref_rand(&rng) % 2) {
			struct req r;
			req_make(&r, &rng, done);
			run_blocking(c, &r, shm, region);
			bad += !req_check(&r);
			req_free(&r);
			done++;
			continue;
		}
		/* A pipelined burst through the async API. */
		struct req rs[PIPELINE];
		int k = REQUESTS - done < PIPELINE ? REQUESTS - done : PIPELINE;
		for (int i = 0; i < k; i++) {
			struct req *r = &rs[i];
			req_make(r, &rng, done + i);
			int err = r->scan ? vkr_scan_async(c, r->op, r->dtype, r->in, r->n, r->exclusive,
			                                   r->out, on_scan, r)
			                  : vkr_reduce_async(c, r->op, r->dtype, r->in, r->n,
			                                     r->has_opts ? &r->opts : NULL, on_reduce, r);
			if (err < 0) {
				r->calls = 1;
				r->status = err;
			}
		}
		if (vkr_flush(c, 120000) < 0)
			bad++;
		/* 0 is a legitimate answer (part of a reply arrived); < 0 means the connection
		 * failed, and then every callback has already run with the error. */
		while (vkr_pending(c) > 0)
			if (vkr_dispatch(c, 120000) < 0) {
				bad++;
				break;
			}
		for (int i = 0; i < k; i++) {
			bad += !req_check(&rs[i]);
			req_free(&rs[i]);
		}
		done += k;
	}
	vkr_shm_unregister(c, region);
	vkr_shm_free(shm);
	vkr_close(c);
	return bad ? 1 : 0;
}

static void test_eight_clients_mixed_requests_all_correct_and_batched_together(void **state)
{
	struct ref_daemon d;
	int barrier[2];
	pid_t pids[CLIENTS];
	(void)state;

	assert_int_equal(ref_daemon_start(&d, NULL), 0);
	assert_int_equal(pipe(barrier), 0);
	for (int i = 0; i < CLIENTS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			close(barrier[1]);
			_exit(child(d.socket, barrier[0], i));
		}
	}
	close(barrier[0]);
	close(barrier[1]); /* EOF releases every child at once */

	int failed = 0;
	for (int i = 0; i < CLIENTS; i++) {
		int status;
		while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "client %d failed (status 0x%x)\n", i, status);
			failed++;
		}
	}

	vkr_client *c;
	vkr_kvlist *kv;
	assert_int_equal(vkr_connect(d.socket, &c), 0);
	assert_int_equal(vkr_stats(c, &kv), 0);
	double multi = vkr_kvlist_number(kv, "batches_multi_conn", -1);
	double reqs = vkr_kvlist_number(kv, "requests_total", -1);
	fprintf(stderr, "requests_total %.0f, batches %.0f, batches_multi_conn %.0f, "
	                "batch_jobs_max %.0f\n",
	        reqs, vkr_kvlist_number(kv, "batches", -1), multi,
	        vkr_kvlist_number(kv, "batch_jobs_max", -1));
	vkr_kvlist_free(kv);
	vkr_close(c);
	assert_int_equal(ref_daemon_stop(&d), 0);

	assert_int_equal(failed, 0);
	assert_true(reqs >= CLIENTS * REQUESTS);
	assert_true(multi > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eight_clients_mixed_requests_all_correct_and_batched_together),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
