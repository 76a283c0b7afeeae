/*
 * daemon_limits.h (not limits.h, which would shadow <limits.h> on the include path): every limit of the daemon in one struct, generated from one table so that the
 * command-line flags, `hello`, `stats` and the documentation can never disagree.
 *
 * X(field, "flag-name", default, minimum, maximum, "help text")
 * Every value is an unsigned 64-bit integer; byte counts are bytes.
 */
#ifndef VKRD_LIMITS_H
#define VKRD_LIMITS_H

#include <stdint.h>

#define LIMITS_MAP(X)                                                                              \
	X(max_inline_bytes, "max-inline-bytes", UINT64_C(64) << 20, 64, UINT64_C(1) << 31,           \
	  "largest inline array (msgpack bin) in a request, and largest inline scan result")           \
	X(max_requests_per_conn, "max-requests-per-conn", 1024, 1, 1u << 20,                        \
	  "requests queued or running per connection; past it a request gets 'busy'")                 \
	X(max_bytes_per_conn, "max-bytes-per-conn", UINT64_C(256) << 20, 64, UINT64_C(1) << 40,      \
	  "inline input plus inline output bytes in flight per connection; past it 'busy'")           \
	X(max_shm_bytes_per_conn, "max-shm-bytes-per-conn", UINT64_C(64) << 30, 4096,                \
	  UINT64_C(1) << 46, "bytes of shared memory a connection may have registered")                \
	X(max_regions_per_conn, "max-regions-per-conn", 1024, 1, 1u << 20,                          \
	  "shared-memory regions a connection may have registered")                                    \
	X(max_connections, "max-connections", 1024, 1, 1u << 20,                                    \
	  "connections at once; further ones are accepted and closed at once")                         \
	X(max_connections_per_uid, "max-connections-per-uid", 256, 1, 1u << 20,                     \
	  "connections at once from one user (SO_PEERCRED uid); further ones are closed at once")      \
	X(max_shm_bytes_per_uid, "max-shm-bytes-per-uid", UINT64_C(128) << 30, 4096,                 \
	  UINT64_C(1) << 48, "bytes of shared memory one user may have registered, all connections")  \
	X(max_memory_bytes, "max-memory-bytes", UINT64_C(4) << 30, UINT64_C(1) << 20,                \
	  UINT64_C(1) << 44, "inline bytes in flight plus unsent reply bytes of all connections; "     \
	  "past it reduce and scan get 'busy'")                                                        \
	X(output_soft_bytes, "output-soft-bytes", UINT64_C(128) << 20, 1024, UINT64_C(1) << 40,      \
	  "reply bytes buffered for a connection; above it for output-soft-seconds, it closes")       \
	X(output_soft_seconds, "output-soft-seconds", 10, 1, 86400,                                 \
	  "seconds a connection may stay above output-soft-bytes before it is closed")               \
	X(max_output_bytes, "max-output-bytes", UINT64_C(1) << 30, 4096, UINT64_C(1) << 40,          \
	  "reply bytes buffered for a connection that does not read; past it the connection closes")  \
	X(output_pause_bytes, "output-pause-bytes", UINT64_C(64) << 20, 1024, UINT64_C(1) << 40,     \
	  "reply bytes buffered after which the daemon stops reading that connection's requests")     \
	X(max_batch_jobs, "max-batch-jobs", 4096, 1, 1u << 20,                                      \
	  "jobs recorded into one command buffer")                                                     \
	X(max_batches_in_flight, "max-batches-in-flight", 2, 1, 32,                                 \
	  "command buffers on the GPU at once; pending jobs wait for one to complete")                 \
	X(upload_ring_bytes, "upload-ring-bytes", UINT64_C(256) << 20, UINT64_C(1) << 20,            \
	  UINT64_C(1) << 36, "staging ring for inputs (host-visible); larger jobs get own buffers")   \
	X(readback_ring_bytes, "readback-ring-bytes", UINT64_C(256) << 20, UINT64_C(1) << 20,        \
	  UINT64_C(1) << 36, "ring for results and scan outputs (host-visible)")                       \
	X(scratch_ring_bytes, "scratch-ring-bytes", UINT64_C(64) << 20, UINT64_C(1) << 20,           \
	  UINT64_C(1) << 36, "device-local ring for kernel scratch space")

struct limits {
#define LIMITS_X_(field, flag, def, lo, hi, help) uint64_t field;
	LIMITS_MAP(LIMITS_X_)
#undef LIMITS_X_
};

/* The defaults of the table. */
static inline void limits_init(struct limits *limits)
{
#define LIMITS_X_(field, flag, def, lo, hi, help) limits->field = (def);
	LIMITS_MAP(LIMITS_X_)
#undef LIMITS_X_
}

#endif /* VKRD_LIMITS_H */
