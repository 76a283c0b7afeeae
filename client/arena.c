/* arena.c: the connection's shared-memory arena for small inline inputs (arena.h). */
#include "arena.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"

void arena_init(struct arena *a)
{
	const char *kib = getenv("VKR_CLIENT_ARENA_KIB");
	long long k = kib && *kib ? strtoll(kib, NULL, 10) : ARENA_DEFAULT_KIB;

	memset(a, 0, sizeof(*a));
	/* At most 1 GiB (the daemon pins what it imports); negative or 0: off. */
	if (k > (1ll << 20))
		k = 1ll << 20;
	a->nslots = k > 0 ? (uint32_t)((unsigned long long)k * 1024 / ARENA_SLOT_BYTES) : 0;
	a->state = a->nslots > 0 ? ARENA_UNTRIED : ARENA_OFF;
}

/* Frees the memfd and the slot list; the state is the caller's to set. */
static void drop_memory(struct arena *a)
{
	vkr_shm_free(a->shm);
	a->shm = NULL;
	free(a->free);
	a->free = NULL;
}

static void turn_off(struct arena *a)
{
	drop_memory(a);
	a->state = ARENA_OFF;
}

/* The reply to the registration: the arena is ready, or off for good. */
static void registered(vkr_client *c, struct rpc_call *call, int status, const msgpack_object *res)
{
	struct arena *a = call->userdata;
	bool have_region = false;

	(void)c;
	if (status == 0 && res->type == MSGPACK_OBJECT_MAP) {
		for (uint32_t i = 0; i < res->via.map.size; i++) {
			const msgpack_object *k = &res->via.map.ptr[i].key, *v = &res->via.map.ptr[i].val;
			if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == 6 &&
			    memcmp(k->via.str.ptr, "region", 6) == 0 && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
				a->region = v->via.u64;
				have_region = true;
			}
		}
	}
	if (!have_region) {
		turn_off(a);
		return;
	}
	a->base = vkr_shm_data(a->shm);
	for (uint32_t i = 0; i < a->nslots; i++)
		a->free[i] = a->nslots - 1 - i;
	a->nfree = a->nslots;
	a->state = ARENA_READY;
}

void arena_advance(vkr_client *c, struct arena *a)
{
	struct rpc_call *call;
	msgpack_packer *pk;
	int err;

	/* The fd must ride with the request's first byte: only when nothing else waits to be
	 * sent (it will, soon, in a pipelining client's dispatch loop). */
	if (a->state != ARENA_UNTRIED || a->eligible <= ARENA_WARMUP || !rpc_send_idle(c))
		return;
	a->free = malloc(a->nslots * sizeof(*a->free));
	if (!a->free || vkr_shm_create((size_t)a->nslots * ARENA_SLOT_BYTES, &a->shm) < 0 ||
	    vkr_shm_seal(a->shm) < 0) {
		turn_off(a);
		return;
	}
	pk = rpc_begin(c, "register_shm", 1, &call, &err);
	if (!pk) {
		turn_off(a);
		return;
	}
	msgpack_pack_map(pk, 1);
	msgpack_pack_str_with_body(pk, "writable", 8);
	msgpack_pack_false(pk);
	call->fn = registered;
	call->userdata = a;
	call->quiet = true;
	err = rpc_commit_with_fd(c, call, vkr_shm_fd(a->shm), false);
	if (err == -EAGAIN) {
		drop_memory(a); /* the socket is full: try again on a later dispatch */
		return;
	}
	if (err < 0) {
		turn_off(a);
		return;
	}
	a->state = ARENA_SETTING_UP;
}

uint32_t arena_put(struct arena *a, const void *data, size_t bytes, vkr_region *region, uint64_t *offset)
{
	if (bytes < ARENA_MIN_BYTES || bytes > ARENA_SLOT_BYTES)
		return 0;
	if (a->state == ARENA_UNTRIED)
		a->eligible++;
	if (a->state != ARENA_READY || a->nfree == 0)
		return 0;
	uint32_t slot = a->free[--a->nfree];
	*region = a->region;
	*offset = (uint64_t)slot * ARENA_SLOT_BYTES;
	memcpy(a->base + *offset, data, bytes);
	return slot + 1;
}

void arena_release(struct arena *a, uint32_t slot)
{
	/* A slot of an arena that is gone (closed) is simply forgotten. */
	if (slot == 0 || a->state != ARENA_READY || a->nfree >= a->nslots)
		return;
	a->free[a->nfree++] = slot - 1;
}

void arena_finish(struct arena *a)
{
	turn_off(a);
}
