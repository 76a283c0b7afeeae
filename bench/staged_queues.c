/*
 * staged_queues.c: a scan of shared memory staged through device memory, prototyped with
 * its stages on queues of their own. On one queue the two PCIe directions ran one after the
 * other (S39-1: 25.3 GB/s each way for a pair of copies, 24-27 for every staged pipeline);
 * here chunk i goes up on one queue while chunk i-1 is worked on by the compute queue and
 * chunk i-2 goes down on a third, ordered by timeline semaphores, as a daemon would. The work
 * in the middle is the copy kernel, a stand-in for the scan.
 */
#include "staged_queues.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"
#include "kern.h"

enum { STAGE_UP, STAGE_MID, STAGE_DOWN, STAGES };

/* Chunks in flight per stage: ring slots of device memory between the stages. */
#define RING_DEPTH 3

struct stage {
	struct gpu_copy_queue on;
	VkCommandPool pool;
	VkCommandBuffer *cbs; /* one per chunk, recorded once */
	VkSemaphore done;     /* timeline: base + i + 1 once chunk i passed this stage */
};

struct pipeline {
	VkDevice dev;
	struct stage stages[STAGES];
	uint64_t chunks;
};

static void pipeline_finish(struct pipeline *p)
{
	for (int s = 0; s < STAGES; s++) {
		struct stage *st = &p->stages[s];
		if (st->done)
			vkDestroySemaphore(p->dev, st->done, NULL);
		if (st->pool)
			vkDestroyCommandPool(p->dev, st->pool, NULL); /* frees its buffers */
		free(st->cbs);
	}
	memset(p->stages, 0, sizeof(p->stages));
}

static int record_stage(struct gpu *gpu, const struct staged_queues_config *c, int s, uint64_t i,
			VkCommandBuffer cb)
{
	const VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
	uint64_t off = i * c->chunk, len = c->bytes - off < c->chunk ? c->bytes - off : c->chunk;
	const struct gpu_buffer *in = c->ring[i % RING_DEPTH], *out = c->ring[RING_DEPTH + i % RING_DEPTH];
	int rc = 0;
	if (vkBeginCommandBuffer(cb, &bi) != VK_SUCCESS)
		return -ENOMEM;
	if (s == STAGE_UP)
		record_dma(cb, c->host_src, off, in, 0, len);
	else if (s == STAGE_MID)
		rc = kern_record_copy_into(gpu, cb, c->kernel_from_host ? c->host_src->address + off : in->address,
					   c->kernel_to_host ? c->host_dst->address + off : out->address, len);
	else
		record_dma(cb, out, 0, c->host_dst, off, len);
	if (vkEndCommandBuffer(cb) != VK_SUCCESS && rc == 0)
		rc = -ENOMEM;
	return rc;
}

static int pipeline_init(struct gpu *gpu, const struct staged_queues_config *c, struct pipeline *p)
{
	const VkSemaphoreTypeCreateInfo ti = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
					       .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE };
	const VkSemaphoreCreateInfo si = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti };
	memset(p, 0, sizeof(*p));
	p->dev = gpu_device(gpu);
	p->chunks = (c->bytes + c->chunk - 1) / c->chunk;
	int rc = 0;
	for (int s = 0; s < STAGES && rc == 0; s++) {
		struct stage *st = &p->stages[s];
		if ((s == STAGE_UP && c->kernel_from_host) || (s == STAGE_DOWN && c->kernel_to_host))
			continue; /* the kernel reads or writes the host's memory itself */
		st->on = c->queues[s];
		const VkCommandPoolCreateInfo pi = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
						     .queueFamilyIndex = st->on.family };
		const VkCommandBufferAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
							 .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
							 .commandBufferCount = (uint32_t)p->chunks };
		st->cbs = calloc(p->chunks, sizeof(*st->cbs));
		if (!st->cbs || vkCreateCommandPool(p->dev, &pi, NULL, &st->pool) != VK_SUCCESS ||
		    vkCreateSemaphore(p->dev, &si, NULL, &st->done) != VK_SUCCESS) {
			rc = -ENOMEM;
			break;
		}
		VkCommandBufferAllocateInfo a = ai;
		a.commandPool = st->pool;
		if (vkAllocateCommandBuffers(p->dev, &a, st->cbs) != VK_SUCCESS) {
			rc = -ENOMEM;
			break;
		}
		for (uint64_t i = 0; i < p->chunks && rc == 0; i++)
			rc = record_stage(gpu, c, s, i, st->cbs[i]);
	}
	if (rc < 0)
		pipeline_finish(p);
	return rc;
}

/* Submits every chunk's stages, in chunk order, with `base` as the timeline's origin:
 *   up(i)   waits mid >= i+1-D (its ring slot read), signals up = i+1;
 *   mid(i)  waits up >= i+1 and down >= i+1-D (its output slot written back), signals mid;
 *   down(i) waits mid >= i+1, signals down = i+1. */
static int pipeline_submit(struct pipeline *p, uint64_t base)
{
	for (uint64_t i = 0; i < p->chunks; i++) {
		for (int s = 0; s < STAGES; s++) {
			struct stage *st = &p->stages[s];
			if (!st->pool)
				continue;
			VkSemaphore waits[2];
			uint64_t wait_values[2];
			uint32_t nwait = 0;
			const struct stage *before = s == STAGE_UP ? NULL : &p->stages[s - 1];
			if (before && before->pool) {
				waits[nwait] = before->done;
				wait_values[nwait++] = base + i + 1;
			}
			const struct stage *freeing = s == STAGE_UP ? &p->stages[STAGE_MID]
						    : s == STAGE_MID ? &p->stages[STAGE_DOWN] : NULL;
			if (freeing && freeing->pool && i >= RING_DEPTH) {
				waits[nwait] = freeing->done;
				wait_values[nwait++] = base + i + 1 - RING_DEPTH;
			}
			const VkPipelineStageFlags masks[2] = { VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
								VK_PIPELINE_STAGE_ALL_COMMANDS_BIT };
			const uint64_t signal_value = base + i + 1;
			const VkTimelineSemaphoreSubmitInfo ti = {
				.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
				.waitSemaphoreValueCount = nwait,
				.pWaitSemaphoreValues = wait_values,
				.signalSemaphoreValueCount = 1,
				.pSignalSemaphoreValues = &signal_value,
			};
			const VkSubmitInfo si = {
				.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
				.pNext = &ti,
				.waitSemaphoreCount = nwait,
				.pWaitSemaphores = waits,
				.pWaitDstStageMask = masks,
				.commandBufferCount = 1,
				.pCommandBuffers = &st->cbs[i],
				.signalSemaphoreCount = 1,
				.pSignalSemaphores = &st->done,
			};
			if (vkQueueSubmit(st->on.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS)
				return -EIO;
		}
	}
	const VkSemaphoreWaitInfo wi = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
		.semaphoreCount = 1,
		.pSemaphores = &p->stages[p->stages[STAGE_DOWN].pool ? STAGE_DOWN : STAGE_MID].done,
		.pValues = &(uint64_t){ base + p->chunks },
	};
	return vkWaitSemaphores(p->dev, &wi, UINT64_C(30000000000)) == VK_SUCCESS ? 0 : -EIO;
}

int staged_queues_time(struct gpu *gpu, const struct staged_queues_config *c, int reps, double *ms)
{
	struct pipeline p;
	uint64_t t[64];
	if (c->chunk == 0 || c->bytes == 0 || c->chunk % 16 || reps < 1 || (c->kernel_from_host && c->kernel_to_host))
		return -EINVAL;
	if (reps > 64)
		reps = 64;
	int rc = pipeline_init(gpu, c, &p);
	for (int r = -1; r < reps && rc == 0; r++) { /* run -1 warms up */
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = pipeline_submit(&p, (uint64_t)(r + 1) * (p.chunks + 1));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (r >= 0)
			t[r] = (uint64_t)elapsed_ns(&t0, &t1);
	}
	if (rc == 0) {
		qsort(t, (size_t)reps, sizeof(t[0]), cmp_u64);
		*ms = (double)t[reps / 2] / 1e6;
	}
	vkDeviceWaitIdle(p.dev); /* on errors a stage may still run; nothing is freed before it ends */
	if (p.chunks)
		pipeline_finish(&p);
	return rc;
}
