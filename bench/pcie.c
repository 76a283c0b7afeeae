/*
 * pcie.c: vkreduce-bench's --pcie measurements. The bus between host RAM and the device bounds
 * every request on shared memory; these figures are its ceilings: copies each way and both at
 * once, by the copy engine and by the copy kernel; the scan of host memory in place (what the
 * daemon runs on shared memory); a scan staged through device memory in chunks (the copy
 * kernel standing in for the scan), on one queue and on queues of their own
 * (staged_queues.c); and plain copies on queues of their own. GB/s are per direction.
 */
#include "pcie.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench_timing.h"
#include "kern.h"
#include "staged_queues.h"

/* Two copies recorded one after the other with no barrier between, so that the GPU may run
 * them at once: host to device and device to host, each from and to buffers of its own. */
struct copy_pair_ctx {
	struct copy_ctx up, down;
	int (*record)(struct gpu *, struct gpu_cmd *, void *);
};

static int record_copy_pair(struct gpu *gpu, struct gpu_cmd *cmd, void *ctx)
{
	struct copy_pair_ctx *p = ctx;
	int rc = p->record(gpu, cmd, &p->up);
	return rc < 0 ? rc : p->record(gpu, cmd, &p->down);
}

/* A scan of shared memory staged through device memory, as a pipeline of chunks: chunk s is
 * brought up while chunk s-1 is worked on and chunk s-2 goes back down, the three recorded
 * with no barrier between them and one barrier between steps. The work in the middle is the
 * copy kernel (device to device), a stand-in for the scan, which at 0.87 of the copy kernel
 * takes 2 to 3% of a PCIe transfer's time. Variants, by what moves the data:
 *   dma-kernel-dma:  vkCmdCopyBuffer up, kernel, vkCmdCopyBuffer down (three stages)
 *   kernel-dma:      the kernel reads host memory, vkCmdCopyBuffer down (two stages)
 *   dma-kernel:      vkCmdCopyBuffer up, the kernel writes host memory (two stages) */
enum staged_variant { STAGED_DMA_KERNEL_DMA, STAGED_KERNEL_DMA, STAGED_DMA_KERNEL, STAGED_VARIANTS };

static const char *const staged_names[STAGED_VARIANTS] = {
	"dma up, kernel, dma down", "kernel from host, dma down", "dma up, kernel to host",
};

struct staged_ctx {
	enum staged_variant variant;
	struct gpu_buffer *host_src, *host_dst;
	struct gpu_buffer *ring_in[2], *ring_out[2];
	uint64_t bytes, chunk;
};

static int record_staged(struct gpu *gpu, struct gpu_cmd *cmd, void *ctx)
{
	struct staged_ctx *c = ctx;
	uint64_t chunks = (c->bytes + c->chunk - 1) / c->chunk;
	bool up_by_dma = c->variant != STAGED_KERNEL_DMA, down_by_dma = c->variant != STAGED_DMA_KERNEL;
	int rc = 0;
	for (uint64_t step = 0; step < chunks + up_by_dma + down_by_dma && rc == 0; step++) {
		if (step > 0)
			gpu_cmd_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
					VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
					VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
					VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
						VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
		/* up: chunk `step`; middle: chunk `mid`; down: chunk `mid - 1` (indices that wrap
		 * below zero are past `chunks`, and skipped) */
		uint64_t mid = up_by_dma ? step - 1 : step, down = mid - 1;
		if (up_by_dma && step < chunks) {
			uint64_t off = step * c->chunk, len = c->bytes - off < c->chunk ? c->bytes - off : c->chunk;
			record_dma(gpu_cmd_handle(cmd), c->host_src, off, c->ring_in[step & 1], 0, len);
		}
		if (mid < chunks) {
			uint64_t off = mid * c->chunk, len = c->bytes - off < c->chunk ? c->bytes - off : c->chunk;
			uint64_t src = c->variant == STAGED_KERNEL_DMA ? c->host_src->address + off
								      : c->ring_in[mid & 1]->address;
			uint64_t dst = c->variant == STAGED_DMA_KERNEL ? c->host_dst->address + off
								      : c->ring_out[mid & 1]->address;
			rc = kern_record_copy(gpu, cmd, src, dst, len);
		}
		if (down_by_dma && down < chunks && rc == 0) {
			uint64_t off = down * c->chunk, len = c->bytes - off < c->chunk ? c->bytes - off : c->chunk;
			record_dma(gpu_cmd_handle(cmd), c->ring_out[down & 1], 0, c->host_dst, off, len);
		}
	}
	if (rc < 0)
		fprintf(stderr, "vkreduce-bench: could not record the copy kernel: %s\n", strerror(-rc));
	return rc;
}

static uint32_t staged_pattern(uint64_t word)
{
	return (uint32_t)(word * 2654435761u);
}

/* Checked against the pattern, not the source buffer: staging memory may be uncached for the
 * host, and reading 1 GiB of it back is slow. */
static bool matches_pattern(const void *map, uint64_t bytes)
{
	const uint32_t *words = map;
	for (uint64_t i = 0; i < bytes / 4; i++)
		if (words[i] != staged_pattern(i))
			return false;
	return true;
}

static int record_host_scan(struct gpu *gpu, struct gpu_cmd *cmd, void *ctx)
{
	int rc = kern_record(gpu, cmd, ctx, 1);
	if (rc < 0)
		fprintf(stderr, "vkreduce-bench: could not record the scan of host memory: %s\n", strerror(-rc));
	return rc;
}

/* The scan of host memory in place, as the daemon runs it on shared memory (kern_job.host_memory:
 * single pass, whole tiles over the bus): a sum of dtype (u32 or f32) from host_src into
 * host_dst, its kernel time from timestamps, set beside one host-to-host copy (every byte
 * crosses the bus once each way), so that the scan's own distance from that ceiling shows
 * apart from the daemon's path. Every output is checked. */
static int measure_host_scan(struct gpu *gpu, int reps, const char *what, vkr_dtype dtype,
			     struct gpu_buffer *host_src, struct gpu_buffer *host_dst, uint64_t bytes)
{
	/* u32: the pattern, whose sums are exact; f32 (the shm bench's dtype, which may run
	 * another pipeline): zeros, so that every output is exactly zero */
	uint32_t *words = host_src->map;
	for (uint64_t i = 0; i < bytes / 4; i++)
		words[i] = dtype == VKR_DTYPE_U32 ? staged_pattern(i) : 0;
	struct kern_job job = {
		.kind = KERN_SCAN, .op = VKR_OP_SUM, .dtype = dtype, .n = bytes / 4,
		.src = host_src->address, .dst = host_dst->address, .host_memory = true,
	};
	char msg[256];
	int rc = kern_validate(gpu, &job, msg, sizeof(msg));
	if (rc < 0) {
		fprintf(stderr, "vkreduce-bench: the scan of host memory: %s\n", msg);
		return rc;
	}
	struct gpu_buffer scratch = { 0 };
	uint64_t scratch_bytes = kern_scratch_bytes(gpu, &job);
	if (scratch_bytes > 0)
		rc = gpu_buffer_create(gpu, scratch_bytes, GPU_MEMORY_DEVICE, &scratch);
	job.scratch = scratch.address;
	/* Outputs the scan cannot produce, so that one it did not write fails the check. */
	memset(host_dst->map, 0xff, bytes);
	double us = 0;
	if (rc == 0)
		rc = warm_up(gpu);
	if (rc == 0)
		rc = time_median(gpu, reps, record_host_scan, &job, &us);
	if (rc == 0) {
		const uint32_t *out = host_dst->map;
		uint32_t sum = 0;
		uint64_t wrong = 0;
		for (uint64_t i = 0; i < bytes / 4; i++) {
			sum += dtype == VKR_DTYPE_U32 ? staged_pattern(i) : 0;
			wrong += out[i] != sum;
		}
		printf("pcie %-40s %llu MiB: scan kernel %9.2f us %6.1f GB/s each way%s\n",
		       what, (unsigned long long)(bytes >> 20), us,
		       (double)bytes / (us * 1e3), wrong ? ", WRONG" : "");
		if (wrong) {
			fprintf(stderr, "vkreduce-bench: %s: %llu of %llu outputs wrong\n", what,
				(unsigned long long)wrong, (unsigned long long)(bytes / 4));
			rc = -EPROTO;
		}
	}
	gpu_buffer_destroy(gpu, &scratch);
	return rc;
}

/* The same scan between pages of the process's own, imported as the daemon imports a client's
 * shared memory (a memfd's pages, 4 KiB each, VK_EXT_external_memory_host), where the device
 * can import: does the GPU reach pages it did not allocate as fast as its own host memory? */
static int measure_imported_scan(struct gpu *gpu, int reps, uint64_t bytes)
{
	const struct gpu_info *info = gpu_get_info(gpu);
	if (!info->host_import) {
		printf("pcie scan of imported pages: not timed (the device imports no host memory)\n");
		return 0;
	}
	if (bytes % info->host_import_alignment != 0) {
		printf("pcie scan of imported pages: not timed (%llu bytes are not a multiple of the "
		       "device's import alignment, %llu)\n", (unsigned long long)bytes,
		       (unsigned long long)info->host_import_alignment);
		return 0;
	}
	void *pages[2] = { MAP_FAILED, MAP_FAILED };
	struct gpu_buffer buffers[2] = { { 0 }, { 0 } };
	int rc = 0;
	for (int i = 0; i < 2 && rc == 0; i++) {
		int fd = memfd_create("vkreduce-bench", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, (off_t)bytes) < 0) {
			rc = -errno;
		} else {
			pages[i] = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (pages[i] == MAP_FAILED)
				rc = -errno;
		}
		if (fd >= 0)
			close(fd);
		if (rc == 0)
			rc = gpu_buffer_import_host(gpu, pages[i], bytes, &buffers[i]);
	}
	if (rc == 0) {
		rc = measure_host_scan(gpu, reps, "scan of imported pages (u32 sum)", VKR_DTYPE_U32, &buffers[0],
				       &buffers[1], bytes);
	} else {
		/* a row that cannot be measured here, not a failure of the others */
		printf("pcie scan of imported pages: not timed (%s)\n", strerror(-rc));
		rc = 0;
	}
	for (int i = 0; i < 2; i++) {
		gpu_buffer_destroy(gpu, &buffers[i]);
		if (pages[i] != MAP_FAILED)
			munmap(pages[i], bytes);
	}
	return rc;
}

#define STAGED_CHUNK_SIZES 3
static const uint64_t staged_chunk_mib[STAGED_CHUNK_SIZES] = { 4, 16, 64 };

static uint64_t staged_chunk(size_t k, uint64_t bytes)
{
	uint64_t chunk = staged_chunk_mib[k] << 20;
	return chunk < bytes ? chunk : bytes;
}

/* The staged pipeline with its stages on queues of their own (staged_queues.c): copies up
 * on a transfer-only queue T0, the kernel on the compute queue, copies down on a second one
 * T1; or the kernel reading (writing) the host's memory itself, and T0 copying down (up).
 * Where the device has one transfer-only queue, T1 is T0; where it has none (lavapipe), every
 * stage runs on the compute queue, which checks the semaphores' logic, not the overlap. */
static int measure_staged_queues(struct gpu *gpu, int reps, struct gpu_buffer *host_src,
				 struct gpu_buffer *host_dst, struct gpu_buffer *ring, uint64_t bytes)
{
	struct gpu_copy_queue extra[3], transfer[2], main_q = gpu_compute_queue(gpu);
	unsigned count = gpu_copy_queues(gpu, extra, 3), transfers = 0;
	for (unsigned i = 0; i < count; i++)
		if (extra[i].transfer_only && transfers < 2)
			transfer[transfers++] = extra[i];
	/* T0 and T1: the transfer-only queues, or the compute queue where there are none */
	struct gpu_copy_queue t0 = transfers ? transfer[0] : main_q, t1 = transfers == 2 ? transfer[1] : t0;
	const char *where = transfers == 2 ? "" : transfers ? " (T1 = T0)" : " (one queue)";
	const struct staged_variant_queues {
		const char *name;
		bool kernel_from_host, kernel_to_host;
		struct gpu_copy_queue up, down;
	} variants[] = {
		{ "dma up on T0, kernel, dma down on T1", false, false, t0, t1 },
		{ "kernel from host, dma down on T0", true, false, t0, t0 },
		{ "dma up on T0, kernel to host", false, true, t0, t0 },
	};
	const int nvariants = (int)(sizeof(variants) / sizeof(variants[0]));
	int rc = 0;
	for (int v = 0; v < nvariants && rc == 0; v++) {
		for (size_t k = 0; k < STAGED_CHUNK_SIZES && rc == 0; k++) {
			struct staged_queues_config c = {
				.queues = { variants[v].up, main_q, variants[v].down },
				.kernel_from_host = variants[v].kernel_from_host,
				.kernel_to_host = variants[v].kernel_to_host,
				.host_src = host_src, .host_dst = host_dst,
				.ring = { &ring[0], &ring[1], &ring[2], &ring[3], &ring[4], &ring[5] },
				.bytes = bytes, .chunk = staged_chunk(k, bytes),
			};
			double ms = 0;
			memset(host_dst->map, 0, bytes);
			rc = warm_up(gpu);
			if (rc == 0)
				rc = staged_queues_time(gpu, &c, reps, &ms);
			if (rc < 0) {
				fprintf(stderr, "vkreduce-bench: staged pipeline on queues (%s): %s\n", variants[v].name,
					strerror(-rc));
				break;
			}
			bool one_family = variants[v].up.family == main_q.family && variants[v].down.family == main_q.family;
			bool right = matches_pattern(host_dst->map, bytes);
			/* Across queue families the buffers' contents are undefined without ownership
			 * transfers (the prototype has none), so a difference there is reported, not
			 * fatal; within one family it is a bug. */
			printf("pcie staged on queues: %s%s, chunks of %llu MiB, %llu MiB: %9.3f ms %6.1f GB/s each way%s\n",
			       variants[v].name, where, (unsigned long long)(c.chunk >> 20),
			       (unsigned long long)(bytes >> 20), ms, (double)bytes / (ms * 1e6),
			       right ? "" : " (OUTPUT DIFFERS)");
			if (!right && one_family) {
				fprintf(stderr, "vkreduce-bench: WRONG RESULT: the staged copy on queues differs\n");
				rc = -EPROTO;
			}
		}
	}
	return rc;
}

/* Times every variant of the staged pipeline at a few chunk sizes; GB/s are per direction. */
static int measure_staged(struct gpu *gpu, int reps, struct gpu_buffer *host_src,
			  struct gpu_buffer *host_dst, uint64_t bytes)
{
	struct gpu_buffer ring[6] = { 0 }; /* 4 here, 6 in measure_staged_queues */
	uint64_t largest = (uint64_t)staged_chunk_mib[STAGED_CHUNK_SIZES - 1] << 20;
	int rc = 0;
	for (int i = 0; i < 6 && rc == 0; i++)
		rc = gpu_buffer_create(gpu, largest < bytes ? largest : bytes, GPU_MEMORY_DEVICE, &ring[i]);
	uint32_t *words = host_src->map; /* a pattern a lost or misplaced chunk cannot match */
	for (uint64_t i = 0; rc == 0 && i < bytes / 4; i++)
		words[i] = staged_pattern(i);
	for (int v = 0; v < STAGED_VARIANTS && rc == 0; v++) {
		for (size_t k = 0; k < STAGED_CHUNK_SIZES && rc == 0; k++) {
			struct staged_ctx c = {
				.variant = (enum staged_variant)v, .host_src = host_src, .host_dst = host_dst,
				.ring_in = { &ring[0], &ring[1] }, .ring_out = { &ring[2], &ring[3] },
				.bytes = bytes, .chunk = staged_chunk(k, bytes),
			};
			double us = 0;
			memset(host_dst->map, 0, bytes);
			rc = warm_up(gpu);
			if (rc == 0)
				rc = time_median(gpu, reps, record_staged, &c, &us);
			if (rc == 0 && !matches_pattern(host_dst->map, bytes)) {
				fprintf(stderr, "vkreduce-bench: WRONG RESULT: the staged copy (%s) differs\n",
					staged_names[v]);
				rc = -EPROTO;
			}
			if (rc == 0)
				printf("pcie staged %-28s chunks of %3llu MiB, %llu MiB: %9.2f us %6.1f GB/s each way\n",
				       staged_names[v], (unsigned long long)(c.chunk >> 20),
				       (unsigned long long)(bytes >> 20), us, (double)bytes / (us * 1e3));
		}
	}
	if (rc == 0)
		rc = measure_staged_queues(gpu, reps, host_src, host_dst, ring, bytes);
	for (int i = 0; i < 6; i++)
		gpu_buffer_destroy(gpu, &ring[i]);
	return rc;
}

/* One copy recorded once into a command buffer of a queue family's own pool, submitted on
 * a queue of its own with a fence (a copy queue of gpu_config.copy_queues). */
struct queue_copy {
	VkCommandPool pool;
	VkCommandBuffer cb;
	VkFence fence;
	VkQueue queue;
};

static void queue_copy_finish(VkDevice dev, struct queue_copy *q)
{
	if (q->fence)
		vkDestroyFence(dev, q->fence, NULL);
	if (q->pool)
		vkDestroyCommandPool(dev, q->pool, NULL);
	memset(q, 0, sizeof(*q));
}

static int queue_copy_init(VkDevice dev, const struct gpu_copy_queue *on, const struct gpu_buffer *src,
			   const struct gpu_buffer *dst, uint64_t bytes, struct queue_copy *q)
{
	const VkCommandPoolCreateInfo pi = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
					     .queueFamilyIndex = on->family };
	const VkFenceCreateInfo fi = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	const VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
	const VkBufferCopy region = { .size = bytes };
	memset(q, 0, sizeof(*q));
	q->queue = on->queue;
	if (vkCreateCommandPool(dev, &pi, NULL, &q->pool) != VK_SUCCESS)
		return -ENOMEM;
	const VkCommandBufferAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
						 .commandPool = q->pool,
						 .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
						 .commandBufferCount = 1 };
	if (vkAllocateCommandBuffers(dev, &ai, &q->cb) != VK_SUCCESS || vkBeginCommandBuffer(q->cb, &bi) != VK_SUCCESS) {
		queue_copy_finish(dev, q);
		return -ENOMEM;
	}
	vkCmdCopyBuffer(q->cb, src->handle, dst->handle, 1, &region);
	if (vkEndCommandBuffer(q->cb) != VK_SUCCESS || vkCreateFence(dev, &fi, NULL, &q->fence) != VK_SUCCESS) {
		queue_copy_finish(dev, q);
		return -ENOMEM;
	}
	return 0;
}

/* Median wall time (ms) of the copies submitted together, each on its queue, until all
 * their fences signal. */
static int time_queue_copies(VkDevice dev, struct queue_copy *const *qs, unsigned n, int reps, double *ms)
{
	uint64_t t[64];
	if (reps > 64)
		reps = 64;
	for (int r = -1; r < reps; r++) { /* run -1 warms up */
		VkFence fences[4];
		for (unsigned i = 0; i < n; i++) {
			fences[i] = qs[i]->fence;
			if (vkResetFences(dev, 1, &fences[i]) != VK_SUCCESS)
				return -EIO;
		}
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (unsigned i = 0; i < n; i++) {
			const VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
						  .pCommandBuffers = &qs[i]->cb };
			if (vkQueueSubmit(qs[i]->queue, 1, &si, qs[i]->fence) != VK_SUCCESS) {
				vkDeviceWaitIdle(dev); /* an earlier queue's copy may be running */
				return -EIO;
			}
		}
		if (vkWaitForFences(dev, n, fences, VK_TRUE, UINT64_C(30000000000)) != VK_SUCCESS) {
			vkDeviceWaitIdle(dev); /* the caller frees the pools and fences next */
			return -EIO;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (r >= 0)
			t[r] = (uint64_t)elapsed_ns(&t0, &t1);
	}
	qsort(t, (size_t)reps, sizeof(t[0]), cmp_u64);
	*ms = (double)t[reps / 2] / 1e6;
	return 0;
}

/* Copies on queues of their own (gpu_config.copy_queues), by vkCmdCopyBuffer: one direction
 * on a transfer-only queue, then host to device on one queue and device to host on another,
 * submitted together. On one queue the two directions ran one after the other (S39-1); do
 * two queues overlap them as torch's two CUDA streams do? The buffers are used across queue
 * families without ownership transfers, so their contents are not defined afterwards: a
 * timing, not a copy to check. */
static int measure_copy_queues(struct gpu *gpu, int reps, struct gpu_buffer *host_src,
			       struct gpu_buffer *host_dst, struct gpu_buffer *dev_a, struct gpu_buffer *dev_b,
			       uint64_t bytes)
{
	struct gpu_copy_queue qs[3];
	unsigned count = gpu_copy_queues(gpu, qs, 3);
	VkDevice dev = gpu_device(gpu);
	int rc = 0;
	if (count < 2) {
		printf("pcie queues: fewer than two queues for copies beside the compute queue (%u): not timed\n", count);
		return 0;
	}
	static const char *const kind[2] = { "compute-family", "transfer-only" };
	/* Each queue alone, each way, then every ordered pair of distinct queues. */
	for (unsigned a = 0; a < count && rc == 0; a++) {
		for (int dir = 0; dir < 2 && rc == 0; dir++) {
			struct queue_copy q;
			double ms = 0;
			rc = queue_copy_init(dev, &qs[a], dir ? dev_b : host_src, dir ? host_dst : dev_a, bytes, &q);
			struct queue_copy *one[1] = { &q };
			if (rc == 0)
				rc = time_queue_copies(dev, one, 1, reps, &ms);
			queue_copy_finish(dev, &q);
			if (rc == 0)
				printf("pcie queue %u (%s) %s alone, %llu MiB: %9.3f ms %6.1f GB/s\n", a,
				       kind[qs[a].transfer_only], dir ? "device to host" : "host to device",
				       (unsigned long long)(bytes >> 20), ms, (double)bytes / (ms * 1e6));
		}
	}
	for (unsigned a = 0; a < count && rc == 0; a++) {
		for (unsigned b = 0; b < count && rc == 0; b++) {
			if (a == b)
				continue;
			struct queue_copy up, down;
			double ms = 0;
			rc = queue_copy_init(dev, &qs[a], host_src, dev_a, bytes, &up);
			if (rc == 0) {
				rc = queue_copy_init(dev, &qs[b], dev_b, host_dst, bytes, &down);
				struct queue_copy *both[2] = { &up, &down };
				if (rc == 0)
					rc = time_queue_copies(dev, both, 2, reps, &ms);
				queue_copy_finish(dev, &down);
			}
			queue_copy_finish(dev, &up);
			if (rc == 0)
				printf("pcie queues up on %u (%s), down on %u (%s), %llu MiB each: %9.3f ms %6.1f GB/s each way\n",
				       a, kind[qs[a].transfer_only], b, kind[qs[b].transfer_only],
				       (unsigned long long)(bytes >> 20), ms, (double)bytes / (ms * 1e6));
		}
	}
	if (rc < 0)
		fprintf(stderr, "vkreduce-bench: copy queues: %s\n", strerror(-rc));
	return rc;
}

/* The ceilings of a request on shared memory: host RAM <-> device over PCIe, by the copy
 * engine (vkCmdCopyBuffer) and by shader cores (the copy kernel, which moves data the way the
 * scan of an imported region does), one direction at a time and both at once (host RAM to
 * host RAM: every byte crosses the bus twice, once each way, as in a scan from one region
 * into another); then the scan of host memory itself beside them; then (but with
 * ceilings_only) the staged pipelines and the queues. GB/s are per direction. */
int pcie_measure(struct gpu *gpu, int reps, int max_log2, bool ceilings_only)
{
	/* as measure_copy() in vkreduce_bench.c */
	uint64_t bytes = chunk_bytes_for(gpu, ((uint64_t)1 << max_log2) * 4);
	struct gpu_buffer host_a = { 0 }, host_b = { 0 }, dev = { 0 };
	int rc = gpu_buffer_create(gpu, bytes, GPU_MEMORY_STAGING, &host_a);
	if (rc == 0)
		rc = gpu_buffer_create(gpu, bytes, GPU_MEMORY_READBACK, &host_b);
	if (rc == 0)
		rc = gpu_buffer_create(gpu, bytes, GPU_MEMORY_DEVICE, &dev);
	const struct {
		const char *what;
		struct gpu_buffer *src, *dst;
	} moves[] = {
		{ "host to device", &host_a, &dev },
		{ "device to host", &dev, &host_b },
		{ "host to host (both directions at once)", &host_a, &host_b },
	};
	for (size_t i = 0; i < sizeof(moves) / sizeof(moves[0]) && rc == 0; i++) {
		struct copy_ctx c = { .src = moves[i].src, .dst = moves[i].dst, .bytes = bytes };
		double kernel_us = 0, dma_us = 0;
		rc = warm_up(gpu);
		if (rc == 0)
			rc = time_median(gpu, reps, record_copy_kernel, &c, &kernel_us);
		if (rc == 0)
			rc = time_median(gpu, reps, record_copy, &c, &dma_us);
		if (rc == 0)
			printf("pcie %-40s %llu MiB: copy kernel %9.2f us %6.1f GB/s, "
			       "vkCmdCopyBuffer %9.2f us %6.1f GB/s\n",
			       moves[i].what, (unsigned long long)(bytes >> 20), kernel_us,
			       (double)bytes / (kernel_us * 1e3), dma_us, (double)bytes / (dma_us * 1e3));
	}
	/* Both directions at once as two transfers (torch's way, on two CUDA streams: 50.4 GB/s
	 * each way on the H200, where one host-to-host copy moved 42.1 in Vulkan): is a scan of
	 * shared memory that stages its data through device memory, in one direction and back
	 * in the other, worth building? */
	struct gpu_buffer dev_b = { 0 };
	if (rc == 0)
		rc = gpu_buffer_create(gpu, bytes, GPU_MEMORY_DEVICE, &dev_b);
	if (rc == 0) {
		struct copy_pair_ctx pair = {
			.up = { .src = &host_a, .dst = &dev, .bytes = bytes },
			.down = { .src = &dev_b, .dst = &host_b, .bytes = bytes },
		};
		double kernel_us = 0, dma_us = 0;
		rc = warm_up(gpu);
		pair.record = record_copy_kernel;
		if (rc == 0)
			rc = time_median(gpu, reps, record_copy_pair, &pair, &kernel_us);
		pair.record = record_copy;
		if (rc == 0)
			rc = time_median(gpu, reps, record_copy_pair, &pair, &dma_us);
		if (rc == 0)
			printf("pcie %-40s %llu MiB: copy kernel %9.2f us %6.1f GB/s, "
			       "vkCmdCopyBuffer %9.2f us %6.1f GB/s\n",
			       "host to device + device to host, 2 copies", (unsigned long long)(bytes >> 20),
			       kernel_us, (double)bytes / (kernel_us * 1e3), dma_us,
			       (double)bytes / (dma_us * 1e3));
	}
	if (rc == 0)
		rc = measure_host_scan(gpu, reps, "scan of host memory in place (u32 sum)", VKR_DTYPE_U32, &host_a,
				       &host_b, bytes);
	if (rc == 0)
		rc = measure_host_scan(gpu, reps, "scan of host memory in place (f32 sum)", VKR_DTYPE_F32, &host_a,
				       &host_b, bytes);
	if (rc == 0)
		rc = measure_imported_scan(gpu, reps, bytes);
	if (rc == 0 && !ceilings_only)
		rc = measure_staged(gpu, reps, &host_a, &host_b, bytes);
	if (rc == 0 && !ceilings_only)
		rc = measure_copy_queues(gpu, reps, &host_a, &host_b, &dev, &dev_b, bytes);
	gpu_buffer_destroy(gpu, &dev_b);
	gpu_buffer_destroy(gpu, &host_a);
	gpu_buffer_destroy(gpu, &host_b);
	gpu_buffer_destroy(gpu, &dev);
	return rc;
}
