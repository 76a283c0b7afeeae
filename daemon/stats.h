/*
 * stats.h: the daemon's counters, reported by the `stats` method. Loop thread only.
 */
#ifndef VKRD_STATS_H
#define VKRD_STATS_H

#include <msgpack.h>
#include <stdint.h>

#include "daemon_limits.h"

/* Methods in the order of the dispatch table (and of stats' "requests" map). */
#define STATS_METHOD_MAP(X)                                                                        \
	X(PING, "ping")                                                                                \
	X(HELLO, "hello")                                                                              \
	X(REDUCE, "reduce")                                                                            \
	X(SCAN, "scan")                                                                                \
	X(REGISTER_SHM, "register_shm")                                                                \
	X(UNREGISTER_SHM, "unregister_shm")                                                            \
	X(STATS, "stats")

enum stats_method {
#define STATS_X_(name, str) STATS_METHOD_##name,
	STATS_METHOD_MAP(STATS_X_)
#undef STATS_X_
	STATS_METHOD_COUNT_
};

#define STATS_MAX_ERROR_CODE 10
/* Histogram of jobs per batch: bucket i holds batches of [2^i, 2^(i+1)) jobs. */
#define STATS_BATCH_BUCKETS 21

struct stats {
	uint64_t requests;                           /* requests received, all methods */
	uint64_t requests_by_method[STATS_METHOD_COUNT_];
	uint64_t requests_unknown;                   /* requests naming no known method */
	uint64_t errors;                             /* error replies */
	uint64_t errors_by_code[STATS_MAX_ERROR_CODE + 1];
	uint64_t protocol_errors;                    /* connections closed for bad framing */
	uint64_t bytes_in;                           /* bytes read from sockets */
	uint64_t bytes_out;                          /* bytes written to sockets */
	uint64_t inline_bytes_in;                    /* array bytes received inline */
	uint64_t shm_bytes_in;                       /* array bytes read from shared memory */
	uint64_t batches;                            /* command buffers submitted */
	uint64_t batch_jobs;                         /* jobs in them */
	uint64_t batch_jobs_max;                     /* most jobs in one batch */
	uint64_t batches_multi_conn;                 /* batches with jobs of > 1 connection */
	uint64_t batch_hist[STATS_BATCH_BUCKETS];    /* jobs-per-batch histogram */
	uint64_t dedicated_buffers;                  /* jobs too big for a ring */
	uint64_t queue_ns;                           /* sum over jobs of enqueue -> submit */
	uint64_t queue_ns_max;
	uint64_t gpu_ns;                             /* sum of command buffer GPU times */
	uint64_t gpu_ns_max;
	uint64_t batches_seen_by_loop;               /* seen complete by the polling loop first */
	uint64_t batches_predicted;                  /* with an expected end polled around */
	/* Per request, for jobs answered after their batch completed (req_timed of them):
	 * received -> submitted, submitted -> completion seen by the completion thread (or by
	 * the polling loop, batches_seen_by_loop, whose wake is then 0), completion seen -> the
	 * loop woke for it, loop woke -> replies written. */
	uint64_t req_queue_ns;
	uint64_t req_gpu_ns;
	uint64_t req_wake_ns;
	uint64_t req_reply_ns;
	uint64_t req_timed;
	/* Where the loop thread's time goes (ns): reading and decoding sockets (with the
	 * writes a read triggers), copying inline inputs into the upload ring, recording
	 * command buffers, vkQueueSubmit, answering completed batches; and sleeping in
	 * epoll (libuv's idle-time metric; polling with VKR_LOOP_SPIN_US counts as busy). */
	uint64_t loop_read_ns;
	uint64_t loop_copy_ns;
	uint64_t loop_record_ns;
	uint64_t loop_submit_ns;
	uint64_t loop_complete_ns;
	uint64_t loop_idle_ns;
	uint64_t connections;                        /* open now */
	uint64_t connections_total;                  /* accepted since start */
	uint64_t connections_refused;                /* closed at once: max_connections */
	uint64_t regions;                            /* registered now */
	uint64_t region_bytes;                       /* bytes of those */
	uint64_t regions_imported;                   /* of those, imported into the GPU */
	uint64_t regions_total;                      /* registered since start */
	uint64_t jobs_dropped;                       /* queued jobs of closed connections */
	uint64_t device_lost;                        /* batches failed with device loss */
	uint64_t device_rebuilds;                    /* devices created again after a loss */
	uint64_t device_rebuild_failures;            /* attempts that failed (retried) */
	uint64_t connections_denied;                 /* closed at once: allow_uids/allow_groups */
	uint64_t connections_refused_uid;            /* closed at once: max_connections_per_uid */
	uint64_t slow_reader_closes;                 /* closed for unread replies (soft or hard) */
	uint64_t busy_memory;                        /* requests refused: max_memory_bytes */
	uint64_t stalled_sender_closes;              /* closed: an unfinished message held the budget */
	uint64_t memory_waits;                       /* a large message waited for max_memory_bytes */
	uint64_t connections_waiting_memory;         /* now: not read until their message fits */
	uint64_t memory_bytes;                       /* now: inline bytes in flight + unsent replies */
	uint64_t users;                              /* now: distinct uids with a connection */
};

void stats_count_error(struct stats *stats, int wire_code);
void stats_count_batch(struct stats *stats, uint64_t jobs, uint64_t conns);
/* Packs everything as one msgpack map, including the limits in force. */
void stats_pack(const struct stats *stats, const struct limits *limits, msgpack_packer *pk);
/* Packs the limits as a msgpack map (also used by `hello`). */
void stats_pack_limits(const struct limits *limits, msgpack_packer *pk);
/* Packs a NUL-terminated string. */
void stats_pack_str(msgpack_packer *pk, const char *s);

#endif /* VKRD_STATS_H */
