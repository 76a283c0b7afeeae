/*
 * client_ref.c: CPU references and a daemon runner for the client tests (see client_ref.h).
 *
 * The references are deliberately naive loops: they define the semantics, so they must be
 * obviously right rather than fast. Integer arithmetic is done in unsigned types so that it
 * wraps modulo 2^bits exactly as the daemon's does, without undefined behaviour.
 */
#include "client_ref.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- element access ------------------------------------------------------------------------ */

/* One element widened: floats to double, integers to 64 bits (signed or not as the dtype). */
struct elem {
	double f;
	uint64_t u; /* integer bits, sign-extended for signed types */
};

static size_t esize(vkr_dtype t)
{
	return (t == VKR_DTYPE_F64 || t == VKR_DTYPE_I64 || t == VKR_DTYPE_U64) ? 8 : 4;
}

static bool is_float(vkr_dtype t)
{
	return t == VKR_DTYPE_F32 || t == VKR_DTYPE_F64;
}

static bool is_signed(vkr_dtype t)
{
	return t == VKR_DTYPE_I32 || t == VKR_DTYPE_I64;
}

static struct elem load(vkr_dtype t, const void *data, size_t i)
{
	struct elem e = { 0 };
	const char *p = (const char *)data + i * esize(t);
	vkr_value v;
	memcpy(&v, p, esize(t));
	switch (t) {
	case VKR_DTYPE_F32: e.f = v.f32; break;
	case VKR_DTYPE_F64: e.f = v.f64; break;
	case VKR_DTYPE_I32: e.u = (uint64_t)(int64_t)v.i32; break;
	case VKR_DTYPE_U32: e.u = v.u32; break;
	case VKR_DTYPE_I64: e.u = (uint64_t)v.i64; break;
	default: e.u = v.u64; break;
	}
	return e;
}

static struct elem from_value(vkr_dtype t, vkr_value v)
{
	vkr_value tmp[1] = { v };
	return load(t, tmp, 0);
}

static vkr_value to_value(vkr_dtype t, struct elem e)
{
	vkr_value v;
	memset(&v, 0, sizeof(v));
	switch (t) {
	case VKR_DTYPE_F32: v.f32 = (float)e.f; break;
	case VKR_DTYPE_F64: v.f64 = e.f; break;
	case VKR_DTYPE_I32: v.i32 = (int32_t)(uint32_t)e.u; break;
	case VKR_DTYPE_U32: v.u32 = (uint32_t)e.u; break;
	case VKR_DTYPE_I64: v.i64 = (int64_t)e.u; break;
	default: v.u64 = e.u; break;
	}
	return v;
}

static void store(vkr_dtype t, void *data, size_t i, struct elem e)
{
	vkr_value v = to_value(t, e);
	memcpy((char *)data + i * esize(t), &v, esize(t));
}

/* a < b in the dtype's order (integers only). */
static bool int_less(vkr_dtype t, uint64_t a, uint64_t b)
{
	if (is_signed(t))
		return (int64_t)a < (int64_t)b;
	return a < b;
}

static struct elem neutral(vkr_op op, vkr_dtype t)
{
	struct elem e = { 0 };
	bool wide = esize(t) == 8;
	switch (op) {
	case VKR_OP_PROD:
		e.f = 1;
		e.u = 1;
		break;
	case VKR_OP_MIN:
		e.f = INFINITY;
		e.u = is_signed(t) ? (wide ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX)
		                   : (wide ? UINT64_MAX : UINT32_MAX);
		break;
	case VKR_OP_MAX:
		e.f = -INFINITY;
		e.u = is_signed(t) ? (wide ? (uint64_t)INT64_MIN : (uint64_t)(int64_t)INT32_MIN) : 0;
		break;
	default:
		break;
	}
	return e;
}

/* One step of op. Floats fold in double (the references of sums and products); min/max
 * propagate NaN like numpy. Integers wrap; narrowing happens in store/to_value. */
static struct elem step(vkr_op op, vkr_dtype t, struct elem a, struct elem b)
{
	struct elem r = a;
	if (is_float(t)) {
		switch (op) {
		case VKR_OP_SUM: r.f = a.f + b.f; break;
		case VKR_OP_PROD: r.f = a.f * b.f; break;
		case VKR_OP_MIN: r.f = (isnan(a.f) || isnan(b.f)) ? NAN : (b.f < a.f ? b.f : a.f); break;
		default: r.f = (isnan(a.f) || isnan(b.f)) ? NAN : (b.f > a.f ? b.f : a.f); break;
		}
		return r;
	}
	switch (op) {
	case VKR_OP_SUM: r.u = a.u + b.u; break;
	case VKR_OP_PROD: r.u = a.u * b.u; break;
	case VKR_OP_MIN: r.u = int_less(t, b.u, a.u) ? b.u : a.u; break;
	default: r.u = int_less(t, a.u, b.u) ? b.u : a.u; break;
	}
	return r;
}

static bool cmp_holds(vkr_dtype t, vkr_cmp cmp, struct elem x, struct elem v)
{
	int c;
	if (is_float(t)) {
		double a = x.f, b = v.f;
		if (t == VKR_DTYPE_F32) { /* compare as the device does, in f32 */
			a = (float)a;
			b = (float)b;
		}
		if (isnan(a) || isnan(b))
			return cmp == VKR_CMP_NE;
		c = a < b ? -1 : (a > b ? 1 : 0);
	} else {
		c = int_less(t, x.u, v.u) ? -1 : (int_less(t, v.u, x.u) ? 1 : 0);
	}
	switch (cmp) {
	case VKR_CMP_EQ: return c == 0;
	case VKR_CMP_NE: return c != 0;
	case VKR_CMP_LT: return c < 0;
	case VKR_CMP_LE: return c <= 0;
	case VKR_CMP_GT: return c > 0;
	default: return c >= 0;
	}
}

/* ---- references ---------------------------------------------------------------------------- */

int ref_reduce(vkr_op op, vkr_dtype t, const void *data, size_t n, const vkr_reduce_opts *opts,
               vkr_value *out)
{
	memset(out, 0, sizeof(*out));
	if (op == VKR_OP_COUNT) {
		uint64_t k = 0;
		for (size_t i = 0; i < n; i++)
			k += opts ? cmp_holds(t, opts->cmp, load(t, data, i), from_value(t, opts->value))
			          : 1;
		out->u64 = k;
		return 0;
	}
	if (n == 0 && (op == VKR_OP_MIN || op == VKR_OP_MAX))
		return VKR_EINVALID_ARGUMENT;
	struct elem acc = neutral(op, t);
	for (size_t i = 0; i < n; i++)
		acc = step(op, t, acc, load(t, data, i));
	*out = to_value(t, acc);
	return 0;
}

void ref_scan(vkr_op op, vkr_dtype t, const void *data, size_t n, bool exclusive, void *out)
{
	struct elem acc = neutral(op, t);
	for (size_t i = 0; i < n; i++) {
		struct elem x = load(t, data, i);
		if (exclusive) {
			store(t, out, i, acc);
			acc = step(op, t, acc, x);
		} else {
			acc = step(op, t, acc, x);
			store(t, out, i, acc);
		}
	}
}

/* The float tolerance of the issue: (ceil(log2 n) + 4) * eps * sum|x| for sums. Products
 * take one rounding per factor whatever the order, and the device's rounding errors need not
 * cancel (one accumulator per invocation folds thousands of factors near 1): use the
 * rigorous bound of n - 1 roundings, relative to the product, plus the same slack k. */
static double tolerance(vkr_op op, vkr_dtype t, size_t n, double abs_sum, double ref)
{
	double eps = t == VKR_DTYPE_F32 ? ldexp(1.0, -24) : ldexp(1.0, -53);
	double k = (n > 1 ? ceil(log2((double)n)) : 0) + 4;
	if (op == VKR_OP_PROD)
		return ((double)n + k) * eps * fabs(ref);
	return k * eps * abs_sum;
}

static bool float_ok(vkr_op op, vkr_dtype t, size_t n, double abs_sum, double ref, double got)
{
	if (isnan(ref) || isnan(got))
		return isnan(ref) && isnan(got);
	if (op == VKR_OP_MIN || op == VKR_OP_MAX || isinf(ref))
		return got == (t == VKR_DTYPE_F32 ? (double)(float)ref : ref);
	return fabs(got - ref) <= tolerance(op, t, n, abs_sum, ref);
}

static void fmt_elem(vkr_dtype t, struct elem e, char *buf, size_t size)
{
	if (is_float(t))
		snprintf(buf, size, "%.17g", e.f);
	else if (is_signed(t))
		snprintf(buf, size, "%lld", (long long)(int64_t)e.u);
	else
		snprintf(buf, size, "%llu", (unsigned long long)e.u);
}

bool ref_reduce_ok(vkr_op op, vkr_dtype t, const void *data, size_t n,
                   const vkr_reduce_opts *opts, vkr_value got, char *why, size_t why_size)
{
	vkr_value want;
	char a[64], b[64];

	if (ref_reduce(op, t, data, n, opts, &want) < 0) {
		snprintf(why, why_size, "reference says this request is invalid");
		return false;
	}
	if (op == VKR_OP_COUNT) {
		if (got.u64 == want.u64)
			return true;
		snprintf(why, why_size, "count %llu, want %llu", (unsigned long long)got.u64,
		         (unsigned long long)want.u64);
		return false;
	}
	if (!is_float(t)) {
		struct elem g = from_value(t, got), w = from_value(t, want);
		if (g.u == w.u)
			return true;
		fmt_elem(t, g, a, sizeof(a));
		fmt_elem(t, w, b, sizeof(b));
		snprintf(why, why_size, "got %s, want %s", a, b);
		return false;
	}
	/* Floats: the reference in double (not rounded to f32) against the tolerance. */
	struct elem acc = neutral(op, t);
	double abs_sum = 0;
	for (size_t i = 0; i < n; i++) {
		struct elem x = load(t, data, i);
		acc = step(op, t, acc, x);
		abs_sum += fabs(x.f);
	}
	double g = from_value(t, got).f;
	if (float_ok(op, t, n, abs_sum, acc.f, g))
		return true;
	snprintf(why, why_size, "got %.17g, want %.17g (tolerance %.3g)", g, acc.f,
	         tolerance(op, t, n, abs_sum, acc.f));
	return false;
}

bool ref_scan_ok(vkr_op op, vkr_dtype t, const void *data, size_t n, bool exclusive,
                 const void *got, char *why, size_t why_size)
{
	struct elem acc = neutral(op, t);
	double abs_sum = 0;
	char a[64], b[64];

	for (size_t i = 0; i < n; i++) {
		struct elem x = load(t, data, i), want;
		if (exclusive) {
			want = acc;
			acc = step(op, t, acc, x);
		} else {
			acc = step(op, t, acc, x);
			want = acc;
		}
		struct elem g = load(t, got, i);
		bool ok;
		if (is_float(t)) {
			ok = float_ok(op, t, n, abs_sum + fabs(x.f), want.f, g.f);
		} else {
			store(t, &want, 0, want); /* narrow to the dtype, then widen back */
			want = load(t, &want, 0);
			ok = g.u == want.u;
		}
		abs_sum += fabs(x.f);
		if (!ok) {
			fmt_elem(t, g, a, sizeof(a));
			fmt_elem(t, want, b, sizeof(b));
			snprintf(why, why_size, "element %zu of %zu: got %s, want %s", i, n, a, b);
			return false;
		}
	}
	return true;
}

/* ---- inputs -------------------------------------------------------------------------------- */

uint64_t ref_rand(uint64_t *s)
{
	/* splitmix64: tiny, good enough, and the same everywhere for a given seed. */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void ref_fill(uint64_t *s, vkr_op op, vkr_dtype t, void *data, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t r = ref_rand(s);
		struct elem e = { 0 };
		double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
		if (is_float(t)) {
			e.f = op == VKR_OP_PROD ? 1.0 + (u - 0.5) / 256.0 : 2.0 * u - 1.0;
			if (t == VKR_DTYPE_F32)
				e.f = (float)e.f;
		} else if (op == VKR_OP_PROD) {
			/* Mostly odd small factors, so that wrapped products do not collapse to 0. */
			e.u = (r % 7) | 1;
			if (is_signed(t) && (r >> 40) % 2)
				e.u = (uint64_t) - (int64_t)e.u;
		} else {
			e.u = r;
		}
		store(t, data, i, e);
	}
}

uint64_t ref_seed(const char *test)
{
	const char *env = getenv("VKR_TEST_SEED");
	uint64_t seed;
	if (env && *env) {
		seed = strtoull(env, NULL, 0);
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
	}
	fprintf(stderr, "%s: seed %llu (set VKR_TEST_SEED to replay)\n", test,
	        (unsigned long long)seed);
	return seed;
}

/* ---- the daemon ---------------------------------------------------------------------------- */

int ref_daemon_start(struct ref_daemon *d, const char *const *extra)
{
	const char *exe = getenv("VKREDUCED");
	const char *argv[32];
	int argc = 0;

	memset(d, 0, sizeof(*d));
	if (!exe || !*exe) {
		fprintf(stderr, "VKREDUCED is not set: the test needs the daemon's path\n");
		return -ENOENT;
	}
	snprintf(d->dir, sizeof(d->dir), "%s/vkr-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
	                                                                         : "/tmp");
	if (!mkdtemp(d->dir))
		return -errno;
	snprintf(d->socket, sizeof(d->socket), "%s/vkreduce.sock", d->dir);

	argv[argc++] = exe;
	argv[argc++] = "--socket";
	argv[argc++] = d->socket;
	for (int i = 0; extra && extra[i] && argc < 30; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;

	d->pid = fork();
	if (d->pid < 0)
		return -errno;
	if (d->pid == 0) {
		/* The daemon runs with the suite's sanitizer settings, leak checks included; the
		 * engine keeps the driver loaded (VKR_PIN_DRIVER) so that the driver's own leak is
		 * suppressed by name in tests/lsan.supp. */
		setenv("VKR_PIN_DRIVER", "1", 1);
		execv(exe, (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	/* Lavapipe start-up and pipeline creation take a while under sanitizers: wait up to a
	 * minute for the first pong. */
	for (int i = 0; i < 1200; i++) {
		vkr_client *c;
		int status;
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			fprintf(stderr, "vkreduced exited during start-up (status %d)\n", status);
			d->pid = 0;
			return -ECHILD;
		}
		if (vkr_connect(d->socket, &c) == 0) {
			int err = vkr_ping(c);
			vkr_close(c);
			if (err == 0)
				return 0;
		}
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "vkreduced did not answer within a minute\n");
	ref_daemon_stop(d);
	return -ETIMEDOUT;
}

int ref_daemon_stop(struct ref_daemon *d)
{
	int status = 0, ret = 0;

	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status))
			ret = WEXITSTATUS(status);
		else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM)
			ret = -1;
		d->pid = 0;
	}
	unlink(d->socket);
	rmdir(d->dir);
	return ret;
}
