/*
 * main.c: vkreduced: flags and configuration, the device, the loop, the service manager's
 * protocols (socket activation, readiness, reload, stop), and the orderly drain on SIGTERM.
 *
 * Shutdown runs in phases so that nothing accepted is dropped silently:
 *   1. SIGTERM/SIGINT: STOPPING=1, the listener closes, new requests are answered "shutting
 *      down" (retryable); queued and running work continues.
 *   2. When the batch is idle (or the drain timeout answered what was still queued with
 *      "shutting down" and the GPU finished what it had), each connection reads and answers
 *      what its client already sent, then closes once its replies are written.
 *   3. When every connection is closed (or FLUSH_GRACE_MS later), the loop's handles close
 *      and the process exits 0.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "access.h"
#include "batch.h"
#include "config.h"
#include "conn.h"
#include "daemon.h"
#include "gpu.h"
#include "irq_cpus.h"
#include "log.h"
#include "notify.h"
#include "proto_names.h"
#include "proto_path.h"
#include "server.h"
#include "vkr_config.h"

/* After the work is done, how long clients get to read their last replies. */
#define FLUSH_GRACE_MS 2000
#define FLUSH_POLL_MS 10
#define PIPELINE_CACHE_NAME "pipelines.cache"

/* getopt values: keys of the configuration table are OPT_KEY_FIRST + index. */
enum {
	OPT_HELP = 'h',
	OPT_VERSION = 'V',
	OPT_CONFIG = 256,
	OPT_CHECK_CONFIG,
	OPT_KEY_FIRST,
};

/* What the command line asked for, kept for reloads: flags override the file every time. */
struct cmdline {
	const char *config_path; /* borrowed from argv */
	bool config_explicit;    /* --config given: the file must exist */
	bool check_only;         /* --check-config */
	struct { size_t key; const char *value; } *sets; /* owned: flag settings in order */
	size_t nsets;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: vkreduced [OPTION]...\n"
		"Serve GPU reductions and scans to local clients over a Unix socket (msgpack-RPC).\n"
		"Runs in the foreground and logs to stderr. Under systemd it takes its socket from socket\n"
		"activation and reports readiness, status and watchdog pings (docs/OPERATIONS.md).\n"
		"SIGTERM or SIGINT finish accepted work and exit; SIGHUP reloads the configuration.\n"
		"\n"
		"      --config PATH              configuration file (default %s; a missing default\n"
		"                                 file is fine); flags override its settings\n"
		"      --check-config             check the configuration file and flags, then exit\n"
		"  -s, --socket PATH              same as the socket setting below\n"
		"  -d, --device NAME|INDEX        same as the device setting below\n"
		"  -h, --help                     show this help\n"
		"  -V, --version                  show the version\n"
		"\n"
		"Settings, as flags or as 'key = value' lines of the configuration file (sizes accept a k,\n"
		"M or G suffix, powers of 1024):\n",
		CONFIG_DEFAULT_PATH);
	config_print_help(f);
	fprintf(f, "\nThe protocol is documented in PROTOCOL.md (proto/ in the source tree).\n");
}

/* Returns 0 to run, 1 to exit successfully (help, version), -1 on a usage error. */
static int parse_args(int argc, char **argv, struct cmdline *cl)
{
	size_t nkeys = config_key_count();
	struct option *longopts = calloc(nkeys + 5, sizeof(*longopts));
	size_t n = 0;
	int c, rc = 0;

	cl->config_path = CONFIG_DEFAULT_PATH;
	cl->sets = calloc((size_t)argc + 1, sizeof(*cl->sets));
	if (!longopts || !cl->sets) {
		fprintf(stderr, "vkreduced: out of memory\n");
		free(longopts);
		return -1;
	}
	longopts[n++] = (struct option){ "config", required_argument, NULL, OPT_CONFIG };
	longopts[n++] = (struct option){ "check-config", no_argument, NULL, OPT_CHECK_CONFIG };
	longopts[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	longopts[n++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	for (size_t k = 0; k < nkeys; k++)
		longopts[n++] = (struct option){ config_key_name(k),
						 config_key_arg(k) ? required_argument : no_argument, NULL,
						 OPT_KEY_FIRST + (int)k };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };

	while (rc == 0 && (c = getopt_long(argc, argv, "s:d:hV", longopts, NULL)) != -1) {
		int key = -1;
		switch (c) {
		case OPT_HELP: usage(stdout); rc = 1; break;
		case OPT_VERSION: printf("vkreduced %s\n", VKR_VERSION); rc = 1; break;
		case OPT_CONFIG:
			cl->config_path = optarg;
			cl->config_explicit = true;
			break;
		case OPT_CHECK_CONFIG: cl->check_only = true; break;
		case 's': key = config_key_find("socket"); break;
		case 'd': key = config_key_find("device"); break;
		default:
			if (c >= OPT_KEY_FIRST && c < OPT_KEY_FIRST + (int)nkeys) {
				key = c - OPT_KEY_FIRST;
				break;
			}
			fprintf(stderr, "Try 'vkreduced --help' for more information.\n");
			rc = -1;
		}
		if (key >= 0) {
			cl->sets[cl->nsets].key = (size_t)key;
			cl->sets[cl->nsets].value = config_key_arg((size_t)key) ? optarg : "true";
			cl->nsets++;
		}
	}
	if (rc == 0 && optind < argc) {
		fprintf(stderr, "vkreduced: unexpected argument '%s'\nTry 'vkreduced --help'.\n", argv[optind]);
		rc = -1;
	}
	free(longopts);
	return rc;
}

/* Defaults, then the file, then the flags. On failure err says what and where. */
static int load_config(const struct cmdline *cl, struct config *c, char *err, size_t err_size)
{
	char why[512];
	int r;

	if ((r = config_init(c))) {
		snprintf(err, err_size, "out of memory");
		return r;
	}
	r = config_parse_file(c, cl->config_path, err, err_size);
	if (r == -ENOENT && !cl->config_explicit) {
		/* No file at the default path: defaults and flags are a complete configuration. */
		r = 0;
	}
	if (r)
		goto fail;
	for (size_t i = 0; i < cl->nsets; i++) {
		if ((r = config_set(c, cl->sets[i].key, cl->sets[i].value, why, sizeof(why)))) {
			snprintf(err, err_size, "--%s", why);
			goto fail;
		}
	}
	return 0;
fail:
	config_finish(c);
	return r;
}

/* ---- the daemon's state in main ------------------------------------------------------------ */

static struct {
	struct vkrd *d;
	struct cmdline cl;
	struct config cfg;             /* the configuration in force */
	uv_signal_t sig_term, sig_int, sig_hup;
	uv_timer_t drain_timer;        /* phase 1: the drain timeout; phase 2: flush polling */
	uv_timer_t irq_timer;          /* reads where the GPU's interrupts land, now and then */
	struct irq_cpus_watch irq_watch;
	uint64_t flush_deadline_ns;
	bool drained;                  /* phase 2 started */
	bool closed;                   /* phase 3 done: handles closed */
} m;

/* How often the daemon reads again where its GPU's interrupts land (irq_cpus.h). */
#define IRQ_CHECK_MS 10000

static void on_irq_timer(uv_timer_t *timer)
{
	(void)timer;
	irq_cpus_watch_check(&m.irq_watch);
}

static void on_late_signal(int signum)
{
	(void)signum;
	_exit(1);
}

static void close_handles(void)
{
	struct vkrd *d = m.d;

	if (m.closed)
		return;
	m.closed = true;
	conn_close_all(d);
	batch_close(d->batch);
	notify_service_stop(d->notify);
	d->notify = NULL;
	uv_close((uv_handle_t *)&m.drain_timer, NULL);
	uv_close((uv_handle_t *)&m.irq_timer, NULL);
	uv_close((uv_handle_t *)&m.sig_term, NULL);
	uv_close((uv_handle_t *)&m.sig_int, NULL);
	uv_close((uv_handle_t *)&m.sig_hup, NULL);
	/* Closing the handles restored the default actions; keep the meaning of a second
	 * SIGTERM/SIGINT (exit now, status 1) for the last steps, which wait for the GPU, and
	 * keep SIGHUP from killing a daemon that is on its way out. */
	signal(SIGTERM, on_late_signal);
	signal(SIGINT, on_late_signal);
	signal(SIGHUP, SIG_IGN);
	d->on_idle = NULL;
}

/* Phase 2 -> 3: waits until every connection has written its replies and closed. */
static void on_flush_poll(uv_timer_t *timer)
{
	struct vkrd *d = timer->data;

	if (d->conns && vkrd_now_ns() < m.flush_deadline_ns)
		return;
	if (d->conns)
		log_warn("clients did not read their last replies within %d ms; closing their connections",
			 FLUSH_GRACE_MS);
	uv_timer_stop(timer);
	close_handles();
}

/* Phase 1 -> 2: no work left. */
static void on_drained(struct vkrd *d)
{
	struct conn *c, *next;

	if (m.drained)
		return;
	m.drained = true;
	d->on_idle = NULL;
	log_info("drained: answering what clients already sent, then closing");
	for (c = d->conns; c; c = next) {
		next = c->next;
		conn_finish(c);
	}
	conn_flush_dirty(d);
	m.flush_deadline_ns = vkrd_now_ns() + (uint64_t)FLUSH_GRACE_MS * 1000000;
	uv_timer_stop(&m.drain_timer);
	if (!d->conns) {
		close_handles();
		return;
	}
	uv_timer_start(&m.drain_timer, on_flush_poll, FLUSH_POLL_MS, FLUSH_POLL_MS);
}

static void on_drain_timeout(uv_timer_t *timer)
{
	struct vkrd *d = timer->data;
	size_t n = batch_fail_queued(d->batch, VKR_WIRE_SHUTTING_DOWN, "the daemon is shutting down; retry later");

	/* Batches already on the GPU cannot be recalled; their answers come when they complete
	 * (TimeoutStopSec= is the backstop for a GPU that never completes). */
	log_warn("drain timeout (%" PRIu64 " ms): %zu queued requests answered 'shutting down'%s", m.cfg.drain_timeout_ms,
		 n, batch_idle(d->batch) ? "" : "; waiting for the batches on the GPU");
	conn_flush_dirty(d);
	if (batch_idle(d->batch))
		on_drained(d);
}

static void on_stop_signal(uv_signal_t *handle, int signum)
{
	struct vkrd *d = handle->data;

	if (d->shutting_down) {
		log_warn("second %s: exiting without waiting for the GPU", strsignal(signum));
		exit(1);
	}
	log_info("%s: finishing accepted work (at most %" PRIu64 " ms), then exiting", strsignal(signum),
		 m.cfg.drain_timeout_ms);
	d->shutting_down = true;
	notify_send("STOPPING=1");
	notify_status_now(d->notify, "draining");
	server_destroy(d->server);
	d->server = NULL;
	d->on_idle = on_drained;
	if (batch_idle(d->batch)) {
		on_drained(d);
		return;
	}
	uv_timer_start(&m.drain_timer, on_drain_timeout, m.cfg.drain_timeout_ms, 0);
}

static void on_reload_signal(uv_signal_t *handle, int signum)
{
	struct vkrd *d = handle->data;
	struct config next;
	char err[1024];
	size_t changed;
	bool same_allow;

	(void)signum;
	if (d->shutting_down)
		return;
	notify_send("RELOADING=1");
	if (load_config(&m.cl, &next, err, sizeof(err))) {
		log_error("reload: %s; keeping the running configuration", err);
		notify_send("READY=1");
		return;
	}
	same_allow = !strcmp(next.allow_uids ? next.allow_uids : "", m.cfg.allow_uids ? m.cfg.allow_uids : "") &&
		     !strcmp(next.allow_groups ? next.allow_groups : "", m.cfg.allow_groups ? m.cfg.allow_groups : "");
	/* Names resolve now, before anything changes, so a bad list keeps the whole old config. */
	if (!same_allow && access_set_allow(&d->access, next.allow_uids, next.allow_groups, err, sizeof(err))) {
		log_error("reload: %s; keeping the running configuration", err);
		config_finish(&next);
		notify_send("READY=1");
		return;
	}
	changed = config_apply_reload(&m.cfg, &next);
	config_finish(&next);
	/* Restart-only limits kept their running values in m.cfg, so a plain copy is right. */
	d->limits = m.cfg.limits;
	log_set_level(m.cfg.log_level);
	log_info("reloaded the configuration (%s): %zu settings changed", m.cl.config_path, changed);
	notify_send("READY=1");
}

/* ---- start ------------------------------------------------------------------------------- */

/* Where the listener comes from: socket activation (exactly one stream socket) or a path. */
static int make_server(struct vkrd *d, struct server **out)
{
	char path[108], err[512];
	int n = notify_listen_fds();
	int r;

	if (n < 0) {
		log_error("socket activation: malformed LISTEN_FDS/LISTEN_PID: %s", strerror(-n));
		return n;
	}
	if (n > 1) {
		log_error("socket activation: got %d sockets, expected one (a single ListenStream=)", n);
		return -EINVAL;
	}
	if (n == 1) {
		if ((r = server_adopt(d, NOTIFY_LISTEN_FDS_START, out, err, sizeof(err)))) {
			log_error("%s", err);
			return r;
		}
		if (m.cfg.socket)
			log_info("socket-activated: the socket setting (%s) is not used", m.cfg.socket);
		log_info("listening on %s (socket activation)", server_path(*out));
		return 0;
	}
	if (m.cfg.socket) {
		if (strlen(m.cfg.socket) >= sizeof(path)) {
			log_error("socket: path longer than %zu bytes", sizeof(path) - 1);
			return -ENAMETOOLONG;
		}
		snprintf(path, sizeof(path), "%s", m.cfg.socket);
	} else if ((r = proto_default_socket_path(path, sizeof(path)))) {
		log_error("no socket path: %s (pass --socket, or set VKREDUCE_SOCKET or XDG_RUNTIME_DIR)", strerror(-r));
		return r;
	}
	if ((r = server_create(d, path, m.cfg.socket_mode, out, err, sizeof(err)))) {
		log_error("%s", err);
		return r;
	}
	log_info("listening on %s", path);
	return 0;
}

/* The pipeline cache file in the state directory, or NULL (no state directory). */
static const char *cache_path(char *buf, size_t size)
{
	struct stat st;

	if (!m.cfg.state_dir)
		return NULL;
	if (stat(m.cfg.state_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_warn("state-dir %s is not a directory; no pipeline cache", m.cfg.state_dir);
		return NULL;
	}
	if ((size_t)snprintf(buf, size, "%s/%s", m.cfg.state_dir, PIPELINE_CACHE_NAME) >= size) {
		log_warn("state-dir path too long; no pipeline cache");
		return NULL;
	}
	return buf;
}

static void log_device(const struct gpu *gpu, const char *cache)
{
	const struct gpu_info *info = gpu_get_info(gpu);

	log_info("device: %s (%s, subgroup %u, f64 %s, i64 %s, host import %s)", info->name, info->type,
		 info->subgroup_size, info->shader_float64 ? "yes" : "no", info->shader_int64 ? "yes" : "no",
		 info->host_import ? "yes" : "no");
	if (!cache)
		return;
	if (gpu_pipeline_cache_was_loaded(gpu)) {
		log_info("pipelines built with the cache %s", cache);
	} else if (gpu_builds_on_first_use(gpu)) {
		/* Saved now it would hold no pipeline, and no later start would replace it. */
		log_info("pipeline cache %s not saved: pipelines are built on first use "
			 "(VKR_COMPILE_ON_FIRST_USE)", cache);
	} else {
		/* Saved now, once the pipelines exist, so the next start (or a restart after a
		 * crash) finds it; it never changes afterwards. */
		int r = gpu_save_pipeline_cache((struct gpu *)gpu, cache);
		if (r)
			log_warn("cannot save the pipeline cache %s: %s", cache, strerror(-r));
		else
			log_info("saved the pipeline cache %s", cache);
	}
}

/* Each connection holds its socket and at most one fd of an unfinished register_shm
 * (conn.c); the device, the listening sockets, the log and the pipeline cache need a few
 * more. systemd's default soft limit (1024) is below what max_connections allows, so the
 * soft limit is raised to the hard one (the unit sets LimitNOFILE), and a hard limit too
 * low is said at start rather than found when accept fails with EMFILE. */
static void raise_fd_limit(const struct limits *limits)
{
	const uint64_t fds_needed = limits->max_connections * 2 + 256;
	struct rlimit nofile;

	if (getrlimit(RLIMIT_NOFILE, &nofile) != 0) {
		log_warn("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return;
	}
	if (nofile.rlim_cur != nofile.rlim_max) {
		struct rlimit raised = { nofile.rlim_max, nofile.rlim_max };
		if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
			nofile = raised;
		else
			log_warn("cannot raise RLIMIT_NOFILE to %llu: %s", (unsigned long long)nofile.rlim_max,
				 strerror(errno));
	}
	if (nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur < fds_needed)
		log_warn("RLIMIT_NOFILE is %llu, below the %" PRIu64 " descriptors max_connections %" PRIu64
			 " may need; connections beyond it are closed at once",
			 (unsigned long long)nofile.rlim_cur, fds_needed, limits->max_connections);
}

/* The engine's messages, through the daemon's log (journal priorities, --log-level). */
static void engine_log(int level, const char *message)
{
	log_msg((enum log_level)level, "%s", message);
}

int main(int argc, char **argv)
{
	struct gpu_config gcfg = { 0 };
	struct vkrd d;
	uv_loop_t loop;
	char err[1024], cache_buf[4096];
	const char *cache;
	int status = 0;
	int r;

	memset(&d, 0, sizeof(d));
	m.d = &d;
	log_init();
	r = parse_args(argc, argv, &m.cl);
	if (r) {
		free(m.cl.sets);
		return r > 0 ? 0 : 2;
	}
	if (load_config(&m.cl, &m.cfg, err, sizeof(err))) {
		fprintf(stderr, "vkreduced: %s\n", err);
		free(m.cl.sets);
		return 2;
	}
	log_set_level(m.cfg.log_level);
	if (access_set_allow(&d.access, m.cfg.allow_uids, m.cfg.allow_groups, err, sizeof(err))) {
		fprintf(stderr, "vkreduced: %s\n", err);
		status = 2;
		goto out_config;
	}
	if (m.cl.check_only) {
		printf("configuration OK (%s)\n", m.cl.config_path);
		goto out_config;
	}
	d.limits = m.cfg.limits;
	/* A peer that goes away mid-reply must not kill the daemon (sends use MSG_NOSIGNAL too). */
	signal(SIGPIPE, SIG_IGN);

	/* Importing a client's shared memory pins its pages, which counts against
	 * RLIMIT_MEMLOCK: raise the soft limit as far as the hard limit allows (the systemd
	 * unit sets LimitMEMLOCK=infinity). Without it imports fail and data is copied. */
	struct rlimit memlock;
	if (getrlimit(RLIMIT_MEMLOCK, &memlock) == 0 && memlock.rlim_cur != memlock.rlim_max) {
		memlock.rlim_cur = memlock.rlim_max;
		if (setrlimit(RLIMIT_MEMLOCK, &memlock) != 0)
			log_warn("cannot raise RLIMIT_MEMLOCK: %s; shared memory may be copied", strerror(errno));
	}

	raise_fd_limit(&d.limits);

	notify_send("STATUS=initializing the device");
	cache = cache_path(cache_buf, sizeof(cache_buf));
	gcfg.device = m.cfg.device;
	gcfg.validation = m.cfg.validation;
	gcfg.verbose = log_get_level() >= LOG_LEVEL_DEBUG;
	gcfg.pipeline_cache_path = cache;
	gcfg.log = engine_log;
	gcfg.host_memory_scans_only = true; /* batch.c: a scan's output lands in host memory */
	d.gpu_config = &gcfg; /* to create the device again after a loss */
	if ((r = gpu_create(&gcfg, &d.gpu, err, sizeof(err)))) {
		log_error("no GPU: %s", err);
		notify_sendf("STATUS=no GPU: %s", err);
		status = 1;
		goto out_config;
	}
	log_device(d.gpu, cache);
	/* Before batch_create starts the completion and copy threads, which inherit it. */
	irq_cpus_watch_start(&m.irq_watch, gpu_get_info(d.gpu)->pci_address);
	d.irq_watch = &m.irq_watch;
	if ((r = uv_loop_init(&loop))) {
		log_error("uv_loop_init: %s", uv_strerror(r));
		gpu_destroy(d.gpu);
		status = 1;
		goto out_config;
	}
	d.loop = &loop;
	/* For stats' loop_idle_ns_total: how much of the loop thread is left. */
	if ((r = uv_loop_configure(&loop, UV_METRICS_IDLE_TIME)))
		log_warn("libuv idle-time metric: %s", uv_strerror(r));
	uv_timer_init(&loop, &m.drain_timer);
	uv_timer_init(&loop, &m.irq_timer);
	uv_signal_init(&loop, &m.sig_term);
	uv_signal_init(&loop, &m.sig_int);
	uv_signal_init(&loop, &m.sig_hup);
	m.drain_timer.data = m.sig_term.data = m.sig_int.data = m.sig_hup.data = &d;
	if ((r = batch_create(&d, &d.batch, err, sizeof(err)))) {
		log_error("batch: %s", err);
		status = 1;
		goto out_close;
	}
	if ((r = make_server(&d, &d.server))) {
		status = 1;
		goto out_close;
	}
	if ((r = notify_service_start(&d, &d.notify))) {
		log_error("status timer: %s", uv_strerror(r));
		status = 1;
		goto out_close;
	}
	if ((r = uv_signal_start(&m.sig_term, on_stop_signal, SIGTERM)) ||
	    (r = uv_signal_start(&m.sig_int, on_stop_signal, SIGINT)) ||
	    (r = uv_signal_start(&m.sig_hup, on_reload_signal, SIGHUP))) {
		log_error("signal handlers: %s", uv_strerror(r));
		status = 1;
		goto out_close;
	}
	if (m.irq_watch.pci_address[0]) {
		/* As often as irqbalance rebalances by default; the timer alone keeps no loop alive. */
		uv_timer_start(&m.irq_timer, on_irq_timer, IRQ_CHECK_MS, IRQ_CHECK_MS);
		uv_unref((uv_handle_t *)&m.irq_timer);
	}
	/* Only now: the device exists, every pipeline is built, and the socket accepts. */
	if ((r = notify_send("READY=1")) < 0)
		log_warn("readiness notification: %s", strerror(-r));
	notify_status_now(d.notify, "serving");

	uv_run(&loop, UV_RUN_DEFAULT);
	goto out_loop;

out_close:
	server_destroy(d.server);
	d.server = NULL;
	if (d.batch)
		close_handles();
	else {
		notify_service_stop(d.notify);
		uv_close((uv_handle_t *)&m.drain_timer, NULL);
		uv_close((uv_handle_t *)&m.irq_timer, NULL);
		uv_close((uv_handle_t *)&m.sig_term, NULL);
		uv_close((uv_handle_t *)&m.sig_int, NULL);
		uv_close((uv_handle_t *)&m.sig_hup, NULL);
	}
out_loop:
	/* Let close callbacks run. */
	uv_run(&loop, UV_RUN_DEFAULT);
	batch_destroy(d.batch);
	d.batch = NULL;
	conn_free_caches();
	if (uv_loop_close(&loop))
		log_warn("loop closed with open handles");
	if (gpu_validation_messages(d.gpu) > 0) {
		log_error("the validation layer reported %" PRIu64 " messages", gpu_validation_messages(d.gpu));
		status = 3;
	}
	gpu_destroy(d.gpu);
	log_info("exited");
out_config:
	access_finish(&d.access);
	config_finish(&m.cfg);
	free(m.cl.sets);
	return status;
}
