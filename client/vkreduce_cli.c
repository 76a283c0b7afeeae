/*
 * vkreduce: the command-line face of libvkreduce. Reduces or scans an array read from a file
 * or stdin through the daemon, and shows what the daemon is (info) and has done (stats).
 *
 * Inputs above a threshold go through shared memory: the file is read straight into a memfd
 * and the daemon maps it, instead of being copied into a message (and, for scans, copied back
 * out). Exit status: 0 on success, 1 on a failure, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto_names.h"
#include "vkreduce.h"

#define DEFAULT_SHM_THRESHOLD ((size_t)1 << 20)
#define PROGRESS_AFTER_S 1.0

static const char *prog = "vkreduce";

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: %s COMMAND [options] [FILE|-]\n"
	        "\n"
	        "Reduce or scan an array on the GPU through the vkreduced daemon.\n"
	        "\n"
	        "commands:\n"
	        "  sum | prod | min | max   reduce the array and print the result\n"
	        "  count                    count the elements x with x CMP V (needs --cmp, --value)\n"
	        "  scan                     prefix scan (inclusive unless --exclusive); --op picks\n"
	        "                           sum (default), prod, min or max\n"
	        "  ping                     check that the daemon answers\n"
	        "  info                     the daemon's device, version and limits\n"
	        "  stats                    the daemon's counters as a table; with --prometheus\n"
	        "                           in the Prometheus text format (for the node exporter's\n"
	        "                           textfile collector)\n"
	        "\n"
	        "options:\n"
	        "  -t, --dtype T            element type: f32 (default), f64, i32, u32, i64, u64\n"
	        "  -x, --exclusive          exclusive scan: the first output is the neutral element\n"
	        "      --op OP              operation of scan (sum, prod, min, max)\n"
	        "      --cmp OP --value V   count: compare with eq, ne, lt, le, gt or ge against V\n"
	        "      --text               input is text, one decimal number a line (blank\n"
	        "                           lines and lines starting with # are skipped);\n"
	        "                           default is raw little-endian binary\n"
	        "  -o, --output FILE        scan: write the result as binary to FILE (default:\n"
	        "                           text to stdout, one number a line)\n"
	        "  -s, --socket PATH        daemon socket (default: $VKREDUCE_SOCKET, else\n"
	        "                           /run/vkreduce/vkreduce.sock as root, else\n"
	        "                           $XDG_RUNTIME_DIR/vkreduce.sock)\n"
	        "      --shm-threshold N    send inputs of N bytes or more through shared memory\n"
	        "                           (default 1048576)\n"
	        "  -h, --help               show this help\n"
	        "\n"
	        "examples:\n"
	        "  seq 1 100 | %s sum --text --dtype i64\n"
	        "  %s max --dtype f64 data.bin\n"
	        "  %s count --dtype i32 --cmp gt --value 0 data.bin\n"
	        "  %s scan --exclusive -o prefix.bin data.bin\n",
	        prog, prog, prog, prog, prog);
}

static void die(int status, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static void die_vkr(vkr_client *c, const char *what, int err)
{
	const char *msg = c ? vkr_last_error_message(c) : "";
	if (err <= -VKR_ERROR_BASE && *msg)
		die(1, "%s: %s (%s)", what, vkr_strerror(err), msg);
	die(1, "%s: %s", what, vkr_strerror(err));
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Prints progress on stderr, but only once an operation has taken longer than a second:
 * quick runs stay quiet. */
struct progress {
	const char *what;
	double start, last;
	bool shown;
};

static void progress_update(struct progress *p, size_t done, size_t total)
{
	double t = now_s();
	if (t - p->start < PROGRESS_AFTER_S || t - p->last < 0.25)
		return;
	p->last = t;
	p->shown = true;
	if (total)
		fprintf(stderr, "\r%s: %.1f / %.1f MiB (%.0f%%)   ", p->what, done / 1048576.0,
		        total / 1048576.0, 100.0 * (double)done / (double)total);
	else
		fprintf(stderr, "\r%s: %.1f MiB, %.0f s   ", p->what, done / 1048576.0, t - p->start);
}

static void progress_end(struct progress *p)
{
	if (p->shown)
		fputc('\n', stderr);
}

/* ---- input --------------------------------------------------------------------------------- */

struct input {
	void *data; /* borrowed from buf or shm */
	size_t bytes;
	void *buf; /* owned, may be NULL */
	vkr_shm *shm; /* owned, may be NULL */
};

/* Reads fd to EOF into a growing heap buffer. */
static void read_all(int fd, const char *name, size_t size_hint, struct input *in)
{
	struct progress p = { .what = "reading", .start = now_s() };
	size_t cap = size_hint ? size_hint + 1 : (size_t)1 << 16, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		die(1, "%s: out of memory", name);
	for (;;) {
		if (len == cap) {
			if (cap > SIZE_MAX / 2)
				die(1, "%s: input too large", name);
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				die(1, "%s: out of memory", name);
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die(1, "%s: %s", name, strerror(errno));
		}
		if (r == 0)
			break;
		len += (size_t)r;
		progress_update(&p, len, size_hint);
	}
	progress_end(&p);
	in->buf = buf;
	in->data = buf;
	in->bytes = len;
}

/* Reads a regular file of known size straight into shared memory. */
static void read_into_shm(int fd, const char *name, size_t size, struct input *in)
{
	struct progress p = { .what = "reading", .start = now_s() };
	int err = vkr_shm_create(size, &in->shm);
	size_t len = 0;

	if (err < 0)
		die(1, "shared memory of %zu bytes: %s", size, vkr_strerror(err));
	char *dst = vkr_shm_data(in->shm);
	while (len < size) {
		ssize_t r = read(fd, dst + len, size - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die(1, "%s: %s", name, strerror(errno));
		}
		if (r == 0)
			die(1, "%s: file shrank while being read", name);
		len += (size_t)r;
		progress_update(&p, len, size);
	}
	progress_end(&p);
	in->data = dst;
	in->bytes = size;
}

/*
 * Parses one number of dtype, with blanks around it: 0, -EINVAL when s is not a decimal number
 * or -ERANGE when it is one that dtype cannot hold.
 *
 * Numbers are decimal, as the help promises: strtoll with base 0 would read "010" as octal 8
 * and refuse "08", and strtod would read "0x10" as 16. So a number is an optional sign, then
 * a digit (floats: or a '.', or inf or nan); the strto* functions then read the rest in base
 * 10. Requiring that first character also stops them from skipping whitespace of their own,
 * behind which strtoull would take "-5" for 2^64 - 5. A float whose magnitude is too large
 * is out of range rather than infinity (inf itself may be written); one too small to be
 * normal rounds to a subnormal or zero, which is no error.
 */
static int parse_value(const char *s, vkr_dtype dtype, vkr_value *v)
{
	bool is_float = dtype == VKR_DTYPE_F32 || dtype == VKR_DTYPE_F64;
	bool out_of_range = false;
	const char *digits;
	char *end;

	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	digits = s + (*s == '+' || *s == '-');
	if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
		return -EINVAL;
	bool starts_number = (digits[0] >= '0' && digits[0] <= '9') ||
	                     (is_float && digits[0] != '\0' && strchr(".iInN", digits[0]));
	if (!starts_number)
		return -EINVAL;
	errno = 0;
	switch (dtype) {
	case VKR_DTYPE_F32:
		v->f32 = strtof(s, &end);
		out_of_range = errno == ERANGE && isinf(v->f32);
		break;
	case VKR_DTYPE_F64:
		v->f64 = strtod(s, &end);
		out_of_range = errno == ERANGE && isinf(v->f64);
		break;
	case VKR_DTYPE_I32: {
		long long x = strtoll(s, &end, 10);
		out_of_range = errno == ERANGE || x < INT32_MIN || x > INT32_MAX;
		v->i32 = (int32_t)x;
		break;
	}
	case VKR_DTYPE_I64:
		v->i64 = strtoll(s, &end, 10);
		out_of_range = errno == ERANGE;
		break;
	case VKR_DTYPE_U32:
	case VKR_DTYPE_U64: {
		/* The digits alone: strtoull would negate modulo 2^64 after a '-'. "-0" is zero. */
		unsigned long long x = strtoull(digits, &end, 10);
		out_of_range = errno == ERANGE || (*s == '-' && x != 0) ||
		               (dtype == VKR_DTYPE_U32 && x > UINT32_MAX);
		if (dtype == VKR_DTYPE_U32)
			v->u32 = (uint32_t)x;
		else
			v->u64 = x;
		break;
	}
	default:
		return -EINVAL;
	}
	if (end == s || end == digits)
		return -EINVAL;
	while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
		end++;
	if (*end != '\0')
		return -EINVAL;
	return out_of_range ? -ERANGE : 0;
}

/* Turns text (one number a line) into packed little-endian elements, in place of in. */
static void parse_text(struct input *in, vkr_dtype dtype, const char *name)
{
	size_t esize = proto_dtype_size(dtype), n = 0, cap = 1024, line = 0;
	unsigned char *out = malloc(cap * esize);
	char *text = malloc(in->bytes + 1);

	/* The lines are C strings: a NUL would silently end one and drop the rest of the input.
	 * Text has none, but UTF-16 (one in every other byte) or a binary file given --text do. */
	const char *nul = memchr(in->data, '\0', in->bytes);
	if (nul) {
		size_t offset = (size_t)(nul - (const char *)in->data), nul_line = 1;
		for (const char *c = in->data; c < nul; c++)
			nul_line += *c == '\n';
		die(1, "%s:%zu: NUL byte at offset %zu: --text wants plain text (ASCII or UTF-8, "
		    "not UTF-16 or binary)", name, nul_line, offset);
	}
	if (!out || !text)
		die(1, "out of memory");
	memcpy(text, in->data, in->bytes);
	text[in->bytes] = '\0';
	for (char *p = text;;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		line++;
		const char *q = p;
		while (*q == ' ' || *q == '\t' || *q == '\r')
			q++;
		if (*q && *q != '#') {
			vkr_value v;
			int err = parse_value(p, dtype, &v);
			if (err == -ERANGE)
				die(1, "%s:%zu: out of range for %s: \"%.40s\"", name, line,
				    proto_dtype_name(dtype), p);
			if (err < 0)
				die(1, "%s:%zu: not a decimal %s: \"%.40s\"", name, line,
				    proto_dtype_name(dtype), p);
			if (n == cap) {
				unsigned char *no = realloc(out, cap * 2 * esize);
				if (!no)
					die(1, "out of memory");
				out = no;
				cap *= 2;
			}
			memcpy(out + n * esize, &v, esize);
			n++;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	free(text);
	vkr_shm_free(in->shm);
	in->shm = NULL;
	free(in->buf);
	in->buf = out;
	in->data = out;
	in->bytes = n * esize;
}

static void input_load(const char *path, bool text, vkr_dtype dtype, size_t shm_threshold,
                       struct input *in)
{
	const char *name = (!path || strcmp(path, "-") == 0) ? "stdin" : path;
	int fd = 0;
	struct stat st;

	memset(in, 0, sizeof(*in));
	if (strcmp(name, "stdin") != 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		die(1, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		die(1, "%s: %s", name, strerror(errno));
	bool regular = S_ISREG(st.st_mode) && st.st_size > 0;
	if (!text && regular && (size_t)st.st_size >= shm_threshold)
		read_into_shm(fd, name, (size_t)st.st_size, in);
	else
		read_all(fd, name, regular ? (size_t)st.st_size : 0, in);
	if (fd != 0)
		close(fd);
	if (text)
		parse_text(in, dtype, name);
	if (in->bytes % proto_dtype_size(dtype) != 0)
		die(1, "%s: %zu bytes is not a whole number of %s elements (%zu bytes each)", name,
		    in->bytes, proto_dtype_name(dtype), proto_dtype_size(dtype));
	/* Large input from a pipe or text: move it into shared memory now. */
	if (!in->shm && in->bytes >= shm_threshold && in->bytes > 0) {
		int err = vkr_shm_create(in->bytes, &in->shm);
		if (err < 0)
			die(1, "shared memory of %zu bytes: %s", in->bytes, vkr_strerror(err));
		memcpy(vkr_shm_data(in->shm), in->data, in->bytes);
		free(in->buf);
		in->buf = NULL;
		in->data = vkr_shm_data(in->shm);
	}
}

/* ---- running a request --------------------------------------------------------------------- */

struct done {
	bool done;
	int status;
	vkr_value value;
};

static void on_reduce(vkr_client *c, int status, const vkr_value *v, void *ud)
{
	struct done *d = ud;
	(void)c;
	d->status = status;
	if (v)
		d->value = *v;
	d->done = true;
}

static void on_scan(vkr_client *c, int status, uint64_t count, void *ud)
{
	struct done *d = ud;
	(void)c;
	(void)count;
	d->status = status;
	d->done = true;
}

/* Waits for the reply, telling the user what is going on when it takes a while. */
static void wait_done(vkr_client *c, struct done *d, size_t bytes)
{
	struct progress p = { .what = "waiting for the daemon", .start = now_s() };
	while (!d->done) {
		int r = vkr_dispatch(c, 250);
		if (r < 0 && !d->done)
			die_vkr(c, "daemon", r);
		progress_update(&p, bytes, 0);
	}
	progress_end(&p);
}

static void print_value(vkr_dtype dtype, bool count, vkr_value v)
{
	if (count) {
		printf("%" PRIu64 "\n", v.u64);
		return;
	}
	switch (dtype) {
	case VKR_DTYPE_F32:
		printf("%.9g\n", (double)v.f32);
		break;
	case VKR_DTYPE_F64:
		printf("%.17g\n", v.f64);
		break;
	case VKR_DTYPE_I32:
		printf("%" PRId32 "\n", v.i32);
		break;
	case VKR_DTYPE_U32:
		printf("%" PRIu32 "\n", v.u32);
		break;
	case VKR_DTYPE_I64:
		printf("%" PRId64 "\n", v.i64);
		break;
	default:
		printf("%" PRIu64 "\n", v.u64);
		break;
	}
}

static void write_scan(const void *data, size_t n, vkr_dtype dtype, const char *out_path)
{
	size_t esize = proto_dtype_size(dtype);

	if (out_path) {
		FILE *f = strcmp(out_path, "-") == 0 ? stdout : fopen(out_path, "wb");
		if (!f)
			die(1, "%s: %s", out_path, strerror(errno));
		if (n && fwrite(data, esize, n, f) != n)
			die(1, "%s: %s", out_path, strerror(errno));
		if (f != stdout ? fclose(f) != 0 : fflush(f) != 0)
			die(1, "%s: %s", out_path, strerror(errno));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		vkr_value v;
		memcpy(&v, (const char *)data + i * esize, esize);
		print_value(dtype, false, v);
	}
}

static void print_kvlist(const vkr_kvlist *l, const char *skip_prefix)
{
	size_t w = 0;
	for (size_t i = 0; i < l->count; i++)
		if (strlen(l->items[i].key) > w)
			w = strlen(l->items[i].key);
	for (size_t i = 0; i < l->count; i++) {
		const vkr_kv *kv = &l->items[i];
		if (skip_prefix && strncmp(kv->key, skip_prefix, strlen(skip_prefix)) == 0)
			continue;
		printf("%-*s  ", (int)w, kv->key);
		switch (kv->type) {
		case VKR_KV_NIL:
			printf("-\n");
			break;
		case VKR_KV_BOOL:
			printf("%s\n", kv->v.b ? "true" : "false");
			break;
		case VKR_KV_UINT:
			if (strcmp(kv->key, "device.api_version") == 0) /* VK_MAKE_API_VERSION layout */
				printf("%" PRIu64 ".%" PRIu64 ".%" PRIu64 "\n", (kv->v.u >> 22) & 0x7f,
				       (kv->v.u >> 12) & 0x3ff, kv->v.u & 0xfff);
			else
				printf("%" PRIu64 "\n", kv->v.u);
			break;
		case VKR_KV_INT:
			printf("%" PRId64 "\n", kv->v.i);
			break;
		case VKR_KV_FLOAT:
			printf("%g\n", kv->v.f);
			break;
		case VKR_KV_STR:
			printf("%s\n", kv->v.s);
			break;
		}
	}
}

/* ---- Prometheus text format ---------------------------------------------------------------- */

/* Keys of `stats` that are levels, not running totals (besides every "*_max"). A key the
 * daemon adds later is a counter unless listed here. */
static const char *const prom_gauges[] = {
	"connections", "regions", "region_bytes", "regions_imported", "memory_bytes", "users",
	"connections_waiting_memory",
};

static bool prom_is_gauge(const char *key)
{
	size_t len = strlen(key);
	if (len > 4 && strcmp(key + len - 4, "_max") == 0)
		return true;
	for (size_t i = 0; i < sizeof(prom_gauges) / sizeof(prom_gauges[0]); i++)
		if (strcmp(key, prom_gauges[i]) == 0)
			return true;
	return false;
}

/* The numeric value of an entry; false for strings and nil, which have no metric. */
static bool prom_value(const vkr_kv *kv, double *out)
{
	switch (kv->type) {
	case VKR_KV_BOOL: *out = kv->v.b; return true;
	case VKR_KV_UINT: *out = (double)kv->v.u; return true;
	case VKR_KV_INT: *out = (double)kv->v.i; return true;
	case VKR_KV_FLOAT: *out = kv->v.f; return true;
	default: return false;
	}
}

/* Writes name with every character outside [a-zA-Z0-9_] as '_' (metric names). */
static void prom_name(char *out, size_t size, const char *prefix, const char *name)
{
	size_t o = (size_t)snprintf(out, size, "%s", prefix);
	for (const char *p = name; *p && o + 1 < size; p++)
		out[o++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) ? *p : '_';
	out[o < size ? o : size - 1] = '\0';
}

/* Label values: the daemon's own names, but escaped as the format requires anyway. */
static void prom_label(const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			putchar('\\');
		if (*v == '\n')
			fputs("\\n", stdout);
		else
			putchar(*v);
	}
}

static void prom_header(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * Prints the stats in the Prometheus text exposition format (version 0.0.4), for the node
 * exporter's textfile collector. Per-method requests and per-code errors become labels of
 * one counter each (their "_total" sums are left out, as Prometheus sums labels itself);
 * durations in nanoseconds become seconds; the jobs-per-batch buckets become a cumulative
 * histogram; limits become one gauge labelled by name.
 */
/* The maps of stats that become one metric labelled by their keys. */
static const struct prom_labelled {
	const char *map, *metric, *type, *help, *label;
} prom_labelled[] = {
	{ "requests", "vkreduce_requests_total", "counter", "requests received, by method", "method" },
	{ "errors", "vkreduce_errors_total", "counter", "error replies, by wire error name", "error" },
	{ "limits", "vkreduce_limit", "gauge", "limits in force, by name", "name" },
};
#define PROM_LABELLED_COUNT (sizeof(prom_labelled) / sizeof(prom_labelled[0]))

static void print_prometheus(const vkr_kvlist *l)
{
	uint64_t hist[64] = { 0 };
	unsigned hist_top = 0;
	double hist_sum = 0, hist_count = 0;
	bool have_hist = false, said[PROM_LABELLED_COUNT] = { false };
	char name[160];

	for (size_t i = 0; i < l->count; i++) {
		const vkr_kv *kv = &l->items[i];
		const char *key = kv->key, *dot = strchr(key, '.');
		double v;

		if (!prom_value(kv, &v))
			continue;
		if (strcmp(key, "batch_jobs") == 0)
			hist_sum = v;
		if (strcmp(key, "batches") == 0)
			hist_count = v;
		if (!dot) {
			bool gauge = prom_is_gauge(key);
			const char *ns = strstr(key, "_ns");
			char base[128];
			/* Durations in seconds, as Prometheus expects. */
			if (ns && (ns[3] == '\0' || ns[3] == '_')) {
				snprintf(base, sizeof(base), "%.*s_seconds%s", (int)(ns - key), key, ns + 3);
				v /= 1e9;
			} else {
				snprintf(base, sizeof(base), "%s", key);
			}
			if (strcmp(key, "requests_total") == 0 || strcmp(key, "errors_total") == 0)
				continue;
			size_t len = strlen(base);
			if (!gauge && !(len > 6 && strcmp(base + len - 6, "_total") == 0))
				snprintf(base + len, sizeof(base) - len, "_total");
			prom_name(name, sizeof(name), "vkreduce_", base);
			prom_header(name, gauge ? "gauge" : "counter", key);
			printf("%s %.17g\n", name, v);
			continue;
		}
		size_t plen = (size_t)(dot - key);
		const char *sub = dot + 1;
		size_t m = 0;
		while (m < PROM_LABELLED_COUNT &&
		       !(strlen(prom_labelled[m].map) == plen && strncmp(key, prom_labelled[m].map, plen) == 0))
			m++;
		if (m < PROM_LABELLED_COUNT) {
			const struct prom_labelled *pl = &prom_labelled[m];
			if (!said[m])
				prom_header(pl->metric, pl->type, pl->help);
			said[m] = true;
			printf("%s{%s=\"", pl->metric, pl->label);
			prom_label(sub);
			printf("\"} %.17g\n", v);
		} else if (plen == 14 && strncmp(key, "jobs_per_batch", 14) == 0) {
			/* Bucket keys are the lower bounds 2^i of [2^i, 2^(i+1)). */
			unsigned long long lo = strtoull(sub, NULL, 10);
			unsigned b = 0;
			while (b < 63 && (lo >> (b + 1)) != 0)
				b++;
			hist[b] += (uint64_t)v;
			if (b + 1 > hist_top)
				hist_top = b + 1;
			have_hist = true;
		} else {
			/* A map the daemon added later: one untyped metric labelled by its keys. */
			char prefix[128];
			snprintf(prefix, sizeof(prefix), "%.*s", (int)plen, key);
			prom_name(name, sizeof(name), "vkreduce_", prefix);
			printf("%s{key=\"", name);
			prom_label(sub);
			printf("\"} %.17g\n", v);
		}
	}
	/* Always the same buckets (le = 2^(i+1) - 1 jobs), so that series do not come and go. */
	prom_header("vkreduce_batch_jobs", "histogram", "jobs per submitted batch");
	uint64_t cum = 0;
	for (unsigned b = 0; b < 21 || b < hist_top; b++) {
		cum += hist[b];
		printf("vkreduce_batch_jobs_bucket{le=\"%llu\"} %llu\n", (unsigned long long)((2ull << b) - 1),
		       (unsigned long long)cum);
	}
	(void)have_hist;
	printf("vkreduce_batch_jobs_bucket{le=\"+Inf\"} %.17g\n", hist_count);
	printf("vkreduce_batch_jobs_sum %.17g\n", hist_sum);
	printf("vkreduce_batch_jobs_count %.17g\n", hist_count);
}

/* ---- main ---------------------------------------------------------------------------------- */

struct opts {
	const char *cmd, *file, *socket, *out_path;
	vkr_dtype dtype;
	vkr_op scan_op;
	bool have_scan_op;      /* --op was given: scan takes it, the reductions refuse it */
	bool exclusive, text, have_cmp;
	bool prometheus;        /* stats in the Prometheus text format */
	vkr_cmp cmp;
	const char *value_str;
	size_t shm_threshold;
	/* The first option given that only commands reading an array take (--dtype, --op, ...),
	 * as typed, so that ping, info and stats refuse it instead of ignoring it; may be NULL. */
	const char *array_option;
};

static const char *need_arg(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc)
		die(2, "%s needs an argument (see --help)", argv[*i]);
	return argv[++*i];
}

/* Parses a byte count of decimal digits only: strtoull alone would take "-1" for 2^64 - 1
 * (it negates modulo 2^64), skip leading blanks, and with base 0 read "010" as 8. */
static bool parse_byte_count(const char *s, size_t *out)
{
	char *end;

	if (!(*s >= '0' && *s <= '9'))
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno == ERANGE || *end != '\0' || (unsigned long long)(size_t)v != v)
		return false;
	*out = (size_t)v;
	return true;
}

static bool is_array_option(const char *a)
{
	static const char *const names[] = {
		"-t", "--dtype", "-x", "--exclusive", "--op", "--cmp", "--value", "--text",
		"-o", "--output", "--shm-threshold",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(a, names[i]) == 0)
			return true;
	return false;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->dtype = VKR_DTYPE_F32;
	o->scan_op = VKR_OP_SUM;
	o->shm_threshold = DEFAULT_SHM_THRESHOLD;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!o->array_option && is_array_option(a))
			o->array_option = a;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(a, "-t") == 0 || strcmp(a, "--dtype") == 0) {
			const char *t = need_arg(argc, argv, &i);
			if (!proto_dtype_parse(t, strlen(t), &o->dtype))
				die(2, "unknown dtype '%s' (f32, f64, i32, u32, i64, u64)", t);
		} else if (strcmp(a, "-x") == 0 || strcmp(a, "--exclusive") == 0) {
			o->exclusive = true;
		} else if (strcmp(a, "--op") == 0) {
			const char *t = need_arg(argc, argv, &i);
			if (!proto_op_parse(t, strlen(t), &o->scan_op) || o->scan_op == VKR_OP_COUNT)
				die(2, "unknown scan op '%s' (sum, prod, min, max)", t);
			o->have_scan_op = true;
		} else if (strcmp(a, "--cmp") == 0) {
			const char *t = need_arg(argc, argv, &i);
			if (!proto_cmp_parse(t, strlen(t), &o->cmp))
				die(2, "unknown comparison '%s' (eq, ne, lt, le, gt, ge)", t);
			o->have_cmp = true;
		} else if (strcmp(a, "--value") == 0) {
			o->value_str = need_arg(argc, argv, &i);
		} else if (strcmp(a, "--prometheus") == 0) {
			o->prometheus = true;
		} else if (strcmp(a, "--text") == 0) {
			o->text = true;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
			o->out_path = need_arg(argc, argv, &i);
		} else if (strcmp(a, "-s") == 0 || strcmp(a, "--socket") == 0) {
			o->socket = need_arg(argc, argv, &i);
		} else if (strcmp(a, "--shm-threshold") == 0) {
			const char *t = need_arg(argc, argv, &i);
			if (!parse_byte_count(t, &o->shm_threshold) || o->shm_threshold == 0)
				die(2, "--shm-threshold wants a positive byte count in decimal "
				    "digits, not '%s'", t);
		} else if (a[0] == '-' && a[1] != '\0') {
			die(2, "unknown option '%s' (see --help)", a);
		} else if (!o->cmd) {
			o->cmd = a;
		} else if (!o->file) {
			o->file = a;
		} else {
			die(2, "unexpected argument '%s' (one input file at most)", a);
		}
	}
	if (!o->cmd) {
		usage(stderr);
		exit(2);
	}
}

static int run_array(vkr_client *c, const struct opts *o)
{
	bool scan = strcmp(o->cmd, "scan") == 0;
	vkr_op op = o->scan_op;
	vkr_reduce_opts ropts;
	struct input in;
	struct done d = { 0 };
	vkr_region region = 0;
	int err;

	if (!scan && !proto_op_parse(o->cmd, strlen(o->cmd), &op))
		die(2, "unknown command '%s' (see --help)", o->cmd);
	if ((o->have_cmp || o->value_str) && op != VKR_OP_COUNT)
		die(2, "--cmp and --value only apply to count");
	if (o->have_cmp != (o->value_str != NULL))
		die(2, "--cmp and --value go together");
	if (op == VKR_OP_COUNT && !o->have_cmp)
		die(2, "count needs --cmp OP --value V (e.g. --cmp gt --value 0)");
	if (o->have_scan_op && !scan)
		die(2, "--op only applies to scan");
	if (o->exclusive && !scan)
		die(2, "--exclusive only applies to scan");
	if (o->out_path && !scan)
		die(2, "-o only applies to scan");
	if (o->have_cmp) {
		ropts.cmp = o->cmp;
		int verr = parse_value(o->value_str, o->dtype, &ropts.value);
		if (verr == -ERANGE)
			die(2, "--value '%s' is out of range for %s", o->value_str,
			    proto_dtype_name(o->dtype));
		if (verr < 0)
			die(2, "--value '%s' is not a decimal %s", o->value_str,
			    proto_dtype_name(o->dtype));
	}

	input_load(o->file, o->text, o->dtype, o->shm_threshold, &in);
	size_t n = in.bytes / proto_dtype_size(o->dtype);

	if (in.shm) {
		/* Scans write their result back into the same region, in place. */
		if ((err = vkr_shm_register(c, in.shm, scan, &region)) < 0)
			die_vkr(c, "registering shared memory", err);
		if (scan)
			err = vkr_scan_shm_async(c, op, o->dtype, region, 0, n, o->exclusive, region, 0,
			                         on_scan, &d);
		else
			err = vkr_reduce_shm_async(c, op, o->dtype, region, 0, n,
			                           o->have_cmp ? &ropts : NULL, on_reduce, &d);
	} else if (scan) {
		err = vkr_scan_async(c, op, o->dtype, in.data, n, o->exclusive, in.data, on_scan, &d);
	} else {
		err = vkr_reduce_async(c, op, o->dtype, in.data, n, o->have_cmp ? &ropts : NULL,
		                       on_reduce, &d);
	}
	if (err < 0)
		die_vkr(c, o->cmd, err);
	wait_done(c, &d, in.bytes);
	if (d.status < 0)
		die_vkr(c, o->cmd, d.status);
	if (scan)
		write_scan(in.data, n, o->dtype, o->out_path);
	else
		print_value(o->dtype, op == VKR_OP_COUNT, d.value);
	if (in.shm && (err = vkr_shm_unregister(c, region)) < 0)
		die_vkr(c, "unregistering shared memory", err);
	vkr_shm_free(in.shm);
	free(in.buf);
	if (fflush(stdout) != 0)
		die(1, "stdout: %s", strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	vkr_client *c = NULL;
	vkr_kvlist *kv = NULL;
	int err;

	parse_args(argc, argv, &o);
	bool is_meta = strcmp(o.cmd, "ping") == 0 || strcmp(o.cmd, "info") == 0 ||
	               strcmp(o.cmd, "stats") == 0;
	if (is_meta && o.file)
		die(2, "%s takes no input file", o.cmd);
	if (is_meta && o.array_option)
		die(2, "%s takes no %s (it reads no array)", o.cmd, o.array_option);
	if (o.prometheus && strcmp(o.cmd, "stats") != 0)
		die(2, "--prometheus only applies to stats");
	if (!is_meta && strcmp(o.cmd, "scan") != 0) {
		vkr_op op;
		if (!proto_op_parse(o.cmd, strlen(o.cmd), &op))
			die(2, "unknown command '%s' (see --help)", o.cmd);
	}

	if ((err = vkr_connect(o.socket, &c)) < 0) {
		if (err == -ENOENT && !o.socket && !getenv("VKREDUCE_SOCKET") &&
		    !getenv("XDG_RUNTIME_DIR") && geteuid() != 0)
			die(1, "no socket path: set VKREDUCE_SOCKET or XDG_RUNTIME_DIR, or pass --socket");
		die(1, "cannot connect to the daemon at %s: %s",
		    o.socket ? o.socket : "the default socket", vkr_strerror(err));
	}

	if (strcmp(o.cmd, "ping") == 0) {
		double t0 = now_s();
		if ((err = vkr_ping(c)) < 0)
			die_vkr(c, "ping", err);
		printf("pong (%.0f us)\n", (now_s() - t0) * 1e6);
	} else if (strcmp(o.cmd, "info") == 0) {
		if ((err = vkr_hello(c, "vkreduce-cli", &kv)) < 0)
			die_vkr(c, "hello", err);
		print_kvlist(kv, NULL);
	} else if (strcmp(o.cmd, "stats") == 0) {
		if ((err = vkr_stats(c, &kv)) < 0)
			die_vkr(c, "stats", err);
		if (o.prometheus)
			print_prometheus(kv);
		else
			print_kvlist(kv, NULL);
	} else {
		run_array(c, &o);
	}
	vkr_kvlist_free(kv);
	vkr_close(c);
	if (fflush(stdout) != 0)
		die(1, "stdout: %s", strerror(errno));
	return 0;
}
