/*
 * frame.h: finds where one msgpack message ends in a byte stream without decoding it, and
 * bounds it before anything is allocated for it: declared str/bin/ext lengths, the message
 * size, the nesting depth and the number of objects. The daemon runs it over the bytes
 * buffered for a connection and hands a message to the msgpack-c unpacker only when it is
 * complete and within bounds, so a declared 4 GiB bin is refused after its 5-byte header.
 *
 * Pure functions over memory; no state between calls.
 */
#ifndef VKRD_FRAME_H
#define VKRD_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FRAME_MAX_DEPTH 16

struct frame_limits {
	uint64_t max_str_bin;  /* largest declared str, bin or ext payload */
	uint64_t max_message;  /* largest whole message */
	uint32_t max_objects;  /* objects (including container headers) in one message */
	uint32_t max_depth;    /* nesting of arrays and maps, at most FRAME_MAX_DEPTH */
};

enum frame_status {
	FRAME_COMPLETE = 0,  /* one whole message of info->size bytes is buffered */
	FRAME_NEED_MORE = 1, /* valid so far; at least info->need bytes are needed in all */
	FRAME_TOO_LARGE = -1,
	FRAME_TOO_DEEP = -2,
	FRAME_TOO_MANY = -3,
	FRAME_BAD_BYTE = -4, /* 0xc1, the one byte msgpack never uses */
};

struct frame_info {
	uint64_t size;    /* FRAME_COMPLETE: bytes of the message */
	uint64_t need;    /* FRAME_NEED_MORE: total bytes known to be needed so far */
	uint64_t declared; /* FRAME_TOO_LARGE: the offending declared size */
	/* Set as soon as the message is seen to start like a request, [0, msgid, ...], so that
	 * an error reply can name the msgid even when the rest is refused. */
	bool has_msgid;
	uint32_t msgid;
};

enum frame_status frame_scan(const void *data, size_t len, const struct frame_limits *limits,
			     struct frame_info *info);

const char *frame_status_str(enum frame_status status);

#endif /* VKRD_FRAME_H */
