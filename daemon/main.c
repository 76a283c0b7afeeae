/* main.c: vkreduced: flags, device, loop, signals, orderly shutdown. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <uv.h>

#include "batch.h"
#include "conn.h"
#include "daemon.h"
#include "gpu.h"
#include "daemon_limits.h"
#include "log.h"
#include "proto_path.h"
#include "server.h"
#include "vkr_config.h"

enum {
	OPT_SOCKET = 's',
	OPT_DEVICE = 'd',
	OPT_HELP = 'h',
	OPT_VERSION = 'V',
	OPT_LOG_LEVEL = 256,
	OPT_SOCKET_MODE,
	OPT_VALIDATION,
	OPT_LIMIT_FIRST, /* limits follow in table order */
};

static const struct {
	const char *flag;
	uint64_t def, lo, hi;
	const char *help;
	size_t offset;
} limit_flags[] = {
#define LIMITS_X_(field, flag, def, lo, hi, help) { flag, def, lo, hi, help, offsetof(struct limits, field) },
	LIMITS_MAP(LIMITS_X_)
#undef LIMITS_X_
};
#define LIMIT_COUNT (sizeof(limit_flags) / sizeof(limit_flags[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: vkreduced [OPTION]...\n"
		"Serve GPU reductions and scans to local clients over a Unix socket (msgpack-RPC).\n"
		"Runs in the foreground and logs to stderr; SIGTERM or SIGINT finish accepted work and exit.\n"
		"\n"
		"  -s, --socket PATH        listen here (default: $VKREDUCE_SOCKET, else\n"
		"                           /run/vkreduce/vkreduce.sock as root, else\n"
		"                           $XDG_RUNTIME_DIR/vkreduce.sock)\n"
		"      --socket-mode MODE   octal permissions of the socket (default 0660)\n"
		"  -d, --device NAME|INDEX  Vulkan device by index or name substring (default: $VKR_DEVICE,\n"
		"                           else the best: discrete > integrated > virtual > cpu)\n"
		"      --log-level LEVEL    error, warn, info (default) or debug\n"
		"      --validation         enable the Khronos validation layer (also VKR_VALIDATION=1);\n"
		"                           the exit status is 3 if it reported anything\n"
		"  -h, --help               show this help\n"
		"  -V, --version            show the version\n"
		"\n"
		"Limits (sizes accept a k, M or G suffix, powers of 1024):\n");
	for (size_t i = 0; i < LIMIT_COUNT; i++)
		fprintf(f, "      --%-24s %s (default %" PRIu64 ")\n", limit_flags[i].flag, limit_flags[i].help,
			limit_flags[i].def);
	fprintf(f, "\nThe protocol is documented in PROTOCOL.md (proto/ in the source tree).\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -errno;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'M')
		shift = 20;
	else if (*end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end != '\0')
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

struct options {
	const char *socket;   /* borrowed from argv, may be NULL */
	const char *device;   /* borrowed from argv, may be NULL */
	mode_t socket_mode;
	bool validation;
};

/* Returns 0 to run, 1 to exit successfully (help, version), -1 on a usage error. */
static int parse_args(int argc, char **argv, struct options *o, struct limits *limits)
{
	struct option longopts[8 + LIMIT_COUNT + 1];
	size_t n = 0;
	int c;

	longopts[n++] = (struct option){ "socket", required_argument, NULL, OPT_SOCKET };
	longopts[n++] = (struct option){ "device", required_argument, NULL, OPT_DEVICE };
	longopts[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	longopts[n++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	longopts[n++] = (struct option){ "log-level", required_argument, NULL, OPT_LOG_LEVEL };
	longopts[n++] = (struct option){ "socket-mode", required_argument, NULL, OPT_SOCKET_MODE };
	longopts[n++] = (struct option){ "validation", no_argument, NULL, OPT_VALIDATION };
	for (size_t i = 0; i < LIMIT_COUNT; i++)
		longopts[n++] = (struct option){ limit_flags[i].flag, required_argument, NULL, OPT_LIMIT_FIRST + (int)i };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };

	while ((c = getopt_long(argc, argv, "s:d:hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET: o->socket = optarg; break;
		case OPT_DEVICE: o->device = optarg; break;
		case OPT_HELP: usage(stdout); return 1;
		case OPT_VERSION: printf("vkreduced %s\n", VKR_VERSION); return 1;
		case OPT_VALIDATION: o->validation = true; break;
		case OPT_LOG_LEVEL: {
			enum log_level level;
			if (log_level_parse(optarg, &level)) {
				fprintf(stderr, "vkreduced: --log-level: expected error, warn, info or debug, got '%s'\n", optarg);
				return -1;
			}
			log_set_level(level);
			break;
		}
		case OPT_SOCKET_MODE: {
			char *end;
			unsigned long mode = strtoul(optarg, &end, 8);
			if (*optarg == '\0' || *end != '\0' || mode > 07777) {
				fprintf(stderr, "vkreduced: --socket-mode: expected an octal mode like 0660, got '%s'\n", optarg);
				return -1;
			}
			o->socket_mode = (mode_t)mode;
			break;
		}
		default:
			if (c >= OPT_LIMIT_FIRST && c < OPT_LIMIT_FIRST + (int)LIMIT_COUNT) {
				size_t i = (size_t)(c - OPT_LIMIT_FIRST);
				uint64_t v;
				if (parse_u64(optarg, &v) || v < limit_flags[i].lo || v > limit_flags[i].hi) {
					fprintf(stderr, "vkreduced: --%s: expected a number from %" PRIu64 " to %" PRIu64
						", got '%s'\n", limit_flags[i].flag, limit_flags[i].lo, limit_flags[i].hi, optarg);
					return -1;
				}
				*(uint64_t *)((char *)limits + limit_flags[i].offset) = v;
				break;
			}
			fprintf(stderr, "Try 'vkreduced --help' for more information.\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vkreduced: unexpected argument '%s'\nTry 'vkreduced --help'.\n", argv[optind]);
		return -1;
	}
	return 0;
}

static uv_signal_t sig_term, sig_int;

/* The last accepted request is answered: close everything so that uv_run returns. */
static void finish(struct vkrd *d)
{
	conn_flush_dirty(d);
	conn_close_all(d);
	batch_close(d->batch);
	uv_close((uv_handle_t *)&sig_term, NULL);
	uv_close((uv_handle_t *)&sig_int, NULL);
	d->on_idle = NULL;
}

static void on_signal(uv_signal_t *handle, int signum)
{
	struct vkrd *d = handle->data;

	if (d->shutting_down) {
		log_warn("second %s: exiting without waiting for the GPU", strsignal(signum));
		exit(1);
	}
	log_info("%s: finishing accepted work, then exiting", strsignal(signum));
	d->shutting_down = true;
	server_destroy(d->server);
	d->server = NULL;
	d->on_idle = finish;
	if (batch_idle(d->batch))
		finish(d);
}

int main(int argc, char **argv)
{
	struct options o = { .socket_mode = 0660 };
	struct gpu_config cfg = { 0 };
	struct vkrd d;
	uv_loop_t loop;
	char path[108];
	char err[512];
	int status = 0;
	int r;

	memset(&d, 0, sizeof(d));
	limits_init(&d.limits);
	r = parse_args(argc, argv, &o, &d.limits);
	if (r)
		return r > 0 ? 0 : 2;
	/* A peer that goes away mid-reply must not kill the daemon (sends use MSG_NOSIGNAL too). */
	signal(SIGPIPE, SIG_IGN);

	if (o.socket) {
		if (strlen(o.socket) >= sizeof(path)) {
			fprintf(stderr, "vkreduced: --socket: path longer than %zu bytes\n", sizeof(path) - 1);
			return 2;
		}
		snprintf(path, sizeof(path), "%s", o.socket);
	} else if ((r = proto_default_socket_path(path, sizeof(path)))) {
		fprintf(stderr, "vkreduced: no socket path: %s (pass --socket, or set VKREDUCE_SOCKET or XDG_RUNTIME_DIR)\n",
			strerror(-r));
		return 2;
	}

	cfg.device = o.device;
	cfg.validation = o.validation;
	cfg.verbose = log_get_level() >= LOG_LEVEL_DEBUG;
	if ((r = gpu_create(&cfg, &d.gpu, err, sizeof(err)))) {
		log_error("no GPU: %s", err);
		return 1;
	}
	{
		const struct gpu_info *info = gpu_get_info(d.gpu);
		log_info("device: %s (%s, subgroup %u, f64 %s, i64 %s, host import %s)", info->name, info->type,
			 info->subgroup_size, info->shader_float64 ? "yes" : "no", info->shader_int64 ? "yes" : "no",
			 info->host_import ? "yes" : "no");
	}
	if ((r = uv_loop_init(&loop))) {
		log_error("uv_loop_init: %s", uv_strerror(r));
		gpu_destroy(d.gpu);
		return 1;
	}
	d.loop = &loop;
	if ((r = batch_create(&d, &d.batch, err, sizeof(err)))) {
		log_error("batch: %s", err);
		status = 1;
		goto out_loop;
	}
	if ((r = server_create(&d, path, o.socket_mode, &d.server, err, sizeof(err)))) {
		log_error("%s", err);
		status = 1;
		batch_close(d.batch);
		goto out_loop;
	}
	uv_signal_init(&loop, &sig_term);
	uv_signal_init(&loop, &sig_int);
	sig_term.data = sig_int.data = &d;
	uv_signal_start(&sig_term, on_signal, SIGTERM);
	uv_signal_start(&sig_int, on_signal, SIGINT);
	log_info("listening on %s", path);

	uv_run(&loop, UV_RUN_DEFAULT);

out_loop:
	/* Let close callbacks run. */
	uv_run(&loop, UV_RUN_DEFAULT);
	batch_destroy(d.batch);
	if (uv_loop_close(&loop))
		log_warn("loop closed with open handles");
	if (gpu_validation_messages(d.gpu) > 0) {
		log_error("the validation layer reported %" PRIu64 " messages", gpu_validation_messages(d.gpu));
		status = 3;
	}
	gpu_destroy(d.gpu);
	log_info("exited");
	return status;
}
