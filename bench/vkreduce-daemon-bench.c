/*
 * vkreduce-daemon-bench: the daemon as clients see it, through libvkreduce.
 *
 *   1. latency: p50/p99 of a synchronous reduce of 1,024 f32 from one client;
 *   2. throughput: 1, 8 and 32 client processes (one connection each) pipelining small
 *      reduces through the async API, each keeping --window requests in flight, with the
 *      p50/p99 of their request latencies (sent to answered, 1 us buckets).
 *
 * Run it against a daemon started with default batching and again with --max-batch-jobs 1 to
 * see what batching buys. The daemon's own batch counters (jobs per batch) are printed beside
 * each throughput row.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "irq_cpus.h"
#include "vkreduce.h"

struct cfg {
	const char *socket; /* NULL: the default path */
	int size; /* elements per request */
	int latency_iters;
	double seconds; /* per throughput row */
	int window; /* requests in flight per client */
	bool cork; /* send each refill of the window in one write (vkr_cork) */
	bool shm;  /* throughput rows read the input from a registered shared-memory region */
	int clients[8];
	int nclients;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "vkreduce-daemon-bench: %s: %s\n", what, vkr_strerror(err));
	exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void fill(float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] = (float)(i % 17) * 0.25f;
}

/* Whether cpu is in a kernel CPU list ("0,14", "1-13,15"); a malformed list holds none. */
static bool cpu_in_list(int cpu, const char *list)
{
	cpu_set_t set;

	return cpu >= 0 && cpu < CPU_SETSIZE && irq_cpus_parse_list(list, &set) == 0 && CPU_ISSET((size_t)cpu, &set);
}

static void bench_latency(const struct cfg *cfg)
{
	vkr_client *c;
	float *x = malloc((size_t)cfg->size * sizeof(float));
	double *t = malloc((size_t)cfg->latency_iters * sizeof(double));
	vkr_value v;
	int err;

	if (!x || !t)
		die("latency", -ENOMEM);
	fill(x, cfg->size);
	if ((err = vkr_connect(cfg->socket, &c)) < 0)
		die("connect", err);
	/* Warm up for a second: pipelines, caches, the daemon's rings, and the GPU's clocks,
	 * which an idle GPU lowers (on the H200 the first second after a pause measured p50
	 * 53 to 60 us, against 38 to 41 us after it: run 4 of session 4). */
	double warm_until = now_s() + 1.0;
	for (int i = 0; i < 200 || now_s() < warm_until; i++)
		if ((err = vkr_reduce(c, VKR_OP_SUM, VKR_DTYPE_F32, x, (size_t)cfg->size, NULL, &v)) < 0)
			die("reduce", err);
	/* How often the client slept (voluntary context switches) and was preempted during the
	 * timed calls, and where it ran: a call whose reply comes after the client library's
	 * polling window (VKR_CLIENT_SPIN_US) sleeps, and its wake-up lengthens the call. */
	struct rusage ru0, ru1;
	int cpu0 = sched_getcpu();
	if (getrusage(RUSAGE_THREAD, &ru0) != 0)
		die("getrusage", -errno);
	for (int i = 0; i < cfg->latency_iters; i++) {
		double t0 = now_s();
		if ((err = vkr_reduce(c, VKR_OP_SUM, VKR_DTYPE_F32, x, (size_t)cfg->size, NULL, &v)) < 0)
			die("reduce", err);
		t[i] = (now_s() - t0) * 1e6;
	}
	if (getrusage(RUSAGE_THREAD, &ru1) != 0)
		die("getrusage", -errno);
	int cpu1 = sched_getcpu();
	qsort(t, (size_t)cfg->latency_iters, sizeof(double), cmp_double);
	double mean = 0;
	for (int i = 0; i < cfg->latency_iters; i++)
		mean += t[i] / cfg->latency_iters;
	printf("latency: synchronous reduce of %d f32, 1 client, %d calls\n", cfg->size,
	       cfg->latency_iters);
	printf("| p50 (us) | p99 (us) | mean (us) | min (us) |\n|---:|---:|---:|---:|\n");
	printf("| %.1f | %.1f | %.1f | %.1f |\n\n", t[cfg->latency_iters / 2],
	       t[(int)(cfg->latency_iters * 0.99)], mean, t[0]);
	printf("client: %.2f sleeps and %.2f preemptions per call; on CPU %d, then %d",
	       (double)(ru1.ru_nvcsw - ru0.ru_nvcsw) / cfg->latency_iters,
	       (double)(ru1.ru_nivcsw - ru0.ru_nivcsw) / cfg->latency_iters, cpu0, cpu1);
	/* A client on a CPU that takes the GPU's interrupts is slowed at every completion
	 * (docs/OPERATIONS.md, "GPU interrupts and latency"): say so beside the figures. */
	vkr_kvlist *hello = NULL;
	const vkr_kv *irq = NULL;
	if (vkr_hello(c, "vkreduce-daemon-bench", &hello) == 0)
		irq = vkr_kvlist_find(hello, "device.irq_cpus");
	if (irq && irq->type == VKR_KV_STR && irq->v.s[0])
		printf("; the GPU's interrupts on CPUs %s%s", irq->v.s,
		       cpu_in_list(cpu1, irq->v.s) ? " (this client's: expect it slower)" : "");
	printf("\n\n");
	vkr_kvlist_free(hello);
	vkr_close(c);
	free(x);
	free(t);
}

/* Latency histogram of the throughput rows: 1 us buckets, the last one open-ended. Each
 * client process fills its own, in memory shared with the parent. */
#define HIST_BUCKETS 20000

struct flight {
	uint64_t *done;
	int *inflight;
	int *errors;
	uint32_t *hist; /* HIST_BUCKETS, shared */
	bool counting;  /* before the deadline: latencies are recorded */
};

/* One request in flight: when it was sent. */
struct slot {
	struct flight *f;
	double t0;
	struct slot *next_free;
};

static struct slot *free_slots;

static void on_reduce(vkr_client *c, int status, const vkr_value *v, void *ud)
{
	struct slot *sl = ud;
	struct flight *f = sl->f;
	(void)c;
	(void)v;
	(*f->inflight)--;
	if (status == 0) {
		(*f->done)++;
		if (f->counting) {
			double us = (now_s() - sl->t0) * 1e6;
			size_t b = us < 0 ? 0 : us >= HIST_BUCKETS - 1 ? HIST_BUCKETS - 1 : (size_t)us;
			f->hist[b]++;
		}
	} else {
		(*f->errors)++;
	}
	sl->next_free = free_slots;
	free_slots = sl;
}

/* The latency below which a fraction q of the recorded requests completed, in us. */
static double hist_quantile(const uint64_t *h, double q)
{
	uint64_t total = 0, seen = 0;
	for (size_t i = 0; i < HIST_BUCKETS; i++)
		total += h[i];
	if (total == 0)
		return NAN;
	for (size_t i = 0; i < HIST_BUCKETS; i++) {
		seen += h[i];
		if ((double)seen >= q * (double)total)
			return (double)i + 0.5;
	}
	return HIST_BUCKETS;
}

/* One client process: keep window requests in flight until the deadline, then drain.
 * Writes the number of completed requests to out_fd. */
static int client_main(const struct cfg *cfg, int start_fd, int out_fd, uint32_t *hist)
{
	vkr_client *c;
	float *x = malloc((size_t)cfg->size * sizeof(float));
	struct slot *slots = calloc((size_t)cfg->window, sizeof(struct slot));
	uint64_t done = 0;
	int inflight = 0, errors = 0, err;
	struct flight f = { &done, &inflight, &errors, hist, true };
	char b;

	if (!x || !slots)
		return 1;
	for (int i = 0; i < cfg->window; i++) {
		slots[i].f = &f;
		slots[i].next_free = free_slots;
		free_slots = &slots[i];
	}
	fill(x, cfg->size);
	if ((err = vkr_connect(cfg->socket, &c)) < 0)
		die("connect", err);
	vkr_shm *shm = NULL;
	vkr_region region = 0;
	if (cfg->shm) {
		if ((err = vkr_shm_create((size_t)cfg->size * sizeof(float), &shm)) < 0)
			die("shm_create", err);
		fill(vkr_shm_data(shm), cfg->size);
		if ((err = vkr_shm_seal(shm)) < 0 || (err = vkr_shm_register(c, shm, false, &region)) < 0)
			die("shm_register", err);
	}
	if (read(start_fd, &b, 1) < 0)
		return 1;
	double deadline = now_s() + cfg->seconds;
	while (now_s() < deadline) {
		if (cfg->cork)
			(void)vkr_cork(c, true);
		while (inflight < cfg->window && free_slots) {
			struct slot *sl = free_slots;
			free_slots = sl->next_free;
			sl->t0 = now_s();
			err = shm ? vkr_reduce_shm_async(c, VKR_OP_SUM, VKR_DTYPE_F32, region, 0,
			                                 (uint64_t)cfg->size, NULL, on_reduce, sl)
			          : vkr_reduce_async(c, VKR_OP_SUM, VKR_DTYPE_F32, x, (size_t)cfg->size,
			                             NULL, on_reduce, sl);
			if (err < 0)
				die("reduce_async", err);
			inflight++;
		}
		if (cfg->cork && (err = vkr_cork(c, false)) < 0)
			die("cork", err);
		if ((err = vkr_dispatch(c, 100)) < 0)
			die("dispatch", err);
	}
	uint64_t counted = done; /* only what completed within the time counts */
	f.counting = false;
	while (inflight > 0)
		if ((err = vkr_dispatch(c, 10000)) < 0)
			die("dispatch", err);
	if (errors)
		fprintf(stderr, "client: %d requests failed\n", errors);
	if (write(out_fd, &counted, sizeof(counted)) != (ssize_t)sizeof(counted))
		return 1;
	vkr_close(c);
	vkr_shm_free(shm);
	free(x);
	free(slots);
	return errors ? 1 : 0;
}

static void batch_counters(const struct cfg *cfg, double *batches, double *jobs)
{
	vkr_client *c;
	vkr_kvlist *kv;
	*batches = *jobs = NAN;
	if (vkr_connect(cfg->socket, &c) < 0)
		return;
	if (vkr_stats(c, &kv) == 0) {
		*batches = vkr_kvlist_number(kv, "batches", NAN);
		*jobs = vkr_kvlist_number(kv, "batch_jobs", NAN);
		vkr_kvlist_free(kv);
	}
	vkr_close(c);
}

static void bench_throughput(const struct cfg *cfg)
{
	printf("throughput: async reduces of %d f32 (%s%s), window %d per client, %.1f s per row\n",
	       cfg->size, cfg->shm ? "one registered region" : "the caller's arrays", cfg->cork ? ", corked" : "", cfg->window,
	       cfg->seconds);
	printf("| clients | requests/s | jobs per batch | p50 (us) | p99 (us) |\n|---:|---:|---:|---:|---:|\n");
	for (int row = 0; row < cfg->nclients; row++) {
		int n = cfg->clients[row], start[2], res[2];
		pid_t *pids = calloc((size_t)n, sizeof(pid_t));
		size_t hist_bytes = (size_t)n * HIST_BUCKETS * sizeof(uint32_t);
		uint32_t *hists = mmap(NULL, hist_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		uint64_t *sum = calloc(HIST_BUCKETS, sizeof(uint64_t));
		double b0, j0, b1, j1;

		if (!pids || !sum || hists == MAP_FAILED || pipe(start) < 0 || pipe(res) < 0)
			die("throughput", -errno);
		batch_counters(cfg, &b0, &j0);
		for (int i = 0; i < n; i++) {
			pids[i] = fork();
			if (pids[i] < 0)
				die("fork", -errno);
			if (pids[i] == 0) {
				close(start[1]);
				close(res[0]);
				_exit(client_main(cfg, start[0], res[1], hists + (size_t)i * HIST_BUCKETS));
			}
		}
		close(start[0]);
		close(res[1]);
		usleep(200 * 1000); /* let every client connect before the clock starts */
		double t0 = now_s();
		close(start[1]);
		uint64_t total = 0, one;
		while (read(res[0], &one, sizeof(one)) == (ssize_t)sizeof(one))
			total += one;
		double el = now_s() - t0;
		close(res[0]);
		int failed = 0;
		for (int i = 0; i < n; i++) {
			int st;
			while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
				;
			failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
		free(pids);
		batch_counters(cfg, &b1, &j1);
		/* The clients stop counting at their deadline; el includes the drain, so use the
		 * configured duration as the measuring window. */
		(void)el;
		for (int i = 0; i < n; i++)
			for (size_t k = 0; k < HIST_BUCKETS; k++)
				sum[k] += hists[(size_t)i * HIST_BUCKETS + k];
		printf("| %d | %.0f | %.1f | %.0f | %.0f |%s\n", n, (double)total / cfg->seconds,
		       (j1 - j0) / (b1 - b0), hist_quantile(sum, 0.5), hist_quantile(sum, 0.99),
		       failed ? " (some clients failed)" : "");
		munmap(hists, hist_bytes);
		free(sum);
		fflush(stdout);
	}
	printf("\n");
}

static void usage(void)
{
	printf("usage: vkreduce-daemon-bench [--socket PATH] [--size N] [--iters N]\n"
	       "                             [--seconds S] [--window W] [--clients 1,8,32]\n"
	       "                             [--no-latency] [--no-throughput] [--cork] [--shm]\n"
	       "Measures latency and throughput of vkreduced through libvkreduce. Start the\n"
	       "daemon first (e.g. vkreduced --socket /tmp/v.sock), once as is and once with\n"
	       "--max-batch-jobs 1, and compare the tables. --cork sends each refill of a\n"
	       "client's window in one write (vkr_cork); --shm makes the throughput rows reduce\n"
	       "a registered shared-memory region instead of inline arrays.\n");
}

int main(int argc, char **argv)
{
	struct cfg cfg = {
		.size = 1024, .latency_iters = 5000, .seconds = 3, .window = 32,
		.clients = { 1, 8, 32 }, .nclients = 3,
	};
	bool latency = true, throughput = true;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage();
			return 0;
		} else if (strcmp(a, "--no-latency") == 0) {
			latency = false;
		} else if (strcmp(a, "--cork") == 0) {
			cfg.cork = true;
		} else if (strcmp(a, "--shm") == 0) {
			cfg.shm = true;
		} else if (strcmp(a, "--no-throughput") == 0) {
			throughput = false;
		} else if (!v) {
			fprintf(stderr, "vkreduce-daemon-bench: %s needs a value (see --help)\n", a);
			return 2;
		} else if (strcmp(a, "--socket") == 0) {
			cfg.socket = v, i++;
		} else if (strcmp(a, "--size") == 0) {
			cfg.size = atoi(v), i++;
		} else if (strcmp(a, "--iters") == 0) {
			cfg.latency_iters = atoi(v), i++;
		} else if (strcmp(a, "--seconds") == 0) {
			cfg.seconds = atof(v), i++;
		} else if (strcmp(a, "--window") == 0) {
			cfg.window = atoi(v), i++;
		} else if (strcmp(a, "--clients") == 0) {
			char *s = strdup(v), *save = NULL;
			cfg.nclients = 0;
			for (char *tok = strtok_r(s, ",", &save); tok && cfg.nclients < 8;
			     tok = strtok_r(NULL, ",", &save))
				cfg.clients[cfg.nclients++] = atoi(tok);
			free(s);
			i++;
		} else {
			fprintf(stderr, "vkreduce-daemon-bench: unknown option %s (see --help)\n", a);
			return 2;
		}
	}
	if (cfg.size < 1 || cfg.latency_iters < 1 || cfg.seconds <= 0 || cfg.window < 1) {
		fprintf(stderr, "vkreduce-daemon-bench: sizes, counts and durations must be positive\n");
		return 2;
	}
	for (int i = 0; i < cfg.nclients; i++)
		if (cfg.clients[i] < 1 || cfg.clients[i] > 1024) {
			fprintf(stderr, "vkreduce-daemon-bench: client counts must be 1..1024\n");
			return 2;
		}
	if (latency)
		bench_latency(&cfg);
	if (throughput)
		bench_throughput(&cfg);
	return 0;
}
