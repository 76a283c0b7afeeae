/*
 * gpu.h: the Vulkan device vkreduce runs on: selection, queue, memory, command buffers and
 * the timeline semaphore that tells when submitted work is done.
 *
 * Threading: everything here is called from one thread (the daemon's loop thread), except
 * gpu_wait() and gpu_completed_value(), which the completion thread may call concurrently.
 * All fallible functions return 0 or a negative errno.
 */
#ifndef VKR_GPU_H
#define VKR_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "vkreduce_types.h"

struct gpu;

struct gpu_config {
	/* Index or case-insensitive name substring of the device to use; NULL or "" picks the
	 * best device (discrete, then integrated, then virtual, then CPU). VKR_DEVICE in the
	 * environment is used when this is NULL. Borrowed. */
	const char *device;
	/* Enable VK_LAYER_KHRONOS_validation with synchronization validation. Every message it
	 * reports is logged and counted (gpu_validation_messages()). Also enabled by
	 * VKR_VALIDATION=1 in the environment. */
	bool validation;
	/* Print the device choice and its reason to stderr. */
	bool verbose;
	/* Every scan reads or writes host memory (the daemon's do): the single-pass pipelines for
	 * device memory are not built, nor reduce-then-scan's where the staged single pass runs
	 * (kern_pipeline_superseded), which saves their compile time at start. */
	bool host_memory_scans_only;
	/* Build each pipeline when a command buffer first binds it, instead of all it may use at
	 * start (141 of 325 in the daemon on lavapipe): a start in a fraction of the time
	 * (lavapipe compiles each in tens of milliseconds), but the first batch of each kind
	 * waits for its compile. For tools and tests that start devices often; the daemon builds
	 * everything at start. Also VKR_COMPILE_ON_FIRST_USE=1 in the environment. */
	bool compile_on_first_use;
	/* Where the engine's messages go (device choice, validation reports, cache warnings):
	 * level 0 error, 1 warning, 2 info, 3 debug (the daemon's log levels). NULL: stderr,
	 * prefixed "vkreduce: ". May be called from the driver's threads (validation). */
	void (*log)(int level, const char *message);
	/* File of the Vulkan pipeline cache: read at start if present and made by this device
	 * and driver (otherwise ignored with a warning). NULL: no cache. Borrowed. */
	const char *pipeline_cache_path;
	/* Benchmarks only: also create queues for copies beside the compute queue (a second
	 * one of the compute family, up to two of a transfer-only family), to time whether
	 * copies on queues of their own overlap (gpu_copy_queues). The daemon runs on one. */
	bool copy_queues;
};

/* What the engine learned about the device it chose. */
struct gpu_info {
	uint32_t device_index;          /* index among the instance's physical devices */
	char name[256];
	const char *type;              /* "discrete", "integrated", "virtual", "cpu", "other" */
	uint32_t vendor_id;
	uint32_t device_id;
	uint32_t api_version;
	char driver[256];              /* driver name and info, may be empty */
	/* The device's PCI address, "dddd:bb:dd.f" (VK_EXT_pci_bus_info), or "" where the driver
	 * does not say (lavapipe): where its interrupts land (daemon/irq_cpus.c). */
	char pci_address[24];
	uint32_t subgroup_size;
	uint32_t max_shared_memory;    /* maxComputeSharedMemorySize */
	bool denorm_preserve32;        /* shaders can keep f32 subnormals (DenormPreserve) */
	bool denorm_preserve64;        /* ... and f64 subnormals */
	uint64_t max_storage_buffer_range;
	uint32_t max_workgroup_count_x;
	uint64_t max_allocation_size;
	uint64_t max_buffer_size;
	/* The largest buffer an array, or one part of one, is held in: gpu_largest_buffer(), or
	 * less where VKR_MAX_ARRAY_BUFFER_BYTES says (tests of arrays in several buffers). */
	uint64_t array_buffer_limit;
	uint64_t array_part_bytes;     /* gpu_array_part_bytes(), computed once at creation */
	bool shader_float64;
	bool shader_int64;
	bool host_import;              /* VK_EXT_external_memory_host is enabled */
	uint64_t host_import_alignment; /* minImportedHostPointerAlignment, 0 without import */
	uint32_t reduce_workgroups;    /* workgroups of pass 1 of a reduction, fixed per device */
	uint32_t copy_workgroups;      /* workgroups of the copy kernel (the bench's reference) */
	uint32_t scan_workgroups;      /* most workgroups in one row of a scan dispatch */
	/* Reductions of one buffer run in one dispatch, the last workgroup to finish folding
	 * the partials (VKR_REDUCE=two-pass: a second dispatch folds them, as before session 11). */
	bool reduce_one_dispatch;
	/* One-dispatch reductions with 4-byte accumulators keep their partials flagged in the
	 * command buffer's table, with no fences (reduce.comp's FLAGGED_PARTIALS;
	 * kern_flagged_partials()), where host-visible memory is device-local; elsewhere, with
	 * VKR_REDUCE=fenced and for 8-byte accumulators (but with VKR_REDUCE=flagged), in the
	 * scratch behind fences. */
	bool reduce_flagged_partials;
	bool reduce_flagged_wide; /* VKR_REDUCE=flagged: 8-byte accumulators flagged too */
	/* One-dispatch count-if, integer sums, and min and max have no partials: each
	 * workgroup takes its value into the result slot by one atomic add (reduce.comp's
	 * ATOMIC_SUM32; kern_atomic_sums32(): count-if, sums of i32 and u32; ATOMIC_VALUE's
	 * kern_atomic_sums(): sums of i64 and u64) or max (kern_atomic_extremes()). By default
	 * where the device has shaderBufferInt64Atomics and reduce_subgroup_tree; no VKR_REDUCE
	 * mode uses them (VKR_REDUCE=partials: the default without them). */
	bool reduce_atomic_tails;
	/* VKR_REDUCE_FLOAT_SUM=limbs: one-dispatch sums of f32 and f64 by limbs too, where the
	 * atomic tails run (kern_float_limb_sums(); off by default until measured on the H200). */
	bool reduce_float_limbs;
	/* VKR_REDUCE_INT_PROD=exponents: one-dispatch products of integers by exponents too,
	 * where the atomic tails run (kern_product_exponents(); off by default until measured
	 * on the H200). */
	bool reduce_product_exponents;
	/* One-dispatch sums and products without an atomic tail leave their partials to the
	 * host, where the atomic tails run and readback memory is cached (kern_host_fold(); the
	 * default, VKR_REDUCE_FOLD=host; VKR_REDUCE_FOLD=device has the GPU's last workgroup
	 * fold them). */
	bool reduce_host_fold;
	/* Readback memory is HOST_CACHED: the CPU reads it from its cache, not over the bus one
	 * uncached load at a time (the host's fold reads up to 8 bytes per workgroup from it). */
	bool readback_cached;
	/* The reductions' workgroup tree is by subgroup shuffles (basic and shuffle in compute,
	 * subgroups of 4 to 256, computeFullSubgroups), unless VKR_REDUCE_TREE=shared: else the
	 * tree in shared memory. */
	bool reduce_subgroup_tree;
	/* The scan of device memory (VKR_SCAN): single-pass for every op and dtype, reduce-then-scan
	 * for every one, or neither (the default: kern.c picks per op and dtype). */
	bool scan_single_pass;
	bool scan_reduce_then_scan;
	/* The single pass over device memory uses chunked tiles (subgroup rows; the subgroup
	 * build of scan_chained.comp): where the device has the subgroup shuffles (basic,
	 * shuffle and shuffle_relative in compute, subgroups of 4 to 256, computeFullSubgroups), unless
	 * VKR_SCAN_TILE=blelloch. */
	bool scan_chunked;
	uint32_t scan_patience;        /* single-pass: look-back rounds before doing stalled work */
	/* VKR_SCAN_CHUNK_ROWS: rows per invocation of every chunked tile (1 to
	 * KERN_MAX_CHUNK_ROWS), for measurements; 0: kern_scan_chunk_rows()'s choice per op and
	 * dtype. */
	uint32_t scan_chunk_rows_override;
	/* VKR_SCAN_PARK_ROWS: parked rows per invocation of every chunked tile (0 to
	 * KERN_MAX_CHUNK_ROWS; kern_scan_park_rows() bounds it), for measurements; -1:
	 * kern_scan_park_rows()'s choice. */
	int32_t scan_park_rows_override;
	/* Single-pass tiles over device memory taken by workgroup id instead of from a counter
	 * (scan_chained.comp's TILES_BY_WORKGROUP): by default on devices other than CPUs;
	 * VKR_SCAN_TILES=workgroup or counter. */
	bool scan_tiles_by_workgroup;
	/* Scan tiles are scanned with subgroup shuffles (else the Blelloch tree in shared memory):
	 * with VKR_SCAN_TILE=subgroup where the device has them (as for scan_chunked): the tile
	 * scan of reduce-then-scan and of the single pass over host memory. */
	bool scan_tile_subgroup;
	double timestamp_period_ns;    /* 0 when the queue has no timestamps */
	char choice_reason[256];       /* why this device was chosen */
};

/* Creates the instance and device and builds every pipeline (unless compile_on_first_use).
 * On failure writes a one-line reason into err (if not NULL) and returns -ENODEV (no usable
 * device), -ENOTSUP, -ENOMEM or -EIO. */
int gpu_create(const struct gpu_config *config, struct gpu **out, char *err, size_t err_size);
/* Waits for the device to go idle and frees everything. Accepts NULL. */
void gpu_destroy(struct gpu *gpu);

const struct gpu_info *gpu_get_info(const struct gpu *gpu);
/* Whether the device can run kernels on this dtype: f64 needs shaderFloat64, and
 * shaderInt64 too where it compares floats by order keys (no shaderDenormPreserveFloat64:
 * an f64 key is an int64, shaders/common.glsl); 64-bit integers need shaderInt64. Scans of
 * f64 need shaderInt64 on every device, which kern_validate checks. */
bool gpu_supports_dtype(const struct gpu *gpu, vkr_dtype dtype);
/* The same, from the device's features alone. */
bool gpu_info_supports_dtype(const struct gpu_info *info, vkr_dtype dtype);
/* Writes the pipeline cache to path atomically (temporary file + rename). 0 or -errno. */
int gpu_save_pipeline_cache(struct gpu *gpu, const char *path);
/* Whether gpu_create found and used a valid cache file. */
bool gpu_pipeline_cache_was_loaded(const struct gpu *gpu);
/* Number of validation-layer messages seen so far (0 when validation is off). */
uint64_t gpu_validation_messages(const struct gpu *gpu);

/* ---- memory ---------------------------------------------------------------------------- */

enum gpu_memory_kind {
	GPU_MEMORY_DEVICE,   /* device-local, not mapped: the fastest for kernels */
	GPU_MEMORY_UPLOAD,   /* host-visible, coherent, mapped: the CPU writes, the GPU reads */
	GPU_MEMORY_READBACK, /* host-visible, coherent, preferably cached, mapped: GPU writes */
	GPU_MEMORY_STAGING,  /* host-visible, coherent, in host RAM where the device has such a
			      * type, mapped: large uploads. The CPU writes device-local
			      * host-visible (BAR) memory at a few GB/s, host RAM at memcpy speed,
			      * and the GPU then reads host RAM over PCIe at the bus's speed. */
};

/* A buffer with its own memory, usable from shaders through its device address. */
struct gpu_buffer {
	VkBuffer handle;
	VkDeviceMemory memory;
	uint64_t address; /* VkDeviceAddress of byte 0 */
	uint64_t size;
	void *map;        /* may be NULL: mapped pointer for host-visible buffers */
	bool imported;    /* memory imported from host pages (not owned by Vulkan) */
};

/* The largest buffer the device allocates at once (maxMemoryAllocationSize, and
 * maxBufferSize where the device reports it): every buffer is one allocation, so no array
 * larger than this can be held (4,292,870,144 bytes on the H200, 2 GiB on lavapipe). */
uint64_t gpu_largest_buffer(const struct gpu *gpu);
/* An array larger than info.array_buffer_limit is held in parts of this many bytes (the
 * last may be shorter): the largest power of two within the limit, so every element size
 * divides it (2 GiB on the H200). */
uint64_t gpu_array_part_bytes(const struct gpu *gpu);
/* -E2BIG when size exceeds gpu_largest_buffer(). */
int gpu_buffer_create(struct gpu *gpu, uint64_t size, enum gpu_memory_kind kind,
		      struct gpu_buffer *out);
/* Imports size bytes of host memory at ptr (both aligned to host_import_alignment) so that
 * the GPU reads and writes them in place. -ENOTSUP without VK_EXT_external_memory_host,
 * -EINVAL on misalignment. The pages must stay mapped until the buffer is destroyed. */
int gpu_buffer_import_host(struct gpu *gpu, void *ptr, uint64_t size, struct gpu_buffer *out);
/* Frees the buffer; the caller guarantees no pending GPU work uses it. Accepts a zeroed
 * buffer. */
void gpu_buffer_destroy(struct gpu *gpu, struct gpu_buffer *buffer);

/* ---- command buffers and completion ---------------------------------------------------- */

/* One primary command buffer with begin/end timestamps, recycled after completion. */
struct gpu_cmd;

/* Starts recording a new command buffer (from a recycled pool entry where possible). */
int gpu_cmd_begin(struct gpu *gpu, struct gpu_cmd **out);
VkCommandBuffer gpu_cmd_handle(struct gpu_cmd *cmd);

/* The queues gpu_config.copy_queues asked for: queue, its family, and whether the family
 * is transfer-only. Returns how many (up to max); 0 without copy_queues. The device handle
 * is for the caller's own command pools on them. */
struct gpu_copy_queue {
	VkQueue queue;
	uint32_t family;
	bool transfer_only;
};
unsigned gpu_copy_queues(const struct gpu *gpu, struct gpu_copy_queue *out, unsigned max);
VkDevice gpu_device(const struct gpu *gpu);
/* The compute queue and its family, for benchmarks that submit to it with semaphores of
 * their own; nothing else may submit meanwhile. */
struct gpu_copy_queue gpu_compute_queue(const struct gpu *gpu);
/* Records a full memory barrier between the two stages' accesses (compute/transfer/host),
 * e.g. transfer writes -> shader reads, or shader writes -> shader reads. */
void gpu_cmd_barrier(struct gpu_cmd *cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
		     VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);
/* Ends recording (adding a barrier that makes shader and transfer writes visible to the
 * host) and submits; *value receives the timeline value that signals completion. On failure
 * the command buffer is recycled and -EIO (device lost or submit failed) or -ENOMEM is
 * returned. */
int gpu_cmd_submit(struct gpu *gpu, struct gpu_cmd *cmd, uint64_t *value);
/* Abandons a command buffer that was begun but not submitted. */
void gpu_cmd_abandon(struct gpu *gpu, struct gpu_cmd *cmd);
/* GPU time between the command buffer's begin and end timestamps, in nanoseconds; 0 if the
 * device has no timestamps. Valid once its value has completed. */
uint64_t gpu_cmd_elapsed_ns(struct gpu *gpu, struct gpu_cmd *cmd);
/* Returns a completed command buffer to the pool, reset there so that the next gpu_cmd_begin
 * does not pay for it. Accepts NULL. */
void gpu_cmd_recycle(struct gpu *gpu, struct gpu_cmd *cmd);

/* Waits until the timeline reaches value: 0, -ETIMEDOUT, or -EIO when the device is lost.
 * Thread-safe against the loop thread. */
int gpu_wait(struct gpu *gpu, uint64_t value, uint64_t timeout_ns);
/* The highest completed timeline value (thread-safe). */
uint64_t gpu_completed_value(struct gpu *gpu);
/* The value the last successful submit will signal. */
uint64_t gpu_last_submitted_value(const struct gpu *gpu);
/* Whether the device has been lost (after which only gpu_destroy is useful). */
bool gpu_is_lost(const struct gpu *gpu);

/* Whether pipelines are built on first use (gpu_config.compile_on_first_use or
 * VKR_COMPILE_ON_FIRST_USE=1) rather than all in gpu_create. */
bool gpu_builds_on_first_use(const struct gpu *gpu);

/* Internal to the engine (kern_*.c). Whether this device builds pipeline `index` (a dtype or
 * variant it cannot run is never built). */
bool gpu_pipeline_available(const struct gpu *gpu, uint32_t index);
/* Whether pipeline `index` has been built (without building it). */
bool gpu_pipeline_built(const struct gpu *gpu, uint32_t index);
/* Pipeline `index`, built now if it was not yet (compile_on_first_use). 0, -ENOENT if the device
 * does not build it, or the -errno of a failed build (logged). */
int gpu_pipeline(struct gpu *gpu, uint32_t index, VkPipeline *out);
VkPipelineLayout gpu_pipeline_layout(struct gpu *gpu);

#endif /* VKR_GPU_H */
