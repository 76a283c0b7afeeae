/*
 * gpu.c: instance, device selection, queue, timeline semaphore and pipelines.
 * Memory lives in gpu_memory.c, command buffers in gpu_cmd.c.
 */
#include "gpu_internal.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "kern.h"

#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

static void set_err(char *err, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;
	if (!err || size == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

void gpu_log(const struct gpu *gpu, int level, const char *fmt, ...)
{
	char message[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	if (gpu && gpu->log)
		gpu->log(level, message);
	else
		fprintf(stderr, "vkreduce: %s%s\n", level == 0 ? "error: " : level == 1 ? "warning: " : "",
			message);
}

int gpu_errno_from_vk(VkResult result)
{
	switch (result) {
	case VK_SUCCESS:
		return 0;
	case VK_TIMEOUT:
	case VK_NOT_READY:
		return -ETIMEDOUT;
	case VK_ERROR_OUT_OF_HOST_MEMORY:
	case VK_ERROR_OUT_OF_DEVICE_MEMORY:
	case VK_ERROR_OUT_OF_POOL_MEMORY:
	case VK_ERROR_TOO_MANY_OBJECTS:
		return -ENOMEM;
	case VK_ERROR_FEATURE_NOT_PRESENT:
	case VK_ERROR_EXTENSION_NOT_PRESENT:
	case VK_ERROR_LAYER_NOT_PRESENT:
	case VK_ERROR_INCOMPATIBLE_DRIVER:
	case VK_ERROR_FORMAT_NOT_SUPPORTED:
		return -ENOTSUP;
	case VK_ERROR_INVALID_EXTERNAL_HANDLE:
		return -EINVAL;
	case VK_ERROR_INITIALIZATION_FAILED:
		return -ENODEV;
	default:
		return -EIO; /* device lost and everything else */
	}
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
	VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
	const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
	struct gpu *gpu = user;
	(void)types;
	if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
		return VK_FALSE;
	atomic_fetch_add(&gpu->validation_messages, 1);
	gpu_log(gpu, severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? 0 : 1,
		"validation %s: %s",
		severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
		data && data->pMessage ? data->pMessage : "(no message)");
	return VK_FALSE;
}

/* VKR_FAULT_SUBMIT_EVERY (gpu_internal.h). The tests' other fault, VKR_FAULT_THREAD_RESTART_FAILS
 * (completion-thread restarts after a rebuild fail), is batch.c's: see start_thread. */
bool gpu_fault_should_fail_submit(void)
{
	static atomic_uint_fast64_t submits;
	const char *every = getenv("VKR_FAULT_SUBMIT_EVERY");
	long n = every ? strtol(every, NULL, 10) : 0;
	if (n <= 0)
		return false;
	return (atomic_fetch_add(&submits, 1) + 1) % (uint64_t)n == 0;
}

static bool env_flag(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

static bool has_layer(const char *name)
{
	uint32_t count = 0;
	if (vkEnumerateInstanceLayerProperties(&count, NULL) != VK_SUCCESS || count == 0)
		return false;
	VkLayerProperties *layers = calloc(count, sizeof(*layers));
	bool found = false;
	if (layers && vkEnumerateInstanceLayerProperties(&count, layers) == VK_SUCCESS)
		for (uint32_t i = 0; i < count && !found; i++)
			found = strcmp(layers[i].layerName, name) == 0;
	free(layers);
	return found;
}

static int create_instance(struct gpu *gpu, bool validation, char *err, size_t err_size)
{
	uint32_t version = 0;
	if (vkEnumerateInstanceVersion(&version) != VK_SUCCESS || version < VK_API_VERSION_1_2) {
		set_err(err, err_size, "the Vulkan loader supports only Vulkan %u.%u; 1.2 is needed",
			VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
		return -ENODEV;
	}
	if (validation && !has_layer(VALIDATION_LAYER)) {
		set_err(err, err_size, "validation requested but %s is not installed "
			"(Debian: vulkan-validationlayers)", VALIDATION_LAYER);
		return -ENOTSUP;
	}

	const VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "vkreduce",
		.applicationVersion = VK_MAKE_API_VERSION(0, 0, 1, 0),
		.pEngineName = "vkreduce",
		.apiVersion = VK_API_VERSION_1_3,
	};
	const char *layers[] = { VALIDATION_LAYER };
	const char *exts[] = { VK_EXT_DEBUG_UTILS_EXTENSION_NAME };
	const VkValidationFeatureEnableEXT enables[] = {
		VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT,
	};
	const VkValidationFeaturesEXT features = {
		.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
		.enabledValidationFeatureCount = 1,
		.pEnabledValidationFeatures = enables,
	};
	const VkInstanceCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pNext = validation ? &features : NULL,
		.pApplicationInfo = &app,
		.enabledLayerCount = validation ? 1 : 0,
		.ppEnabledLayerNames = layers,
		.enabledExtensionCount = validation ? 1 : 0,
		.ppEnabledExtensionNames = exts,
	};
	VkResult r = vkCreateInstance(&info, NULL, &gpu->instance);
	if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
		set_err(err, err_size, "no Vulkan driver found (install one; for the CPU "
			"implementation, Debian's mesa-vulkan-drivers)");
		return -ENODEV;
	}
	if (r != VK_SUCCESS) {
		set_err(err, err_size, "vkCreateInstance failed (VkResult %d)", r);
		return gpu_errno_from_vk(r) == -ENOTSUP ? -ENOTSUP : -ENODEV;
	}
	if (validation) {
		PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)
			vkGetInstanceProcAddr(gpu->instance, "vkCreateDebugUtilsMessengerEXT");
		const VkDebugUtilsMessengerCreateInfoEXT mi = {
			.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
			.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
					   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
			.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
				       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
				       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
			.pfnUserCallback = on_validation_message,
			.pUserData = gpu,
		};
		if (!create || create(gpu->instance, &mi, NULL, &gpu->messenger) != VK_SUCCESS) {
			set_err(err, err_size, "cannot install the validation message callback");
			return -ENOTSUP;
		}
	}
	return 0;
}

/* VKR_PIN_DRIVER=1 (set by the test suite): keeps the Vulkan driver libraries loaded after
 * vkDestroyInstance, so that LeakSanitizer can name the driver in the stacks of leaks that
 * are the driver's own (lavapipe leaks 128 bytes per instance) and they can be suppressed
 * by name instead of hiding every unsymbolized stack. */
static void pin_driver_libraries(void)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	char line[4096];
	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/');
		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		const char *base = strrchr(path, '/') + 1;
		if (strncmp(base, "libvulkan_", 10) != 0 && strncmp(base, "libLLVM", 7) != 0)
			continue;
		/* RTLD_NOLOAD: only take another reference to what the loader already opened. */
		void *handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
		(void)handle; /* intentionally never closed */
	}
	fclose(maps);
}

static const char *type_name(VkPhysicalDeviceType type)
{
	switch (type) {
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
	case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
	default: return "other";
	}
}

/* Preference order: discrete, integrated, virtual, CPU (lavapipe), anything else. */
static int type_rank(VkPhysicalDeviceType type)
{
	switch (type) {
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
	case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
	default: return 0;
	}
}

static bool has_device_ext(VkPhysicalDevice pd, const char *name)
{
	uint32_t count = 0;
	if (vkEnumerateDeviceExtensionProperties(pd, NULL, &count, NULL) != VK_SUCCESS)
		return false;
	VkExtensionProperties *exts = calloc(count ? count : 1, sizeof(*exts));
	bool found = false;
	if (exts && vkEnumerateDeviceExtensionProperties(pd, NULL, &count, exts) == VK_SUCCESS)
		for (uint32_t i = 0; i < count && !found; i++)
			found = strcmp(exts[i].extensionName, name) == 0;
	free(exts);
	return found;
}

/* A compute-capable queue family, preferring one without graphics (a dedicated compute
 * queue does not share its time with rendering); -1 when there is none. */
static int find_compute_family(VkPhysicalDevice pd)
{
	uint32_t count = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, NULL);
	VkQueueFamilyProperties *fams = calloc(count ? count : 1, sizeof(*fams));
	int best = -1;
	if (!fams)
		return -1;
	vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, fams);
	for (uint32_t i = 0; i < count; i++) {
		if (!(fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || fams[i].queueCount == 0)
			continue;
		if (best < 0 || !(fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
			if (best < 0 || (fams[best].queueFlags & VK_QUEUE_GRAPHICS_BIT))
				best = (int)i;
		}
	}
	free(fams);
	return best;
}

/* Why a device cannot run vkreduce at all, or NULL if it can. */
static const char *unusable_reason(VkPhysicalDevice pd)
{
	VkPhysicalDeviceProperties props;
	vkGetPhysicalDeviceProperties(pd, &props);
	if (props.apiVersion < VK_API_VERSION_1_2)
		return "Vulkan 1.2 needed";
	VkPhysicalDeviceVulkan12Features f12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
	};
	VkPhysicalDeviceFeatures2 f = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
					.pNext = &f12 };
	vkGetPhysicalDeviceFeatures2(pd, &f);
	if (!f12.timelineSemaphore)
		return "no timeline semaphores";
	if (!f12.bufferDeviceAddress)
		return "no buffer device address";
	if (!f12.scalarBlockLayout)
		return "no scalar block layout";
	if (find_compute_family(pd) < 0)
		return "no compute queue";
	return NULL;
}

static bool name_matches(const char *name, const char *want)
{
	size_t n = strlen(want);
	for (const char *p = name; *p; p++)
		if (strncasecmp(p, want, n) == 0)
			return true;
	return false;
}

static int pick_device(struct gpu *gpu, const char *want, char *err, size_t err_size)
{
	uint32_t count = 0;
	VkResult r = vkEnumeratePhysicalDevices(gpu->instance, &count, NULL);
	if (r != VK_SUCCESS || count == 0) {
		set_err(err, err_size, "no Vulkan device found (install a driver; for the CPU "
			"implementation, Debian's mesa-vulkan-drivers)");
		return -ENODEV;
	}
	VkPhysicalDevice *pds = calloc(count, sizeof(*pds));
	if (!pds)
		return -ENOMEM;
	r = vkEnumeratePhysicalDevices(gpu->instance, &count, pds);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
		free(pds);
		set_err(err, err_size, "vkEnumeratePhysicalDevices failed (VkResult %d)", r);
		return -ENODEV;
	}

	int chosen = -1;
	char *end = NULL;
	long index = want && *want ? strtol(want, &end, 10) : -1;
	bool by_index = want && *want && end && *end == '\0';
	for (uint32_t i = 0; i < count; i++) {
		VkPhysicalDeviceProperties p;
		vkGetPhysicalDeviceProperties(pds[i], &p);
		const char *why = unusable_reason(pds[i]);
		if (want && *want) {
			bool match = by_index ? index == (long)i : name_matches(p.deviceName, want);
			if (!match)
				continue;
			if (why) {
				set_err(err, err_size, "device %u \"%s\" was requested but cannot be used: %s",
					i, p.deviceName, why);
				free(pds);
				return -ENODEV;
			}
			chosen = (int)i;
			snprintf(gpu->info.choice_reason, sizeof(gpu->info.choice_reason),
				 "requested by %s \"%s\"", by_index ? "index" : "name", want);
			break;
		}
		if (why)
			continue;
		if (chosen < 0) {
			chosen = (int)i;
			continue;
		}
		VkPhysicalDeviceProperties best;
		vkGetPhysicalDeviceProperties(pds[chosen], &best);
		if (type_rank(p.deviceType) > type_rank(best.deviceType))
			chosen = (int)i;
	}
	if (chosen < 0) {
		if (want && *want)
			set_err(err, err_size, "no Vulkan device matches \"%s\" (%u device%s present)",
				want, count, count == 1 ? "" : "s");
		else
			set_err(err, err_size, "none of the %u Vulkan device%s supports what vkreduce "
				"needs (Vulkan 1.2, timeline semaphores, buffer device address)",
				count, count == 1 ? "" : "s");
		free(pds);
		return -ENODEV;
	}
	gpu->physical = pds[chosen];
	gpu->info.device_index = (uint32_t)chosen;
	if (!(want && *want)) {
		VkPhysicalDeviceProperties p;
		vkGetPhysicalDeviceProperties(gpu->physical, &p);
		snprintf(gpu->info.choice_reason, sizeof(gpu->info.choice_reason),
			 "best of %u device%s (%s preferred: discrete > integrated > virtual > cpu)",
			 count, count == 1 ? "" : "s", type_name(p.deviceType));
	}
	free(pds);
	return 0;
}

/* A workgroup count within [1, 4096] and the device's limit. */
static uint32_t clamp_workgroups(uint32_t wgs, uint32_t max_x)
{
	if (wgs > 4096)
		wgs = 4096;
	if (wgs > max_x)
		wgs = max_x;
	return wgs ? wgs : 1;
}

static void read_info(struct gpu *gpu)
{
	struct gpu_info *info = &gpu->info;
	VkPhysicalDeviceProperties base;
	vkGetPhysicalDeviceProperties(gpu->physical, &base);
	VkPhysicalDeviceSubgroupProperties sub = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
	};
	VkPhysicalDeviceDriverProperties drv = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES,
	};
	VkPhysicalDeviceMaintenance3Properties m3 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
	};
	VkPhysicalDeviceMaintenance4Properties m4 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES,
	};
	VkPhysicalDeviceExternalMemoryHostPropertiesEXT host = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT,
	};
	VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV,
	};
	VkPhysicalDeviceFloatControlsProperties floats = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES,
	};
	VkPhysicalDeviceSubgroupSizeControlProperties size_control = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES,
	};
	bool size_control_known = base.apiVersion >= VK_API_VERSION_1_3 || gpu->has_subgroup_size_control_ext;
	VkPhysicalDevicePCIBusInfoPropertiesEXT pci = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT,
	};
	VkPhysicalDeviceProperties2 props = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
	/* Chain only the structures this device knows (maintenance4 is core from 1.3). */
	void *chain = NULL;
#define CHAIN(s) ((s).pNext = chain, chain = &(s))
	CHAIN(sub);
	if (size_control_known)
		CHAIN(size_control);
	CHAIN(drv);
	CHAIN(m3);
	if (base.apiVersion >= VK_API_VERSION_1_3)
		CHAIN(m4);
	if (base.apiVersion >= VK_API_VERSION_1_2)
		CHAIN(floats);
	if (gpu->has_host_import_ext)
		CHAIN(host);
	if (gpu->has_sm_builtins)
		CHAIN(sm);
	if (gpu->has_pci_bus_info)
		CHAIN(pci);
#undef CHAIN
	props.pNext = chain;
	vkGetPhysicalDeviceProperties2(gpu->physical, &props);
	const VkPhysicalDeviceProperties *p = &props.properties;

	snprintf(info->name, sizeof(info->name), "%s", p->deviceName);
	info->type = type_name(p->deviceType);
	info->vendor_id = p->vendorID;
	info->device_id = p->deviceID;
	info->api_version = p->apiVersion;
	snprintf(info->driver, sizeof(info->driver), "%.120s%s%.120s", drv.driverName,
		 drv.driverInfo[0] ? " " : "", drv.driverInfo);
	info->pci_address[0] = '\0';
	if (gpu->has_pci_bus_info)
		snprintf(info->pci_address, sizeof(info->pci_address), "%04x:%02x:%02x.%x",
			 pci.pciDomain, pci.pciBus & 0xffu, pci.pciDevice & 0x1fu, pci.pciFunction & 0x7u);
	info->subgroup_size = sub.subgroupSize;
	/* Whole subgroups for every pipeline, where the device can promise them: every kernel is
	 * 256 invocations wide, which must be a multiple of the largest subgroup. */
	if (size_control_known) {
		VkPhysicalDeviceSubgroupSizeControlFeatures size_features = {
			.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES,
		};
		VkPhysicalDeviceFeatures2 features = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
						       .pNext = &size_features };
		vkGetPhysicalDeviceFeatures2(gpu->physical, &features);
		uint32_t widest = size_control.maxSubgroupSize;
		gpu->full_subgroups = size_features.computeFullSubgroups && widest >= 1 && widest <= 256 &&
				      256 % widest == 0;
	}
	info->denorm_preserve32 = base.apiVersion >= VK_API_VERSION_1_2 && floats.shaderDenormPreserveFloat32;
	info->denorm_preserve64 = base.apiVersion >= VK_API_VERSION_1_2 && floats.shaderDenormPreserveFloat64;
	info->max_storage_buffer_range = p->limits.maxStorageBufferRange;
	info->max_workgroup_count_x = p->limits.maxComputeWorkGroupCount[0];
	info->max_shared_memory = p->limits.maxComputeSharedMemorySize;
	info->max_allocation_size = m3.maxMemoryAllocationSize;
	info->max_buffer_size = base.apiVersion >= VK_API_VERSION_1_3 ? m4.maxBufferSize
								       : m3.maxMemoryAllocationSize;
	info->array_buffer_limit = gpu_largest_buffer(gpu);
	/* VKR_MAX_ARRAY_BUFFER_BYTES: hold arrays in buffers of at most this many bytes (64 KiB
	 * or more), so that tests on any device exercise arrays in several buffers and regions
	 * imported in pieces, which real devices need only beyond gigabytes. */
	const char *array_limit = getenv("VKR_MAX_ARRAY_BUFFER_BYTES");
	uint64_t want = array_limit && *array_limit ? strtoull(array_limit, NULL, 10) : 0;
	if (want >= (64u << 10) && want < info->array_buffer_limit)
		info->array_buffer_limit = want;
	/* The largest power of two within the limit; asked for on every request. */
	info->array_part_bytes = 1;
	while (info->array_part_bytes <= info->array_buffer_limit / 2)
		info->array_part_bytes *= 2;
	info->host_import = gpu->has_host_import_ext;
	info->host_import_alignment = gpu->has_host_import_ext ? host.minImportedHostPointerAlignment : 0;
	info->timestamp_period_ns = p->limits.timestampPeriod;

	VkPhysicalDeviceFeatures f;
	vkGetPhysicalDeviceFeatures(gpu->physical, &f);
	info->shader_float64 = f.shaderFloat64;
	info->shader_int64 = f.shaderInt64;
	if (base.apiVersion >= VK_API_VERSION_1_2) {
		VkPhysicalDeviceShaderAtomicInt64Features atomics = {
			.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES,
		};
		VkPhysicalDeviceFeatures2 features = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
						       .pNext = &atomics };
		vkGetPhysicalDeviceFeatures2(gpu->physical, &features);
		gpu->buffer_int64_atomics = f.shaderInt64 && atomics.shaderBufferInt64Atomics;
	}

	/* Pass 1 of a reduction runs enough workgroups to fill the device and no more: with
	 * too few the memory system idles (the seeds' 512 workgroups read 1.3 TB/s on the H200,
	 * 1024 read 2.5 TB/s); more only lengthen the drain and the fold of the partials.
	 * NVIDIA tells its SM count and warps per SM: one wave of 256-wide workgroups. On the
	 * H200 (1056) that beat two waves (2112, the count until session 12) by 1.3 to 2.1 us
	 * per reduction from 2^24 to 2^26 and matched it from 2^27 up, for every op of f32, i32
	 * and f64. Count-if over 64-bit types kept two waves until session 14 (f64's was slower
	 * on one, run S12-2: its per-element NaN tests made it compute-bound); without them one
	 * wave is 2.6 us faster at 2^24 and the same at 2^28 (run S14-3). The copy kernel, the
	 * benchmark's reference, keeps two (0.4% faster). Elsewhere the device type decides.
	 * VKR_REDUCE_WORKGROUPS overrides both, for tuning. */
	uint32_t wgs, wide;
	if (gpu->has_sm_builtins && sm.shaderSMCount > 0) {
		wgs = sm.shaderSMCount * (sm.shaderWarpsPerSM * 32 / 256);
		wide = 2 * wgs;
	} else if (p->deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
		wgs = wide = 2048;
	} else if (p->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		wgs = wide = (uint32_t)(cpus > 0 ? cpus : 1) * 4;
	} else {
		wgs = wide = 256;
	}
	const char *override = getenv("VKR_REDUCE_WORKGROUPS");
	if (override && atoi(override) > 0)
		wgs = wide = (uint32_t)atoi(override);
	info->reduce_workgroups = clamp_workgroups(wgs, info->max_workgroup_count_x);
	info->copy_workgroups = clamp_workgroups(wide, info->max_workgroup_count_x);
	info->scan_workgroups = info->max_workgroup_count_x < 65535 ? info->max_workgroup_count_x : 65535;
	/* VKR_WAIT_SPIN_US: how long gpu_wait polls before it blocks (default 100 us on GPUs,
	 * 0 on CPU implementations). */
	const char *spin_us = getenv("VKR_WAIT_SPIN_US");
	gpu->wait_spin_ns = spin_us && *spin_us ? strtoull(spin_us, NULL, 10) * 1000
			  : p->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 0 : 100000;
	/* The scan algorithm for device memory: VKR_SCAN=single-pass (the one-pass scan with
	 * decoupled look-back) or reduce-then-scan (three dispatches, reads the input twice) for
	 * every op and dtype; by default kern.c picks per op and dtype what measured faster.
	 * Single-pass runs where the device built its pipelines (shaderInt64, enough shared
	 * memory). */
	const char *reduce = getenv("VKR_REDUCE");
	info->reduce_one_dispatch = !(reduce && strcmp(reduce, "two-pass") == 0);
	info->reduce_flagged_partials = info->reduce_one_dispatch && !(reduce && strcmp(reduce, "fenced") == 0);
	info->reduce_flagged_wide = info->reduce_flagged_partials && reduce && strcmp(reduce, "flagged") == 0;
	const char *scan = getenv("VKR_SCAN");
	info->scan_single_pass = scan && strcmp(scan, "single-pass") == 0;
	info->scan_reduce_then_scan = scan && strcmp(scan, "reduce-then-scan") == 0;
	/* VKR_SCAN_PATIENCE: look-back rounds a single-pass workgroup waits for a predecessor
	 * before it does the stalled work itself. A round is one trip to L2 on a GPU; on a CPU
	 * implementation a wait is time taken from the workgroup being waited for. */
	const char *patience = getenv("VKR_SCAN_PATIENCE");
	long rounds = patience && *patience ? strtol(patience, NULL, 10) : -1;
	info->scan_patience = rounds > 0 && rounds <= 4096 ? (uint32_t)rounds /* no uint overflow in the shader */
			      : p->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 2 : 8;
	/* VKR_SCAN_TILES: how single-pass workgroups over device memory find their tile. By
	 * workgroup id the counter's round trip leaves each tile's path: 49 to 73 us less for
	 * 64-bit scans at 2^28 on the H200, up to 8 us less for 32-bit ones (runs S20-1 to
	 * S20-4). Not on CPU devices: lavapipe's threads each run a contiguous share of the
	 * grid, so the first workgroup of a later share waits for all before it
	 * (scan_chained.comp). */
	const char *rows = getenv("VKR_SCAN_CHUNK_ROWS");
	long chunk_rows = rows && *rows ? strtol(rows, NULL, 10) : 0;
	info->scan_chunk_rows_override = chunk_rows > 0 && chunk_rows <= (long)KERN_MAX_CHUNK_ROWS ? (uint32_t)chunk_rows : 0;
	const char *park = getenv("VKR_SCAN_PARK_ROWS");
	long park_rows = park && *park ? strtol(park, NULL, 10) : -1;
	info->scan_park_rows_override = park_rows >= 0 && park_rows <= (long)KERN_MAX_CHUNK_ROWS ? (int32_t)park_rows : -1;
	const char *tiles = getenv("VKR_SCAN_TILES");
	bool by_counter = tiles && strcmp(tiles, "counter") == 0, by_workgroup = tiles && strcmp(tiles, "workgroup") == 0;
	info->scan_tiles_by_workgroup = by_workgroup || (!by_counter && p->deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU);
	/* The scans' tile scan (shaders/tile_scan.glsl): the Blelloch tree in shared memory, or
	 * with VKR_SCAN_TILE=subgroup subgroup shuffles where the device has them for compute
	 * shaders, in subgroups that divide the 256-wide workgroup into at most 64. The tree
	 * stays the default: on the H200 the shuffles were no faster for reduce-then-scan (f32
	 * sum 936 against 924 us at 2^28, f64 max 2839 against 2532 us; session 3). shuffle,
	 * not only shuffle_relative: the chunked tiles broadcast each row's total from its last
	 * lane. The tile scan alone would not need it; one requirement for both keeps one
	 * subgroup build of the scan kernels. */
	const VkSubgroupFeatureFlags needed =
		VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT |
		VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;
	/* Every subgroup build needs, besides its operations, whole subgroups of 4 to 256 lanes
	 * in compute shaders. */
	bool compute_subgroups = gpu->full_subgroups && (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
				 sub.subgroupSize >= 4 && sub.subgroupSize <= 256;
	bool shuffles = compute_subgroups && (sub.supportedOperations & needed) == needed;
	const char *tile = getenv("VKR_SCAN_TILE");
	info->scan_tile_subgroup = shuffles && tile && strcmp(tile, "subgroup") == 0;
	info->scan_chunked = shuffles && !(tile && strcmp(tile, "blelloch") == 0);
	/* The reductions' tree needs basic and shuffle (an xor butterfly), not shuffle_relative. */
	const VkSubgroupFeatureFlags reduce_needed = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
	const char *tree = getenv("VKR_REDUCE_TREE");
	info->reduce_subgroup_tree = compute_subgroups && (sub.supportedOperations & reduce_needed) == reduce_needed &&
				     !(tree && strcmp(tree, "shared") == 0);
	/* One-dispatch tails by atomics, without partials, by default (count-if and sums of
	 * integers by an atomic add to the result slot, min and max by an atomic max on it),
	 * where the device has
	 * 64-bit atomics on buffers and the reductions' tree by shuffles (their only build);
	 * every VKR_REDUCE mode turns them off (VKR_REDUCE=partials: the default otherwise), so
	 * that those reductions keep partials in each of them. */
	info->reduce_atomic_tails = info->reduce_one_dispatch && !reduce && gpu->buffer_int64_atomics &&
				    info->reduce_subgroup_tree;
	const char *float_sum = getenv("VKR_REDUCE_FLOAT_SUM");
	info->reduce_float_limbs = float_sum && strcmp(float_sum, "limbs") == 0;
	const char *int_prod = getenv("VKR_REDUCE_INT_PROD");
	info->reduce_product_exponents = int_prod && strcmp(int_prod, "exponents") == 0;
	/* VKR_REDUCE_FOLD=host (the default since session 34: 1.4 to 3.2 us less GPU time at
	 * 2^24 on an H100, 0.9 to 2.6 us from 2^16 to 2^23, run S34-1) or =device (the last
	 * workgroup folds, as before). */
	const char *fold = getenv("VKR_REDUCE_FOLD");
	bool device_fold = fold && strcmp(fold, "device") == 0;
	info->reduce_host_fold = !device_fold;
	if (fold && *fold && !device_fold && strcmp(fold, "host") != 0)
		gpu_log(gpu, 1, "VKR_REDUCE_FOLD=%s is neither host nor device; using host", fold);
}

static int create_device(struct gpu *gpu, char *err, size_t err_size)
{
	gpu->queue_family = (uint32_t)find_compute_family(gpu->physical);
	const float priorities[2] = { 1.0f, 1.0f };
	VkDeviceQueueCreateInfo qi[2] = { {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = gpu->queue_family,
		.queueCount = 1,
		.pQueuePriorities = priorities,
	} };
	uint32_t queue_infos = 1;
	VkQueueFamilyProperties fams[64];
	uint32_t fam_count = 64;
	vkGetPhysicalDeviceQueueFamilyProperties(gpu->physical, &fam_count, fams);
	if (gpu->want_copy_queues) {
		/* A second queue of the compute family, and up to two of a transfer-only one
		 * (on NVIDIA the copy engines' family). */
		if (gpu->queue_family < fam_count && fams[gpu->queue_family].queueCount >= 2)
			qi[0].queueCount = 2;
		for (uint32_t i = 0; i < fam_count; i++) {
			VkQueueFlags f = fams[i].queueFlags;
			if ((f & VK_QUEUE_TRANSFER_BIT) && !(f & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT)) &&
			    fams[i].queueCount > 0) {
				qi[1] = (VkDeviceQueueCreateInfo){
					.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
					.queueFamilyIndex = i,
					.queueCount = fams[i].queueCount >= 2 ? 2 : 1,
					.pQueuePriorities = priorities,
				};
				queue_infos = 2;
				break;
			}
		}
	}
	const char *exts[4];
	uint32_t ext_count = 0;
	if (gpu->has_host_import_ext) {
		exts[ext_count++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
	}
	if (gpu->has_sm_builtins)
		exts[ext_count++] = VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME;
	if (gpu->pipeline_stats)
		exts[ext_count++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
	if (gpu->full_subgroups && gpu->info.api_version < VK_API_VERSION_1_3)
		exts[ext_count++] = VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME;

	VkPhysicalDeviceFeatures supported;
	vkGetPhysicalDeviceFeatures(gpu->physical, &supported);
	VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_info = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
		.pipelineExecutableInfo = VK_TRUE,
	};
	VkPhysicalDeviceSubgroupSizeControlFeatures full_subgroups = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES,
		.pNext = gpu->pipeline_stats ? &executable_info : NULL,
		.computeFullSubgroups = VK_TRUE,
	};
	VkPhysicalDeviceVulkan12Features f12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
		.pNext = gpu->full_subgroups ? (void *)&full_subgroups
			 : gpu->pipeline_stats ? (void *)&executable_info : NULL,
		.timelineSemaphore = VK_TRUE,
		.bufferDeviceAddress = VK_TRUE,
		.scalarBlockLayout = VK_TRUE,
		.shaderBufferInt64Atomics = gpu->buffer_int64_atomics,
	};
	VkPhysicalDeviceFeatures2 features = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &f12,
		.features = {
			.shaderFloat64 = supported.shaderFloat64,
			.shaderInt64 = supported.shaderInt64,
		},
	};
	const VkDeviceCreateInfo di = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = &features,
		.queueCreateInfoCount = queue_infos,
		.pQueueCreateInfos = qi,
		.enabledExtensionCount = ext_count,
		.ppEnabledExtensionNames = exts,
	};
	VkResult r = vkCreateDevice(gpu->physical, &di, NULL, &gpu->device);
	if (r != VK_SUCCESS) {
		set_err(err, err_size, "vkCreateDevice on \"%s\" failed (VkResult %d)", gpu->info.name, r);
		return gpu_errno_from_vk(r);
	}
	vkGetDeviceQueue(gpu->device, gpu->queue_family, 0, &gpu->queue);
	for (uint32_t q = 0; q < queue_infos; q++)
		for (uint32_t i = q == 0 ? 1 : 0; i < qi[q].queueCount; i++) {
			struct gpu_copy_queue *c = &gpu->copy_queues[gpu->copy_queue_count++];
			vkGetDeviceQueue(gpu->device, qi[q].queueFamilyIndex, i, &c->queue);
			c->family = qi[q].queueFamilyIndex;
			c->transfer_only = q == 1;
		}

	const VkSemaphoreTypeCreateInfo ti = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
		.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
		.initialValue = 0,
	};
	const VkSemaphoreCreateInfo si = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti };
	r = vkCreateSemaphore(gpu->device, &si, NULL, &gpu->timeline);
	if (r != VK_SUCCESS) {
		set_err(err, err_size, "cannot create the timeline semaphore (VkResult %d)", r);
		return gpu_errno_from_vk(r);
	}

	if (gpu->queue_family < fam_count && fams[gpu->queue_family].timestampValidBits == 0)
		gpu->info.timestamp_period_ns = 0;
	gpu->timestamp_valid_bits = gpu->queue_family < fam_count ? fams[gpu->queue_family].timestampValidBits : 0;
	return 0;
}


/* One build of a kernel: its DenormPreserve variant where wanted and there is one, else the
 * plain one. */
static const uint32_t *plain_or_preserving(bool preserve, const uint32_t *plain, size_t plain_size,
					   const uint32_t *preserving, size_t preserving_size, size_t *size)
{
	bool use_preserving = preserve && preserving;
	*size = use_preserving ? preserving_size : plain_size;
	return use_preserving ? preserving : plain;
}

/* The module a pipeline is built from: the DenormPreserve build of a float kernel where the
 * device can keep subnormals at that width, else the portable one (which compares floats by
 * their bits, slower for min/max); for the single pass with chunked tiles of other rows than
 * KERN_FIXED_CHUNK_ROWS or with parked rows, the build that takes them as specialization
 * constants. */
static const uint32_t *pipeline_code(const struct gpu *gpu, const struct kern_pipeline_source *src,
				     size_t *size)
{
	bool preserve = (src->denorm_bits == 32 && gpu->info.denorm_preserve32) ||
			(src->denorm_bits == 64 && gpu->info.denorm_preserve64);
	bool subgroup = src->device_single_pass ? gpu->info.scan_chunked
			: src->reduction      ? gpu->info.reduce_subgroup_tree
					      : gpu->info.scan_tile_subgroup;
	if (src->code_blelloch && !subgroup) /* the build without subgroup operations */
		return plain_or_preserving(preserve, src->code_blelloch, src->size_blelloch,
					   src->code_blelloch_denorm_preserve,
					   src->size_blelloch_denorm_preserve, size);
	if (src->code_specialized_rows &&
	    (kern_scan_chunk_rows(&gpu->info, src->dtype, src->op, src->spec[1]) != KERN_FIXED_CHUNK_ROWS ||
	     kern_scan_park_rows(&gpu->info, src->dtype, src->op, src->spec[1]) > 0))
		return plain_or_preserving(preserve, src->code_specialized_rows, src->size_specialized_rows,
					   src->code_specialized_rows_denorm_preserve,
					   src->size_specialized_rows_denorm_preserve, size);
	return plain_or_preserving(preserve, src->code, src->size, src->code_denorm_preserve,
				   src->size_denorm_preserve, size);
}

/* Whether this device builds pipeline src at all: the others are never dispatched here. */
static bool pipeline_wanted(const struct gpu *gpu, const struct kern_pipeline_source *src)
{
	if ((src->needs_float64 && !gpu_supports_dtype(gpu, VKR_DTYPE_F64)) ||
	    (src->needs_int64 && !gpu->info.shader_int64))
		return false; /* the dtype is refused by kern_validate on this device */
	if (src->shared_bytes > gpu->info.max_shared_memory)
		return false; /* kern plans around it (the single-pass scan) */
	if (src->one_dispatch && !gpu->info.reduce_one_dispatch)
		return false; /* VKR_REDUCE=two-pass */
	if (src->atomic_tail && !kern_atomic_tail_used(&gpu->info, src))
		return false; /* no 64-bit buffer atomics, a VKR_REDUCE mode, or kern never picks it */
	if (src->host_fold && !kern_host_fold(&gpu->info, src->dtype, src->op))
		return false; /* as the atomic tails, and not with VKR_REDUCE_FOLD=device */
	if (src->spread_jobs && !kern_small_jobs_spread(&gpu->info))
		return false; /* built with the subgroup tree only: kern gives every small job one workgroup */
	if (src->device_single_pass &&
	    (gpu->host_memory_scans_only || !kern_device_scan_single_pass(&gpu->info, src->dtype, src->op)))
		return false; /* kern runs reduce-then-scan on device memory instead */
	return !kern_pipeline_superseded(gpu, src);
}

/* The shader module of pipeline i: variants of one module share it, owned by the first of
 * them that needed it. */
static int find_or_load_module(struct gpu *gpu, size_t i, VkShaderModule *out, char *err, size_t err_size)
{
	const struct kern_pipeline_source *src = kern_pipeline_source(i);
	size_t code_size;
	const uint32_t *code = pipeline_code(gpu, src, &code_size);
	for (size_t j = 0; j < gpu->pipeline_count; j++) {
		if (gpu->modules[j] && pipeline_code(gpu, kern_pipeline_source(j), &(size_t){ 0 }) == code) {
			*out = gpu->modules[j];
			return 0;
		}
	}
	const VkShaderModuleCreateInfo mi = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = code_size,
		.pCode = code,
	};
	VkResult r = vkCreateShaderModule(gpu->device, &mi, NULL, out);
	if (r != VK_SUCCESS) {
		set_err(err, err_size, "cannot load shader %s (VkResult %d)", src->name, r);
		return gpu_errno_from_vk(r);
	}
	gpu->modules[i] = *out;
	return 0;
}

/* Compiles pipeline i from its module. Writes gpu->pipelines[i] only, so that threads may
 * build different pipelines at once (the pipeline cache is internally synchronized). */
static int compile_pipeline(struct gpu *gpu, size_t i, VkShaderModule module, char *err, size_t err_size)
{
	const struct kern_pipeline_source *src = kern_pipeline_source(i);
	uint32_t spec_data[6] = { 0 };
	memcpy(spec_data, src->spec, sizeof(src->spec));
	if (src->one_dispatch) /* reduce.comp's FLAGGED_PARTIALS: only pass 3 has partials to flag */
		spec_data[1] = kern_flagged_partials(&gpu->info, src->accumulator_bytes);
	/* scan_chained.comp's TILES_BY_WORKGROUP, CHUNK_ROWS and PARK_ROWS (the last two declared
	 * by its scan_chained_rows build only); no other module declares constants 3 to 5. */
	spec_data[3] = src->device_single_pass && gpu->info.scan_tiles_by_workgroup;
	spec_data[4] = kern_scan_chunk_rows(&gpu->info, src->dtype, src->op, src->spec[1]);
	spec_data[5] = kern_scan_park_rows(&gpu->info, src->dtype, src->op, src->spec[1]);
	const VkSpecializationMapEntry entries[6] = {
		{ .constantID = 0, .offset = 0, .size = 4 },
		{ .constantID = 1, .offset = 4, .size = 4 },
		{ .constantID = 2, .offset = 8, .size = 4 },
		{ .constantID = 3, .offset = 12, .size = 4 },
		{ .constantID = 4, .offset = 16, .size = 4 },
		{ .constantID = 5, .offset = 20, .size = 4 },
	};
	const VkSpecializationInfo spec = {
		.mapEntryCount = 6,
		.pMapEntries = entries,
		.dataSize = sizeof(spec_data),
		.pData = spec_data,
	};
	const VkComputePipelineCreateInfo pi = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.module = module,
			.pName = "main",
			.pSpecializationInfo = &spec,
			.flags = gpu->full_subgroups ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT : 0,
		},
		.layout = gpu->layout,
		.flags = gpu->pipeline_stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0,
	};
	VkResult r = vkCreateComputePipelines(gpu->device, gpu->pipeline_cache, 1, &pi, NULL, &gpu->pipelines[i]);
	if (r != VK_SUCCESS) {
		gpu->pipelines[i] = VK_NULL_HANDLE;
		set_err(err, err_size, "cannot build pipeline %s (VkResult %d)", src->name, r);
		return gpu_errno_from_vk(r);
	}
	if (gpu->pipeline_stats)
		gpu_log_pipeline_statistics(gpu, gpu->pipelines[i], src->name);
	return 0;
}

static int build_pipeline(struct gpu *gpu, size_t i, char *err, size_t err_size)
{
	VkShaderModule module;
	int rc = find_or_load_module(gpu, i, &module, err, err_size);
	return rc < 0 ? rc : compile_pipeline(gpu, i, module, err, err_size);
}

/* The pipelines create_pipelines compiles, shared by the threads that compile them. */
struct compile_queue {
	struct gpu *gpu;
	const VkShaderModule *module; /* per pipeline; VK_NULL_HANDLE: not wanted */
	atomic_size_t next;
	pthread_mutex_t lock;
	int rc; /* the first failure, with its message; under lock */
	char err[256];
};

static void *compile_worker(void *arg)
{
	struct compile_queue *q = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&q->next, 1);
		if (i >= q->gpu->pipeline_count)
			return NULL;
		if (!q->module[i])
			continue;
		char err[256];
		int rc = compile_pipeline(q->gpu, i, q->module[i], err, sizeof(err));
		if (rc < 0) {
			pthread_mutex_lock(&q->lock);
			if (!q->rc) {
				q->rc = rc;
				snprintf(q->err, sizeof(q->err), "%s", err);
			}
			pthread_mutex_unlock(&q->lock);
		}
	}
}

static uint64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Compiles every wanted pipeline on up to one thread per core (at most 8): the driver compiles
 * on the calling thread, and a CPU implementation takes seconds for the ~140 of a daemon. */
static int compile_all(struct gpu *gpu, char *err, size_t err_size)
{
	VkShaderModule *module = calloc(gpu->pipeline_count, sizeof(*module));
	if (!module)
		return -ENOMEM;
	int rc = 0;
	size_t wanted = 0;
	uint64_t start = monotonic_ns();
	for (size_t i = 0; i < gpu->pipeline_count && rc == 0; i++)
		if (pipeline_wanted(gpu, kern_pipeline_source(i))) {
			rc = find_or_load_module(gpu, i, &module[i], err, err_size);
			wanted++;
		}
	if (rc < 0) {
		free(module);
		return rc;
	}
	struct compile_queue q = { .gpu = gpu, .module = module, .lock = PTHREAD_MUTEX_INITIALIZER };
	atomic_init(&q.next, 0);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t helpers = cores > 1 ? (size_t)(cores < 8 ? cores : 8) - 1 : 0;
	pthread_t threads[7];
	size_t started = 0;
	/* Fewer helpers if a thread cannot start: this thread compiles too. */
	while (started < helpers && pthread_create(&threads[started], NULL, compile_worker, &q) == 0)
		(void)pthread_setname_np(threads[started++], "vkr-compile"); /* a label only */
	compile_worker(&q);
	for (size_t t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	free(module);
	if (q.rc < 0) {
		set_err(err, err_size, "%s", q.err);
		return q.rc;
	}
	gpu_log(gpu, 2, "built %zu of %zu pipelines in %.0f ms on %zu threads", wanted, gpu->pipeline_count,
		(double)(monotonic_ns() - start) / 1e6, started + 1);
	return 0;
}

static int create_pipelines(struct gpu *gpu, char *err, size_t err_size)
{
	const VkPushConstantRange range = {
		.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		.offset = 0,
		.size = GPU_PUSH_CONSTANT_BYTES,
	};
	const VkPipelineLayoutCreateInfo li = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.pushConstantRangeCount = 1,
		.pPushConstantRanges = &range,
	};
	VkResult r = vkCreatePipelineLayout(gpu->device, &li, NULL, &gpu->layout);
	if (r != VK_SUCCESS) {
		set_err(err, err_size, "cannot create the pipeline layout (VkResult %d)", r);
		return gpu_errno_from_vk(r);
	}
	gpu->pipeline_count = kern_pipeline_count();
	gpu->pipelines = calloc(gpu->pipeline_count, sizeof(*gpu->pipelines));
	gpu->modules = calloc(gpu->pipeline_count, sizeof(*gpu->modules));
	if (!gpu->pipelines || !gpu->modules)
		return -ENOMEM;

	if (gpu->compile_on_first_use)
		return 0; /* gpu_pipeline() builds each when it is first bound */
	return compile_all(gpu, err, err_size);
}

/* VK_KHR_pipeline_executable_properties with its pipelineExecutableInfo feature. */
static bool pipeline_statistics_supported(VkPhysicalDevice pd)
{
	if (!has_device_ext(pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME))
		return false;
	VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable_info = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
	};
	VkPhysicalDeviceFeatures2 f = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
					.pNext = &executable_info };
	vkGetPhysicalDeviceFeatures2(pd, &f);
	return executable_info.pipelineExecutableInfo == VK_TRUE;
}

int gpu_create(const struct gpu_config *config, struct gpu **out, char *err, size_t err_size)
{
	struct gpu_config defaults = { 0 };
	if (!config)
		config = &defaults;
	struct gpu *gpu = calloc(1, sizeof(*gpu));
	if (!gpu) {
		set_err(err, err_size, "out of memory");
		return -ENOMEM;
	}
	atomic_init(&gpu->validation_messages, 0);
	gpu->log = config->log;
	gpu->host_memory_scans_only = config->host_memory_scans_only;
	gpu->compile_on_first_use = config->compile_on_first_use || env_flag("VKR_COMPILE_ON_FIRST_USE");
	gpu->want_copy_queues = config->copy_queues;
	atomic_init(&gpu->lost, false);
	bool validation = config->validation || env_flag("VKR_VALIDATION");
	const char *want = config->device ? config->device : getenv("VKR_DEVICE");
	int rc = create_instance(gpu, validation, err, err_size);
	if (rc < 0)
		goto fail;
	rc = pick_device(gpu, want, err, err_size);
	if (rc < 0)
		goto fail;
	if (env_flag("VKR_PIN_DRIVER"))
		pin_driver_libraries();
	gpu->has_host_import_ext = has_device_ext(gpu->physical, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) &&
				   !env_flag("VKR_NO_HOST_IMPORT");
	gpu->has_sm_builtins = has_device_ext(gpu->physical, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
	gpu->has_pci_bus_info = has_device_ext(gpu->physical, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
	gpu->has_subgroup_size_control_ext = has_device_ext(gpu->physical, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
	if (env_flag("VKR_PIPELINE_STATS")) {
		gpu->pipeline_stats = pipeline_statistics_supported(gpu->physical);
		if (!gpu->pipeline_stats)
			gpu_log(gpu, 1, "VKR_PIPELINE_STATS: this device has no pipeline statistics "
					"(VK_KHR_pipeline_executable_properties)");
	}
	read_info(gpu);
	rc = create_device(gpu, err, err_size);
	if (rc < 0)
		goto fail;
	rc = gpu_memory_init(gpu);
	if (rc < 0) {
		set_err(err, err_size, "\"%s\" has no host-visible memory type", gpu->info.name);
		goto fail;
	}
	/* Flagged partials live in the command buffer's table (upload memory): in host RAM,
	 * the last workgroup would read each over the bus, so where upload memory is not
	 * device-local the fenced ones run. (A table that does not fit device-local upload
	 * memory at run time lands in host RAM too: gpu_cmd_table says so once.) */
	if (!(gpu->memory_props.memoryTypes[gpu->memory_type[GPU_MEMORY_UPLOAD]].propertyFlags &
	      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
		gpu->info.reduce_flagged_partials = gpu->info.reduce_flagged_wide =
			gpu->info.reduce_atomic_tails = false; /* their atomics would cross the bus too */
	rc = gpu_cmd_pool_init(gpu);
	if (rc < 0) {
		set_err(err, err_size, "cannot create the command pool");
		goto fail;
	}
	rc = gpu_cache_load(gpu, config->pipeline_cache_path);
	if (rc < 0) {
		set_err(err, err_size, "cannot create a pipeline cache");
		goto fail;
	}
	rc = create_pipelines(gpu, err, err_size);
	if (rc < 0)
		goto fail;
	if (config->verbose)
		gpu_log(gpu, 2, "using device %u \"%s\" (%s, %s): %s%s",
			gpu->info.device_index, gpu->info.name, gpu->info.type, gpu->info.driver,
			gpu->info.choice_reason,
			validation ? "; Khronos validation with synchronization checks on" : "");
	*out = gpu;
	return 0;
fail:
	gpu_destroy(gpu);
	return rc;
}

void gpu_destroy(struct gpu *gpu)
{
	if (!gpu)
		return;
	if (gpu->device) {
		vkDeviceWaitIdle(gpu->device);
		gpu_cmd_pool_finish(gpu);
		for (size_t i = 0; i < gpu->pipeline_count; i++) {
			if (gpu->pipelines && gpu->pipelines[i])
				vkDestroyPipeline(gpu->device, gpu->pipelines[i], NULL);
			if (gpu->modules && gpu->modules[i])
				vkDestroyShaderModule(gpu->device, gpu->modules[i], NULL);
		}
		if (gpu->layout)
			vkDestroyPipelineLayout(gpu->device, gpu->layout, NULL);
		if (gpu->pipeline_cache)
			vkDestroyPipelineCache(gpu->device, gpu->pipeline_cache, NULL);
		if (gpu->timeline)
			vkDestroySemaphore(gpu->device, gpu->timeline, NULL);
		vkDestroyDevice(gpu->device, NULL);
	}
	free(gpu->pipelines);
	free(gpu->modules);
	if (gpu->messenger) {
		PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)
			vkGetInstanceProcAddr(gpu->instance, "vkDestroyDebugUtilsMessengerEXT");
		if (destroy)
			destroy(gpu->instance, gpu->messenger, NULL);
	}
	if (gpu->instance)
		vkDestroyInstance(gpu->instance, NULL);
	free(gpu);
}

const struct gpu_info *gpu_get_info(const struct gpu *gpu)
{
	return &gpu->info;
}

bool gpu_info_supports_dtype(const struct gpu_info *info, vkr_dtype dtype)
{
	switch (dtype) {
	case VKR_DTYPE_F32:
	case VKR_DTYPE_I32:
	case VKR_DTYPE_U32:
		return true;
	case VKR_DTYPE_F64: /* and its scans shaderInt64 (kern_validate) */
		return info->shader_float64 && (info->shader_int64 || info->denorm_preserve64);
	case VKR_DTYPE_I64:
	case VKR_DTYPE_U64:
		return info->shader_int64;
	default:
		return false;
	}
}

bool gpu_supports_dtype(const struct gpu *gpu, vkr_dtype dtype)
{
	return gpu_info_supports_dtype(&gpu->info, dtype);
}

uint64_t gpu_validation_messages(const struct gpu *gpu)
{
	return atomic_load(&((struct gpu *)gpu)->validation_messages);
}

bool gpu_builds_on_first_use(const struct gpu *gpu)
{
	return gpu->compile_on_first_use;
}

bool gpu_pipeline_built(const struct gpu *gpu, uint32_t index)
{
	return index < gpu->pipeline_count && gpu->pipelines[index] != VK_NULL_HANDLE;
}

bool gpu_pipeline_available(const struct gpu *gpu, uint32_t index)
{
	return index < gpu->pipeline_count && pipeline_wanted(gpu, kern_pipeline_source(index));
}

int gpu_pipeline(struct gpu *gpu, uint32_t index, VkPipeline *out)
{
	*out = VK_NULL_HANDLE;
	if (gpu_pipeline_built(gpu, index)) {
		*out = gpu->pipelines[index]; /* every dispatch comes here: nothing else to check */
		return 0;
	}
	if (!gpu_pipeline_available(gpu, index))
		return -ENOENT;
	char err[256];
	int rc = build_pipeline(gpu, index, err, sizeof(err));
	if (rc < 0) {
		gpu_log(gpu, 0, "%s", err);
		return rc;
	}
	*out = gpu->pipelines[index];
	return 0;
}

VkPipelineLayout gpu_pipeline_layout(struct gpu *gpu)
{
	return gpu->layout;
}

int gpu_wait(struct gpu *gpu, uint64_t value, uint64_t timeout_ns)
{
	/* Poll briefly before blocking: a blocking wait is woken by an interrupt, which costs
	 * tens of microseconds, as much as a whole small batch takes on a GPU. The spin is
	 * bounded (wait_spin_ns), and off on CPU devices, whose workers need the cores. */
	if (gpu->wait_spin_ns > 0) {
		uint64_t start = monotonic_ns();
		uint64_t limit = gpu->wait_spin_ns < timeout_ns ? gpu->wait_spin_ns : timeout_ns;
		do {
			uint64_t done = 0;
			if (vkGetSemaphoreCounterValue(gpu->device, gpu->timeline, &done) != VK_SUCCESS)
				break; /* the blocking wait below reports the error */
			if (done >= value)
				return 0;
		} while (monotonic_ns() - start < limit);
	}
	const VkSemaphoreWaitInfo wi = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
		.semaphoreCount = 1,
		.pSemaphores = &gpu->timeline,
		.pValues = &value,
	};
	VkResult r = vkWaitSemaphores(gpu->device, &wi, timeout_ns);
	if (r == VK_SUCCESS)
		return 0;
	if (r == VK_TIMEOUT)
		return -ETIMEDOUT;
	atomic_store(&gpu->lost, true);
	return -EIO;
}

uint64_t gpu_completed_value(struct gpu *gpu)
{
	uint64_t value = 0;
	if (vkGetSemaphoreCounterValue(gpu->device, gpu->timeline, &value) != VK_SUCCESS) {
		atomic_store(&gpu->lost, true);
		return 0;
	}
	return value;
}

uint64_t gpu_last_submitted_value(const struct gpu *gpu)
{
	return gpu->last_submitted;
}

bool gpu_is_lost(const struct gpu *gpu)
{
	return atomic_load(&((struct gpu *)gpu)->lost);
}

unsigned gpu_copy_queues(const struct gpu *gpu, struct gpu_copy_queue *out, unsigned max)
{
	unsigned n = gpu->copy_queue_count < max ? gpu->copy_queue_count : max;
	memcpy(out, gpu->copy_queues, n * sizeof(*out));
	return n;
}

VkDevice gpu_device(const struct gpu *gpu)
{
	return gpu->device;
}

struct gpu_copy_queue gpu_compute_queue(const struct gpu *gpu)
{
	return (struct gpu_copy_queue){ .queue = gpu->queue, .family = gpu->queue_family };
}
