/*
 * vkreduce-shm-bench: large arrays in a client's shared memory, end to end through the
 * client library: a reduce of the region, and a scan from one region into another
 * (writable) one. Where the daemon's device imports host memory (VK_EXT_external_memory_host)
 * the GPU reads and writes the client's pages over PCIe with no CPU copy, so the ceiling is
 * the host<->device bandwidth; compare with torch's pinned copies (bench/torch_bench.py).
 *
 *   vkreduce-shm-bench [--socket PATH] [--mib N[,N...]] [--reps N] [--only reduce|scan]
 *                      [--pages fill|register|fallocate]
 *
 * Several sizes alternate request by request (each rep runs every size in turn, on the
 * first N MiB of one region), as a host serving many clients' arrays would see them: the
 * daemon's polling around a batch's expected end (daemon/batch_predict.c) must then tell
 * the sizes apart.
 *
 * --pages says how the source's pages come to be: written by the client before it
 * registers them (fill, the default, as most clients do), allocated by the daemon's import
 * at registration and written after it (register), or allocated in one call by
 * fallocate(2) before they are written (fallocate, which allocates the destination's too;
 * otherwise the destination's pages, never written by the client, are allocated by the
 * import). Run S41-8 found the daemon's scan of client pages 0.5 ms (2%) slower on the GPU
 * than vkreduce-bench's of pages it imported before writing them; S42-2 found the pages'
 * origin was not why.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vkreduce.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define MAX_SIZES 8

/* "16,1024" into sizes[]; the count, or 0 where the list is malformed or a size is 0. */
static int parse_sizes(const char *list, size_t sizes[MAX_SIZES])
{
	int count = 0;
	const char *p = list;
	for (;;) {
		char *end;
		errno = 0;
		unsigned long long mib = strtoull(p, &end, 10);
		if (end == p || errno || mib == 0 || mib > ((size_t)1 << 20) || count == MAX_SIZES)
			return 0;
		sizes[count++] = (size_t)mib;
		if (*end == '\0')
			return count;
		if (*end != ',')
			return 0;
		p = end + 1;
	}
}

/* One kind of request timed over every size: the bench's regions and its table of times. */
struct timing {
	vkr_client *client;
	vkr_region src, dst;
	const float *y; /* the destination's mapping (NULL without a scan) */
	const size_t *mib;
	int sizes, reps;
	double *t; /* reps times per size */
};

/* Times reps requests of each size in turn (after one untimed round) and prints each size's
 * median, with its result as the daemon gave it (the reduce's sum, the scan's last element,
 * read right after that size's last scan: a later, larger scan would write it again). */
static int time_requests(struct timing *timing, bool scan)
{
	float result[MAX_SIZES] = { 0 };
	for (int i = -1; i < timing->reps; i++) {
		for (int k = 0; k < timing->sizes; k++) {
			uint64_t n = (timing->mib[k] << 20) / sizeof(float);
			vkr_value v;
			double start = now_s();
			int rc = scan ? vkr_scan_shm(timing->client, VKR_OP_SUM, VKR_DTYPE_F32, timing->src, 0, n,
						     false, timing->dst, 0)
				      : vkr_reduce_shm(timing->client, VKR_OP_SUM, VKR_DTYPE_F32, timing->src, 0, n,
						       NULL, &v);
			if (rc < 0)
				return rc;
			if (i < 0)
				continue;
			timing->t[(size_t)k * (size_t)timing->reps + (size_t)i] = now_s() - start;
			result[k] = scan ? timing->y[n - 1] : v.f32;
		}
	}
	for (int k = 0; k < timing->sizes; k++) {
		double *tk = timing->t + (size_t)k * (size_t)timing->reps;
		qsort(tk, (size_t)timing->reps, sizeof(*tk), cmp_double);
		double median = tk[timing->reps / 2];
		double gbs = (double)(timing->mib[k] << 20) / median / 1e9;
		if (scan)
			printf("scan sum f32 of %zu MiB, shared memory to shared memory: median %.3f ms, "
			       "%.1f GB/s each way (last element %.6g)\n", timing->mib[k], median * 1e3, gbs, result[k]);
		else
			printf("reduce sum f32 of %zu MiB in shared memory: median %.3f ms, %.1f GB/s (result %.6g)\n",
			       timing->mib[k], median * 1e3, gbs, result[k]);
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: vkreduce-shm-bench [--socket PATH] [--mib N[,N...]] [--reps N]\n"
		   "                          [--only reduce|scan] [--pages fill|register|fallocate]\n"
		   "Times a reduce (sum, f32) of N MiB in shared memory and a scan of it into a\n"
		   "second, writable region, through libvkreduce and the daemon. Medians of --reps\n"
		   "calls (1 to 1000000) after one warm-up call. Defaults: 1024 MiB, 10 reps.\n"
		   "Up to %d sizes, comma-separated, alternate request by request, each timed\n"
		   "apart. --only times one of the two (so that the daemon's statistics,\n"
		   "`vkreduce stats`, count its requests alone). --pages: how the source's pages\n"
		   "are allocated (fill: written before registration; register: by the daemon's\n"
		   "import at registration, written after; fallocate: by fallocate(2) before\n"
		   "writing, the destination's too). Default fill.\n", MAX_SIZES);
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "vkreduce-shm-bench: %s: %s\n", what, vkr_strerror(rc));
	return 1;
}

enum pages { PAGES_FILL, PAGES_REGISTER, PAGES_FALLOCATE };

static void fill(float *x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		x[i] = (float)(i % 1024) * 0.25f; /* exact in f32: the sum is checkable */
}

int main(int argc, char **argv)
{
	const char *socket = NULL;
	size_t mib[MAX_SIZES] = { 1024 };
	int sizes = 1;
	int reps = 10;
	bool reduce = true, scan = true;
	enum pages pages = PAGES_FILL;
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "mib", required_argument, NULL, 'm' },
		{ "reps", required_argument, NULL, 'r' },
		{ "only", required_argument, NULL, 'o' },
		{ "pages", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "s:m:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': socket = optarg; break;
		case 'm':
			if ((sizes = parse_sizes(optarg, mib)) == 0) {
				fprintf(stderr, "vkreduce-shm-bench: --mib: \"%s\" is not a list of 1 to %d "
						"sizes in MiB (1 to 1048576)\n", optarg, MAX_SIZES);
				return 2;
			}
			break;
		case 'r': reps = atoi(optarg); break;
		case 'o':
			reduce = strcmp(optarg, "reduce") == 0;
			scan = strcmp(optarg, "scan") == 0;
			if (!reduce && !scan) {
				fprintf(stderr, "vkreduce-shm-bench: --only: \"%s\" is neither reduce nor scan\n",
					optarg);
				return 2;
			}
			break;
		case 'p':
			if (strcmp(optarg, "fill") == 0)
				pages = PAGES_FILL;
			else if (strcmp(optarg, "register") == 0)
				pages = PAGES_REGISTER;
			else if (strcmp(optarg, "fallocate") == 0)
				pages = PAGES_FALLOCATE;
			else {
				fprintf(stderr, "vkreduce-shm-bench: --pages: \"%s\" is none of fill, register, "
						"fallocate\n", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (reps < 1 || reps > 1000000 || optind != argc) {
		usage(stderr);
		return 2;
	}
	size_t max_mib = 0;
	for (int k = 0; k < sizes; k++)
		max_mib = mib[k] > max_mib ? mib[k] : max_mib;
	vkr_client *client;
	int rc = vkr_connect(socket, &client);
	if (rc < 0)
		return fail("connect", rc);
	size_t bytes = max_mib << 20;
	uint64_t n = bytes / sizeof(float);
	vkr_shm *src, *dst = NULL;
	/* --only reduce makes no destination: the daemon then holds the source region alone */
	if ((rc = vkr_shm_create(bytes, &src)) < 0 || (scan && (rc = vkr_shm_create(bytes, &dst)) < 0))
		return fail("shm create", rc);
	if (pages == PAGES_FALLOCATE &&
	    (fallocate(vkr_shm_fd(src), 0, 0, (off_t)bytes) < 0 ||
	     (scan && fallocate(vkr_shm_fd(dst), 0, 0, (off_t)bytes) < 0)))
		return fail("fallocate", -errno);
	if (pages != PAGES_REGISTER)
		fill(vkr_shm_data(src), n);
	vkr_region src_region, dst_region = 0;
	if ((rc = vkr_shm_register(client, src, false, &src_region)) < 0)
		return fail("register source", rc);
	if (scan && (rc = vkr_shm_register(client, dst, true, &dst_region)) < 0)
		return fail("register destination", rc);
	if (pages == PAGES_REGISTER)
		fill(vkr_shm_data(src), n);

	double *t = calloc((size_t)reps * (size_t)sizes, sizeof(*t));
	if (!t)
		return fail("calloc", -ENOMEM);
	struct timing timing = { client, src_region, dst_region, dst ? vkr_shm_data(dst) : NULL, mib, sizes, reps, t };
	if (reduce && (rc = time_requests(&timing, false)) < 0)
		return fail("reduce", rc);
	if (scan && (rc = time_requests(&timing, true)) < 0)
		return fail("scan", rc);
	free(t);
	vkr_shm_unregister(client, src_region);
	if (scan)
		vkr_shm_unregister(client, dst_region);
	vkr_close(client);
	vkr_shm_free(src);
	vkr_shm_free(dst); /* NULL with --only reduce */
	return 0;
}
