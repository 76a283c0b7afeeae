/* frame.c: bounded msgpack message framing; see frame.h. */
#include "frame.h"

#include <string.h>

/* What one msgpack header says about the object that starts with it. */
struct header {
	uint32_t head;     /* bytes of the header itself (type byte and length fields) */
	uint64_t payload;  /* bytes after the header (str/bin/ext data, fixed-size numbers) */
	uint64_t items;    /* child objects (array: n, map: 2n) */
	bool sized;        /* payload is a declared length that must be bounded */
	/* For msgid extraction: integer kind and value. */
	bool is_uint;
	uint64_t uint_value;
};

static uint64_t be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Decodes the header at p (avail bytes). Returns 1 when complete, 0 when more bytes are
 * needed (h->head says how many), -1 on the never-used byte. */
static int parse_header(const uint8_t *p, size_t avail, struct header *h)
{
	uint8_t b = p[0];
	unsigned lenbytes = 0;

	memset(h, 0, sizeof(*h));
	h->head = 1;
	if (b <= 0x7f) {
		h->is_uint = true;
		h->uint_value = b;
		return 1;
	}
	if (b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
		return 1; /* negative fixint, nil, false, true */
	if (b >= 0x80 && b <= 0x8f) {
		h->items = 2u * (b & 0x0f);
		return 1;
	}
	if (b >= 0x90 && b <= 0x9f) {
		h->items = b & 0x0f;
		return 1;
	}
	if (b >= 0xa0 && b <= 0xbf) {
		h->payload = b & 0x1f;
		h->sized = true;
		return 1;
	}
	switch (b) {
	case 0xc1:
		return -1;
	case 0xc4: case 0xc5: case 0xc6: /* bin 8/16/32 */
	case 0xd9: case 0xda: case 0xdb: /* str 8/16/32 */
		lenbytes = (b == 0xc4 || b == 0xd9) ? 1 : (b == 0xc5 || b == 0xda) ? 2 : 4;
		h->head = 1 + lenbytes;
		if (avail < h->head)
			return 0;
		h->payload = be(p + 1, lenbytes);
		h->sized = true;
		return 1;
	case 0xc7: case 0xc8: case 0xc9: /* ext 8/16/32: length, then a type byte */
		lenbytes = b == 0xc7 ? 1 : b == 0xc8 ? 2 : 4;
		h->head = 1 + lenbytes + 1;
		if (avail < h->head)
			return 0;
		h->payload = be(p + 1, lenbytes);
		h->sized = true;
		return 1;
	case 0xca: h->payload = 4; return 1;
	case 0xcb: h->payload = 8; return 1;
	case 0xcc: case 0xcd: case 0xce: case 0xcf: /* uint 8/16/32/64 */
		lenbytes = 1u << (b - 0xcc);
		h->head = 1 + lenbytes;
		if (avail < h->head)
			return 0;
		h->is_uint = true;
		h->uint_value = be(p + 1, lenbytes);
		return 1;
	case 0xd0: h->payload = 1; return 1;
	case 0xd1: h->payload = 2; return 1;
	case 0xd2: h->payload = 4; return 1;
	case 0xd3: h->payload = 8; return 1;
	case 0xd4: h->payload = 2; return 1;  /* fixext 1: type + 1 */
	case 0xd5: h->payload = 3; return 1;
	case 0xd6: h->payload = 5; return 1;
	case 0xd7: h->payload = 9; return 1;
	case 0xd8: h->payload = 17; return 1;
	case 0xdc: case 0xdd: /* array 16/32 */
	case 0xde: case 0xdf: /* map 16/32 */
		lenbytes = (b == 0xdc || b == 0xde) ? 2 : 4;
		h->head = 1 + lenbytes;
		if (avail < h->head)
			return 0;
		h->items = be(p + 1, lenbytes);
		if (b >= 0xde)
			h->items *= 2;
		return 1;
	default:
		return -1; /* unreachable: every byte value is covered above */
	}
}

enum frame_status frame_scan(const void *data, size_t len, const struct frame_limits *limits,
			     struct frame_info *info)
{
	const uint8_t *p = data;
	uint64_t remaining[FRAME_MAX_DEPTH + 1];
	uint32_t max_depth = limits->max_depth < FRAME_MAX_DEPTH ? limits->max_depth : FRAME_MAX_DEPTH;
	uint32_t depth = 1;
	uint64_t pos = 0;
	uint32_t objects = 0;
	/* Shape tracking for the msgid: top-level array of 4, item 0 == 0, item 1 uint32. */
	bool request_shape = false;

	memset(info, 0, sizeof(*info));
	remaining[0] = 1; /* one top-level object */
	while (depth > 0) {
		struct header h;
		int r;

		if (pos >= len) {
			info->need = pos + 1;
			return FRAME_NEED_MORE;
		}
		r = parse_header(p + pos, len - pos, &h);
		if (r < 0)
			return FRAME_BAD_BYTE;
		if (r == 0) {
			info->need = pos + h.head;
			return FRAME_NEED_MORE;
		}
		if (++objects > limits->max_objects)
			return FRAME_TOO_MANY;
		if (h.sized && h.payload > limits->max_str_bin) {
			info->declared = h.payload;
			return FRAME_TOO_LARGE;
		}
		/* Containers count their items as objects, so a declared count beyond the object
		 * budget can be refused now rather than after its items arrive. */
		if (h.items > limits->max_objects)
			return FRAME_TOO_MANY;

		/* Which top-level item is this? depth 2 is inside the top-level array. */
		if (objects == 1)
			request_shape = (p[0] == 0x94);
		else if (request_shape && depth == 2 && objects == 2)
			request_shape = h.is_uint && h.uint_value == 0;
		else if (request_shape && depth == 2 && objects == 3 && h.is_uint &&
			 h.uint_value <= UINT32_MAX) {
			info->has_msgid = true;
			info->msgid = (uint32_t)h.uint_value;
		}

		remaining[depth - 1]--;
		pos += h.head + h.payload;
		if (pos > limits->max_message) {
			info->declared = pos;
			return FRAME_TOO_LARGE;
		}
		if (h.items > 0) {
			if (depth >= max_depth)
				return FRAME_TOO_DEEP;
			remaining[depth++] = h.items;
		}
		while (depth > 0 && remaining[depth - 1] == 0)
			depth--;
	}
	if (pos > len) {
		info->need = pos;
		return FRAME_NEED_MORE;
	}
	info->size = pos;
	return FRAME_COMPLETE;
}

const char *frame_status_str(enum frame_status status)
{
	switch (status) {
	case FRAME_COMPLETE: return "complete";
	case FRAME_NEED_MORE: return "incomplete";
	case FRAME_TOO_LARGE: return "message too large";
	case FRAME_TOO_DEEP: return "nesting too deep";
	case FRAME_TOO_MANY: return "too many objects";
	case FRAME_BAD_BYTE: return "invalid msgpack byte 0xc1";
	}
	return "unknown";
}
