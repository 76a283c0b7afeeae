/*
 * daemon.h: the state the daemon's modules share on the loop thread: the loop, the device,
 * the limits and counters, and the module objects. main.c owns it; the modules borrow it.
 */
#ifndef VKRD_DAEMON_H
#define VKRD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "access.h"
#include "daemon_limits.h"
#include "stats.h"

struct gpu;
struct batch;
struct server;
struct conn;
struct notify_service;
struct gpu_config;

struct irq_cpus_watch;

struct vkrd {
	uv_loop_t *loop;        /* borrowed */
	struct gpu *gpu;        /* owned by main.c; batch.c replaces it after device loss */
	struct batch *batch;    /* owned by main.c */
	struct server *server;  /* owned by main.c, may be NULL (stopped) */
	struct limits limits;
	struct stats stats;
	struct conn *conns;     /* borrowed: open connections (conn.c keeps the list) */
	struct conn *dirty;     /* borrowed: connections with replies to flush (conn.c) */
	/* Connections not read until their large message fits max_memory_bytes, oldest first
	 * (conn.c), and the budget in use when the oldest last did not fit. */
	struct conn *waiting_first, *waiting_last;
	uint64_t memory_refused_at;
	uint64_t next_conn_id;
	struct access access;   /* allow lists and per-uid totals (access.c) */
	/* How gpu was created, to create it again after device loss (batch.c); borrowed, may
	 * be NULL (then the same device index is used). */
	const struct gpu_config *gpu_config;
	struct notify_service *notify; /* owned by main.c, may be NULL: STATUS= and watchdog */
	/* Where the GPU's interrupts land and the threads keep off them (irq_cpus.c), for
	 * hello; owned by main.c, may be NULL. */
	const struct irq_cpus_watch *irq_watch;
	bool shutting_down;     /* SIGTERM/SIGINT seen: finish accepted work, take no more */
	/* Called by the batch when it goes idle during shutdown; may be NULL. */
	void (*on_idle)(struct vkrd *d);
};

/* Monotonic nanoseconds (for queue times); in stats.c. */
uint64_t vkrd_now_ns(void);

#endif /* VKRD_DAEMON_H */
