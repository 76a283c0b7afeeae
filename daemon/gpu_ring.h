/*
 * gpu_ring.h: a staging ring: one host-visible buffer carved into allocations that are
 * freed in submission order when the timeline value of the batch that used them completes.
 *
 * Usage per batch: gpu_ring_alloc() any number of times, submit, then gpu_ring_fence() with
 * the submit's timeline value; after that value completes, gpu_ring_reclaim() frees it.
 * Allocations made but not fenced when the batch is abandoned are released with
 * gpu_ring_rollback(). Loop thread only.
 */
#ifndef VKR_GPU_RING_H
#define VKR_GPU_RING_H

#include <stdint.h>

#include "gpu.h"

#define GPU_RING_MAX_FENCES 64

struct gpu_ring {
	struct gpu_buffer buffer; /* owned */
	uint64_t head;            /* next free byte (monotonic, modulo size for the offset) */
	uint64_t tail;            /* oldest byte still in use (monotonic) */
	uint64_t batch_start;     /* head when the current unfenced batch began */
	struct {
		uint64_t value; /* timeline value that frees this span */
		uint64_t end;   /* head at fence time */
	} fences[GPU_RING_MAX_FENCES];
	unsigned fence_first, fence_count;
};

int gpu_ring_init(struct gpu_ring *ring, struct gpu *gpu, uint64_t size, enum gpu_memory_kind kind);
void gpu_ring_finish(struct gpu_ring *ring, struct gpu *gpu);

/* The largest alignment gpu_ring_alloc takes; gpu_ring_init rounds a ring's size up to it. */
#define GPU_RING_MAX_ALIGN UINT64_C(4096)

/* Allocates bytes (aligned to align, a power of two <= 4096) and returns the offset into
 * ring->buffer: 0, -EAGAIN when the ring is full until a fence completes, -E2BIG when the
 * request could never fit, -EBUSY when all fence slots are taken. */
int gpu_ring_alloc(struct gpu_ring *ring, uint64_t bytes, uint64_t align, uint64_t *offset);
/* Marks everything allocated since the last fence as freed when value completes. */
int gpu_ring_fence(struct gpu_ring *ring, uint64_t value);
/* Drops allocations made since the last fence (the batch was never submitted). */
void gpu_ring_rollback(struct gpu_ring *ring);
/* Frees every fenced span whose value is <= completed. */
void gpu_ring_reclaim(struct gpu_ring *ring, uint64_t completed);
/* Bytes currently in use. */
uint64_t gpu_ring_used(const struct gpu_ring *ring);

#endif /* VKR_GPU_RING_H */
