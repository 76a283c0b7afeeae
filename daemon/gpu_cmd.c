/*
 * gpu_cmd.c: command buffers, their timestamps, and submission on the timeline semaphore.
 * Command buffers are recycled through a free list rather than freed, so a busy daemon
 * allocates none in steady state.
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu_internal.h"

int gpu_cmd_pool_init(struct gpu *gpu)
{
	const VkCommandPoolCreateInfo pi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = gpu->queue_family,
	};
	return gpu_errno_from_vk(vkCreateCommandPool(gpu->device, &pi, NULL, &gpu->cmd_pool));
}

void gpu_cmd_pool_finish(struct gpu *gpu)
{
	for (size_t i = 0; i < gpu->all_cmd_count; i++) {
		struct gpu_cmd *cmd = gpu->all_cmds[i];
		if (cmd->timestamps)
			vkDestroyQueryPool(gpu->device, cmd->timestamps, NULL);
		gpu_buffer_destroy(gpu, &cmd->table);
		free(cmd);
	}
	free(gpu->all_cmds);
	gpu->all_cmds = NULL;
	gpu->all_cmd_count = gpu->all_cmd_cap = 0;
	gpu->free_cmds = NULL;
	if (gpu->cmd_pool)
		vkDestroyCommandPool(gpu->device, gpu->cmd_pool, NULL); /* frees the buffers */
	gpu->cmd_pool = VK_NULL_HANDLE;
}

static int cmd_create(struct gpu *gpu, struct gpu_cmd **out)
{
	if (gpu->all_cmd_count == gpu->all_cmd_cap) {
		size_t cap = gpu->all_cmd_cap ? gpu->all_cmd_cap * 2 : 8;
		struct gpu_cmd **all = realloc(gpu->all_cmds, cap * sizeof(*all));
		if (!all)
			return -ENOMEM;
		gpu->all_cmds = all;
		gpu->all_cmd_cap = cap;
	}
	struct gpu_cmd *cmd = calloc(1, sizeof(*cmd));
	if (!cmd)
		return -ENOMEM;
	const VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = gpu->cmd_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VkResult r = vkAllocateCommandBuffers(gpu->device, &ai, &cmd->handle);
	if (r != VK_SUCCESS) {
		free(cmd);
		return gpu_errno_from_vk(r);
	}
	if (gpu->info.timestamp_period_ns > 0) {
		const VkQueryPoolCreateInfo qi = {
			.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
			.queryType = VK_QUERY_TYPE_TIMESTAMP,
			.queryCount = 2,
		};
		/* Without timestamps the command buffer still works; elapsed time reads 0. */
		if (vkCreateQueryPool(gpu->device, &qi, NULL, &cmd->timestamps) != VK_SUCCESS)
			cmd->timestamps = VK_NULL_HANDLE;
	}
	gpu->all_cmds[gpu->all_cmd_count++] = cmd;
	*out = cmd;
	return 0;
}

int gpu_cmd_begin(struct gpu *gpu, struct gpu_cmd **out)
{
	struct gpu_cmd *cmd = gpu->free_cmds;
	if (cmd) {
		gpu->free_cmds = cmd->next;
	} else {
		int rc = cmd_create(gpu, &cmd);
		if (rc < 0)
			return rc;
	}
	cmd->next = NULL;
	cmd->value = 0;
	VkResult r = cmd->reset ? VK_SUCCESS : vkResetCommandBuffer(cmd->handle, 0);
	cmd->reset = false;
	const VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	if (r == VK_SUCCESS)
		r = vkBeginCommandBuffer(cmd->handle, &bi);
	if (r != VK_SUCCESS) {
		cmd->next = gpu->free_cmds;
		gpu->free_cmds = cmd;
		return gpu_errno_from_vk(r);
	}
	if (cmd->timestamps) {
		vkCmdResetQueryPool(cmd->handle, cmd->timestamps, 0, 2);
		vkCmdWriteTimestamp(cmd->handle, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, cmd->timestamps, 0);
	}
	*out = cmd;
	return 0;
}

int gpu_cmd_table(struct gpu *gpu, struct gpu_cmd *cmd, uint64_t bytes, struct gpu_buffer **out)
{
	if (cmd->table.size < bytes) {
		/* Grow geometrically; the old buffer is not in use: cmd is being recorded. */
		uint64_t size = cmd->table.size ? cmd->table.size : 65536;
		while (size < bytes)
			size *= 2;
		gpu_buffer_destroy(gpu, &cmd->table);
		/* Host-visible and mapped: the recorder writes the table in place. Device-local
		 * host-visible memory can be a small window (no resizable BAR): then host RAM. */
		int rc = gpu_buffer_create(gpu, size, GPU_MEMORY_UPLOAD, &cmd->table);
		if (rc < 0) {
			rc = gpu_buffer_create(gpu, size, GPU_MEMORY_STAGING, &cmd->table);
			/* Still correct, but flagged partials (kern_flagged_partials(), chosen per
			 * device), the arrival words and the spread small jobs' partials and
			 * arrivals (kern_small_jobs_spread()) then cross the bus: the last
			 * workgroup reads each partial from host RAM, and every workgroup's
			 * arrival goes there. Said once. */
			if (rc == 0 && !gpu->table_in_host_logged) {
				gpu->table_in_host_logged = true;
				gpu_log(gpu, 1, "a command buffer's table of %llu bytes did not fit device-local "
						"host-visible memory and is in host RAM: reductions with flagged "
						"partials or arrival words reach it over the bus (VKR_REDUCE=fenced "
						"avoids it)",
					(unsigned long long)size);
			}
		}
		if (rc < 0)
			return rc;
		if (!cmd->table.map) {
			gpu_buffer_destroy(gpu, &cmd->table);
			return -ENOMEM;
		}
	}
	*out = &cmd->table;
	return 0;
}

VkCommandBuffer gpu_cmd_handle(struct gpu_cmd *cmd)
{
	return cmd->handle;
}

void gpu_cmd_barrier(struct gpu_cmd *cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
		     VkPipelineStageFlags dst_stage, VkAccessFlags dst_access)
{
	const VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = src_access,
		.dstAccessMask = dst_access,
	};
	vkCmdPipelineBarrier(cmd->handle, src_stage, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

int gpu_cmd_submit(struct gpu *gpu, struct gpu_cmd *cmd, uint64_t *value)
{
	/* Everything the kernels and copies wrote becomes visible to the host once the
	 * timeline value signals. */
	gpu_cmd_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
			VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
			VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
	if (cmd->timestamps)
		vkCmdWriteTimestamp(cmd->handle, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, cmd->timestamps, 1);
	VkResult r = vkEndCommandBuffer(cmd->handle);
	if (r != VK_SUCCESS) {
		gpu_cmd_abandon(gpu, cmd);
		return gpu_errno_from_vk(r);
	}
	uint64_t next = gpu->last_submitted + 1;
	const VkTimelineSemaphoreSubmitInfo ti = {
		.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
		.signalSemaphoreValueCount = 1,
		.pSignalSemaphoreValues = &next,
	};
	const VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.pNext = &ti,
		.commandBufferCount = 1,
		.pCommandBuffers = &cmd->handle,
		.signalSemaphoreCount = 1,
		.pSignalSemaphores = &gpu->timeline,
	};
	r = gpu_fault_should_fail_submit() ? VK_ERROR_DEVICE_LOST
					   : vkQueueSubmit(gpu->queue, 1, &si, VK_NULL_HANDLE);
	if (r != VK_SUCCESS) {
		if (r == VK_ERROR_DEVICE_LOST)
			atomic_store(&gpu->lost, true);
		gpu_cmd_abandon(gpu, cmd);
		return gpu_errno_from_vk(r);
	}
	gpu->last_submitted = next;
	cmd->value = next;
	*value = next;
	return 0;
}

void gpu_cmd_abandon(struct gpu *gpu, struct gpu_cmd *cmd)
{
	if (!cmd)
		return;
	/* A recording that failed or was never submitted is reset when reused. */
	cmd->value = 0;
	cmd->next = gpu->free_cmds;
	gpu->free_cmds = cmd;
}

uint64_t gpu_cmd_elapsed_ns(struct gpu *gpu, struct gpu_cmd *cmd)
{
	uint64_t ticks[2];
	if (!cmd->timestamps || cmd->value == 0)
		return 0;
	VkResult r = vkGetQueryPoolResults(gpu->device, cmd->timestamps, 0, 2, sizeof(ticks), ticks,
					   sizeof(ticks[0]), VK_QUERY_RESULT_64_BIT);
	if (r != VK_SUCCESS)
		return 0;
	uint64_t mask = gpu->timestamp_valid_bits >= 64 ? ~0ull : (1ull << gpu->timestamp_valid_bits) - 1;
	uint64_t delta = (ticks[1] - ticks[0]) & mask;
	return (uint64_t)((double)delta * gpu->info.timestamp_period_ns);
}

void gpu_cmd_recycle(struct gpu *gpu, struct gpu_cmd *cmd)
{
	if (!cmd)
		return;
	/* Reset now, off the next request's path: the batch's replies are already written.
	 * A failure leaves the reset to gpu_cmd_begin, which reports it. */
	cmd->reset = vkResetCommandBuffer(cmd->handle, 0) == VK_SUCCESS;
	cmd->next = gpu->free_cmds;
	gpu->free_cmds = cmd;
}
