/* arena.c: the connection's shared-memory arena for small inline inputs (arena.h). */
#include "arena.h"

#include <stdlib.h>
#include <string.h>

#include "rpc.h"

void arena_init(struct arena *a)
{
	const char *kib = getenv("VKR_CLIENT_ARENA_KIB");
	unsigned long long k = kib && *kib ? strtoull(kib, NULL, 10) : ARENA_DEFAULT_KIB;

	memset(a, 0, sizeof(*a));
	/* At most 1 GiB: the daemon pins what it imports. */
	if (k > (1ull << 20))
		k = 1ull << 20;
	a->nslots = (uint32_t)(k * 1024 / ARENA_SLOT_BYTES);
	a->state = a->nslots > 0 ? ARENA_UNTRIED : ARENA_OFF;
}

/* Creates, seals and registers the memfd. On any failure the arena stays off: requests go
 * inline as they would without it. */
static void setup(vkr_client *c, struct arena *a)
{
	size_t bytes = (size_t)a->nslots * ARENA_SLOT_BYTES;

	a->state = ARENA_SETTING_UP; /* callbacks run while registering send inline */
	a->free = malloc(a->nslots * sizeof(*a->free));
	if (!a->free || vkr_shm_create(bytes, &a->shm) < 0 || vkr_shm_seal(a->shm) < 0 ||
	    vkr_shm_register(c, a->shm, false, &a->region) < 0) {
		vkr_shm_free(a->shm);
		a->shm = NULL;
		free(a->free);
		a->free = NULL;
		a->state = ARENA_OFF;
		return;
	}
	a->base = vkr_shm_data(a->shm);
	for (uint32_t i = 0; i < a->nslots; i++)
		a->free[i] = a->nslots - 1 - i;
	a->nfree = a->nslots;
	a->state = ARENA_READY;
}

uint32_t arena_put(vkr_client *c, struct arena *a, const void *data, size_t bytes,
                   vkr_region *region, uint64_t *offset)
{
	if (bytes < ARENA_MIN_BYTES || bytes > ARENA_SLOT_BYTES)
		return 0;
	if (a->state == ARENA_UNTRIED && ++a->eligible > ARENA_WARMUP && !rpc_in_callback(c))
		setup(c, a);
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
	vkr_shm_free(a->shm);
	free(a->free);
	memset(a, 0, sizeof(*a));
	a->state = ARENA_OFF;
}
