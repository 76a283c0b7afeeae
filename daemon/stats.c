/* stats.c: counters and their msgpack rendering for the `stats` method. */
#include "stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "proto_names.h"

uint64_t vkrd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void stats_count_error(struct stats *stats, int wire_code)
{
	stats->errors++;
	if (wire_code > 0 && wire_code <= STATS_MAX_ERROR_CODE)
		stats->errors_by_code[wire_code]++;
}

void stats_count_batch(struct stats *stats, uint64_t jobs, uint64_t conns)
{
	unsigned bucket = 0;

	stats->batches++;
	stats->batch_jobs += jobs;
	if (jobs > stats->batch_jobs_max)
		stats->batch_jobs_max = jobs;
	if (conns > 1)
		stats->batches_multi_conn++;
	while (bucket + 1 < STATS_BATCH_BUCKETS && (jobs >> (bucket + 1)) != 0)
		bucket++;
	stats->batch_hist[bucket]++;
}

void stats_pack_str(msgpack_packer *pk, const char *s)
{
	size_t len = strlen(s);

	msgpack_pack_str(pk, len);
	msgpack_pack_str_body(pk, s, len);
}

static void pack_kv(msgpack_packer *pk, const char *key, uint64_t value)
{
	stats_pack_str(pk, key);
	msgpack_pack_uint64(pk, value);
}

void stats_pack_limits(const struct limits *limits, msgpack_packer *pk)
{
	size_t n = 0;

#define LIMITS_X_(field, flag, def, lo, hi, help) n++;
	LIMITS_MAP(LIMITS_X_)
#undef LIMITS_X_
	msgpack_pack_map(pk, n);
#define LIMITS_X_(field, flag, def, lo, hi, help) pack_kv(pk, #field, limits->field);
	LIMITS_MAP(LIMITS_X_)
#undef LIMITS_X_
}

void stats_pack(const struct stats *s, const struct limits *limits, msgpack_packer *pk)
{
	static const char *const method_names[] = {
#define STATS_X_(name, str) str,
		STATS_METHOD_MAP(STATS_X_)
#undef STATS_X_
	};
	unsigned nerr = 0;
	unsigned nhist = 0;

	msgpack_pack_map(pk, 53); /* keep in step with the entries below (test_protocol checks) */
	pack_kv(pk, "requests_total", s->requests);

	stats_pack_str(pk, "requests");
	msgpack_pack_map(pk, STATS_METHOD_COUNT_ + 1);
	for (unsigned i = 0; i < STATS_METHOD_COUNT_; i++)
		pack_kv(pk, method_names[i], s->requests_by_method[i]);
	pack_kv(pk, "unknown", s->requests_unknown);

	pack_kv(pk, "errors_total", s->errors);
	/* errors: map of error NAME -> count, only the codes seen, so the map stays short. */
	for (int c = 1; c <= STATS_MAX_ERROR_CODE; c++)
		nerr += s->errors_by_code[c] != 0;
	stats_pack_str(pk, "errors");
	msgpack_pack_map(pk, nerr);
	for (int c = 1; c <= STATS_MAX_ERROR_CODE; c++) {
		const char *name = proto_error_name(c);
		if (s->errors_by_code[c] != 0)
			pack_kv(pk, name ? name : "UNKNOWN", s->errors_by_code[c]);
	}
	pack_kv(pk, "protocol_errors", s->protocol_errors);
	pack_kv(pk, "bytes_in", s->bytes_in);
	pack_kv(pk, "bytes_out", s->bytes_out);
	pack_kv(pk, "inline_bytes_in", s->inline_bytes_in);
	pack_kv(pk, "shm_bytes_in", s->shm_bytes_in);
	pack_kv(pk, "batches", s->batches);
	pack_kv(pk, "batch_jobs", s->batch_jobs);
	pack_kv(pk, "batch_jobs_max", s->batch_jobs_max);
	pack_kv(pk, "batches_multi_conn", s->batches_multi_conn);
	/* jobs_per_batch: bucket lower bound 2^i as a decimal string key (string keys suit
	 * strict msgpack decoders) -> batches. */
	for (unsigned i = 0; i < STATS_BATCH_BUCKETS; i++)
		nhist += s->batch_hist[i] != 0;
	stats_pack_str(pk, "jobs_per_batch");
	msgpack_pack_map(pk, nhist);
	for (unsigned i = 0; i < STATS_BATCH_BUCKETS; i++) {
		if (s->batch_hist[i] != 0) {
			char key[24];
			snprintf(key, sizeof(key), "%" PRIu64, (uint64_t)1 << i);
			pack_kv(pk, key, s->batch_hist[i]);
		}
	}
	pack_kv(pk, "dedicated_buffers", s->dedicated_buffers);
	pack_kv(pk, "queue_ns_total", s->queue_ns);
	pack_kv(pk, "queue_ns_max", s->queue_ns_max);
	pack_kv(pk, "gpu_ns_total", s->gpu_ns);
	pack_kv(pk, "gpu_ns_max", s->gpu_ns_max);
	pack_kv(pk, "batches_seen_by_loop", s->batches_seen_by_loop);
	pack_kv(pk, "batches_predicted", s->batches_predicted);
	pack_kv(pk, "request_queue_ns_total", s->req_queue_ns);
	pack_kv(pk, "request_gpu_ns_total", s->req_gpu_ns);
	pack_kv(pk, "request_wake_ns_total", s->req_wake_ns);
	pack_kv(pk, "request_reply_ns_total", s->req_reply_ns);
	pack_kv(pk, "requests_timed", s->req_timed);
	pack_kv(pk, "loop_read_ns_total", s->loop_read_ns);
	pack_kv(pk, "loop_copy_ns_total", s->loop_copy_ns);
	pack_kv(pk, "loop_record_ns_total", s->loop_record_ns);
	pack_kv(pk, "loop_submit_ns_total", s->loop_submit_ns);
	pack_kv(pk, "loop_complete_ns_total", s->loop_complete_ns);
	pack_kv(pk, "loop_idle_ns_total", s->loop_idle_ns);
	pack_kv(pk, "connections", s->connections);
	pack_kv(pk, "connections_total", s->connections_total);
	pack_kv(pk, "connections_refused", s->connections_refused);
	pack_kv(pk, "regions", s->regions);
	pack_kv(pk, "region_bytes", s->region_bytes);
	pack_kv(pk, "regions_imported", s->regions_imported);
	pack_kv(pk, "regions_total", s->regions_total);
	pack_kv(pk, "jobs_dropped", s->jobs_dropped);
	pack_kv(pk, "device_lost", s->device_lost);
	pack_kv(pk, "device_rebuilds", s->device_rebuilds);
	pack_kv(pk, "device_rebuild_failures", s->device_rebuild_failures);
	pack_kv(pk, "connections_denied", s->connections_denied);
	pack_kv(pk, "connections_refused_uid", s->connections_refused_uid);
	pack_kv(pk, "slow_reader_closes", s->slow_reader_closes);
	pack_kv(pk, "busy_memory", s->busy_memory);
	pack_kv(pk, "stalled_sender_closes", s->stalled_sender_closes);
	pack_kv(pk, "memory_waits", s->memory_waits);
	pack_kv(pk, "connections_waiting_memory", s->connections_waiting_memory);
	pack_kv(pk, "memory_bytes", s->memory_bytes);
	pack_kv(pk, "users", s->users);
	stats_pack_str(pk, "limits");
	stats_pack_limits(limits, pk);
}
