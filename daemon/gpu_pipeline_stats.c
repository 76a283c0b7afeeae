/*
 * gpu_pipeline_stats.c: the driver's statistics of each compiled pipeline (registers, shared
 * memory, spills, as the driver names them), logged when VKR_PIPELINE_STATS=1 and the device
 * has VK_KHR_pipeline_executable_properties. A diagnostic: occupancy on a GPU is set by
 * registers and shared memory per workgroup, which only the driver knows.
 */
#include "gpu_internal.h"

#include <inttypes.h>
#include <stdio.h>

void gpu_log_pipeline_statistics(struct gpu *gpu, VkPipeline pipeline, const char *name)
{
	PFN_vkGetPipelineExecutablePropertiesKHR get_executables =
		(PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(
			gpu->device, "vkGetPipelineExecutablePropertiesKHR");
	PFN_vkGetPipelineExecutableStatisticsKHR get_statistics =
		(PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
			gpu->device, "vkGetPipelineExecutableStatisticsKHR");
	if (!get_executables || !get_statistics)
		return;
	const VkPipelineInfoKHR info = { .sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipeline };
	VkPipelineExecutablePropertiesKHR executables[4];
	uint32_t executable_count = 4;
	for (uint32_t i = 0; i < executable_count; i++)
		executables[i] = (VkPipelineExecutablePropertiesKHR){
			.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR,
		};
	VkResult r = get_executables(gpu->device, &info, &executable_count, executables);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE)
		return;
	for (uint32_t e = 0; e < executable_count; e++) {
		const VkPipelineExecutableInfoKHR ei = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
			.pipeline = pipeline,
			.executableIndex = e,
		};
		VkPipelineExecutableStatisticKHR stats[32];
		uint32_t stat_count = 32;
		for (uint32_t i = 0; i < stat_count; i++)
			stats[i] = (VkPipelineExecutableStatisticKHR){
				.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR,
			};
		r = get_statistics(gpu->device, &ei, &stat_count, stats);
		if (r != VK_SUCCESS && r != VK_INCOMPLETE)
			continue;
		char line[1024];
		int used = snprintf(line, sizeof(line), "pipeline %s [%s]:", name, executables[e].name);
		for (uint32_t i = 0; i < stat_count && used > 0 && (size_t)used < sizeof(line); i++) {
			const VkPipelineExecutableStatisticKHR *s = &stats[i];
			size_t left = sizeof(line) - (size_t)used;
			switch (s->format) {
			case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
				used += snprintf(line + used, left, " %s=%u;", s->name, s->value.b32);
				break;
			case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
				used += snprintf(line + used, left, " %s=%" PRId64 ";", s->name, s->value.i64);
				break;
			case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
				used += snprintf(line + used, left, " %s=%" PRIu64 ";", s->name, s->value.u64);
				break;
			case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
				used += snprintf(line + used, left, " %s=%g;", s->name, s->value.f64);
				break;
			default:
				break;
			}
		}
		fprintf(stderr, "%s\n", line);
	}
}
