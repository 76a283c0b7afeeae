/*
 * gpu_internal.h: the engine's device state, shared by gpu.c, gpu_memory.c and gpu_cmd.c
 * and by nothing outside the engine.
 */
#ifndef VKR_GPU_INTERNAL_H
#define VKR_GPU_INTERNAL_H

#include <stdatomic.h>

#include "gpu.h"

/* Push constants of every kernel fit in this many bytes (the minimum any device offers is
 * 128). */
#define GPU_PUSH_CONSTANT_BYTES 80

struct gpu_cmd {
	VkCommandBuffer handle; /* owned by the pool */
	VkQueryPool timestamps; /* owned: 2 queries, begin and end; may be VK_NULL_HANDLE */
	uint64_t value;         /* timeline value signalled when it completes, 0 before submit */
	struct gpu_buffer table; /* owned: mapped memory for the job tables of the batch recorded
				  * into this command buffer; reused only after completion */
	bool reset;             /* in the initial state: reset when recycled, after the replies */
	struct gpu_cmd *next;   /* free list link */
};

struct gpu {
	VkInstance instance;
	VkDebugUtilsMessengerEXT messenger; /* may be VK_NULL_HANDLE */
	VkPhysicalDevice physical;
	VkDevice device;
	VkQueue queue;
	uint32_t queue_family;
	struct gpu_copy_queue copy_queues[3]; /* gpu_config.copy_queues: benchmarks only */
	unsigned copy_queue_count;
	bool want_copy_queues;
	uint32_t timestamp_valid_bits;
	VkSemaphore timeline;
	uint64_t last_submitted; /* loop thread only */
	uint64_t wait_spin_ns;   /* gpu_wait polls this long before blocking */
	bool has_host_import_ext;
	bool has_sm_builtins;
	bool has_pci_bus_info;
	bool has_subgroup_size_control_ext; /* VK_EXT_subgroup_size_control (core from 1.3) */
	/* computeFullSubgroups is enabled and every pipeline is created to run whole subgroups:
	 * the kernels' subgroup operations (the chunked scans' rows, the reductions' xor
	 * butterfly) read every lane of a subgroup, which Vulkan guarantees only then. */
	bool full_subgroups;
	/* shaderBufferInt64Atomics is enabled: the reductions' atomic tails (info's
	 * reduce_atomic_tails: integer sums, min and max by atomics). */
	bool buffer_int64_atomics;
	bool pipeline_stats; /* VKR_PIPELINE_STATS=1 and VK_KHR_pipeline_executable_properties */
	bool host_memory_scans_only; /* gpu_config's */
	bool compile_on_first_use;   /* gpu_config's, or VKR_COMPILE_ON_FIRST_USE=1 */
	struct gpu_info info;

	/* Memory type index per gpu_memory_kind, and the import type bits. */
	uint32_t memory_type[4];
	VkPhysicalDeviceMemoryProperties memory_props;

	VkCommandPool cmd_pool;
	struct gpu_cmd *free_cmds; /* recycled command buffers */
	bool table_in_host_logged; /* gpu_cmd_table fell back to host RAM and said so */
	struct gpu_cmd **all_cmds; /* every gpu_cmd ever created, for teardown */
	size_t all_cmd_count, all_cmd_cap;

	VkPipelineCache pipeline_cache; /* owned; may be VK_NULL_HANDLE */
	bool pipeline_cache_loaded;
	void (*log)(int level, const char *message); /* may be NULL: stderr */
	VkPipelineLayout layout;
	VkPipeline *pipelines;   /* owned; kern_pipeline_count() entries, NULL if unsupported or
				  * not built yet (compile_on_first_use) */
	VkShaderModule *modules; /* owned; one per distinct code, at the first pipeline using it */
	size_t pipeline_count;

	atomic_uint_fast64_t validation_messages;
	atomic_bool lost;
};

/* A host-visible, mapped buffer of at least bytes owned by cmd, for data the recorder
 * writes in place before the submission (the small jobs' table). Valid until the command
 * buffer is recorded again. 0 or -ENOMEM. */
int gpu_cmd_table(struct gpu *gpu, struct gpu_cmd *cmd, uint64_t bytes, struct gpu_buffer **out);

/* Formats a message to the config's log hook, or to stderr. */
void gpu_log(const struct gpu *gpu, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Converts a VkResult to 0 or a negative errno (device lost and unknown errors -> -EIO). */
int gpu_errno_from_vk(VkResult result);

/* Fault injection for tests (VKR_FAULT_SUBMIT_EVERY=N: every Nth submit fails as if the
 * device were lost). Returns whether this submit should fail. */
bool gpu_fault_should_fail_submit(void);

/* Creates gpu->pipeline_cache from the file at path (NULL: empty cache). */
int gpu_cache_load(struct gpu *gpu, const char *path);
int gpu_memory_init(struct gpu *gpu);
int gpu_cmd_pool_init(struct gpu *gpu);
void gpu_cmd_pool_finish(struct gpu *gpu);

/* Logs the driver's statistics of a pipeline on stderr (gpu_pipeline_stats.c). */
void gpu_log_pipeline_statistics(struct gpu *gpu, VkPipeline pipeline, const char *name);

#endif /* VKR_GPU_INTERNAL_H */
