/*
 * gpu_memory.c: buffers with device addresses, in device memory, in host-visible memory,
 * or imported from host pages (VK_EXT_external_memory_host) so the GPU reads a client's
 * shared memory in place.
 */
#include <errno.h>
#include <string.h>

#include "gpu_internal.h"

static int find_type(const struct gpu *gpu, uint32_t allowed, VkMemoryPropertyFlags want)
{
	for (uint32_t i = 0; i < gpu->memory_props.memoryTypeCount; i++)
		if ((allowed & (1u << i)) &&
		    (gpu->memory_props.memoryTypes[i].propertyFlags & want) == want)
			return (int)i;
	return -1;
}

/* Picks the first type with each preferred flag set, falling back to the required set. */
static int pick_type(const struct gpu *gpu, uint32_t allowed, VkMemoryPropertyFlags required,
		     VkMemoryPropertyFlags preferred)
{
	int t = find_type(gpu, allowed, required | preferred);
	return t >= 0 ? t : find_type(gpu, allowed, required);
}

int gpu_memory_init(struct gpu *gpu)
{
	vkGetPhysicalDeviceMemoryProperties(gpu->physical, &gpu->memory_props);
	const VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
					      VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	int device = pick_type(gpu, ~0u, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
	/* Uploads prefer device-local host-visible memory (resizable BAR, as on the H200): the
	 * CPU writes once over PCIe and kernels then read at device speed. */
	int upload = pick_type(gpu, ~0u, visible, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
	/* Readback wants cached host memory: CPU reads of uncached or BAR memory are slow. */
	int readback = pick_type(gpu, ~0u, visible, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
	/* Staging: host RAM, i.e. host-visible without DEVICE_LOCAL if there is such a type. */
	int staging = -1;
	for (uint32_t i = 0; i < gpu->memory_props.memoryTypeCount && staging < 0; i++) {
		VkMemoryPropertyFlags f = gpu->memory_props.memoryTypes[i].propertyFlags;
		if ((f & visible) == visible && !(f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
			staging = (int)i;
	}
	if (staging < 0)
		staging = readback;
	if (device < 0 || upload < 0 || readback < 0)
		return -ENOTSUP;
	gpu->memory_type[GPU_MEMORY_STAGING] = (uint32_t)staging;
	gpu->memory_type[GPU_MEMORY_DEVICE] = (uint32_t)device;
	gpu->memory_type[GPU_MEMORY_UPLOAD] = (uint32_t)upload;
	gpu->memory_type[GPU_MEMORY_READBACK] = (uint32_t)readback;
	gpu->info.readback_cached =
		(gpu->memory_props.memoryTypes[readback].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0;
	return 0;
}

static const VkBufferUsageFlags buffer_usage =
	VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
	VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

/* Allocates memory of type_index for the buffer in out->handle, binds it, and fills in the
 * address; import (may be NULL) chains a host-pointer import. */
static int bind_memory(struct gpu *gpu, struct gpu_buffer *out, uint32_t type_index,
		       const void *import)
{
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(gpu->device, out->handle, &req);
	if (!(req.memoryTypeBits & (1u << type_index)))
		return -ENOTSUP;
	const VkMemoryAllocateFlagsInfo flags = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
		.pNext = import,
		.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
	};
	const VkMemoryAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.pNext = &flags,
		.allocationSize = req.size,
		.memoryTypeIndex = type_index,
	};
	VkResult r = vkAllocateMemory(gpu->device, &ai, NULL, &out->memory);
	if (r != VK_SUCCESS)
		return gpu_errno_from_vk(r);
	r = vkBindBufferMemory(gpu->device, out->handle, out->memory, 0);
	if (r != VK_SUCCESS)
		return gpu_errno_from_vk(r);
	const VkBufferDeviceAddressInfo bi = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
		.buffer = out->handle,
	};
	out->address = vkGetBufferDeviceAddress(gpu->device, &bi);
	return out->address ? 0 : -EIO;
}

uint64_t gpu_largest_buffer(const struct gpu *gpu)
{
	return gpu->info.max_allocation_size < gpu->info.max_buffer_size ? gpu->info.max_allocation_size
									  : gpu->info.max_buffer_size;
}

uint64_t gpu_array_part_bytes(const struct gpu *gpu)
{
	return gpu->info.array_part_bytes;
}

int gpu_buffer_create(struct gpu *gpu, uint64_t size, enum gpu_memory_kind kind,
		      struct gpu_buffer *out)
{
	memset(out, 0, sizeof(*out));
	if ((unsigned)kind > GPU_MEMORY_STAGING)
		return -EINVAL;
	if (size == 0)
		size = 16; /* a zero-sized buffer is invalid; keep addresses valid for empty jobs */
	if (size > gpu_largest_buffer(gpu))
		return -E2BIG;
	const VkBufferCreateInfo bi = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size,
		.usage = buffer_usage,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkResult r = vkCreateBuffer(gpu->device, &bi, NULL, &out->handle);
	if (r != VK_SUCCESS)
		return gpu_errno_from_vk(r);
	out->size = size;
	uint32_t type = gpu->memory_type[kind];
	int rc = bind_memory(gpu, out, type, NULL);
	if (rc == 0 && (gpu->memory_props.memoryTypes[type].propertyFlags &
			VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && kind != GPU_MEMORY_DEVICE) {
		r = vkMapMemory(gpu->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->map);
		rc = gpu_errno_from_vk(r);
	}
	if (rc < 0)
		gpu_buffer_destroy(gpu, out);
	return rc;
}

int gpu_buffer_import_host(struct gpu *gpu, void *ptr, uint64_t size, struct gpu_buffer *out)
{
	memset(out, 0, sizeof(*out));
	if (!gpu->has_host_import_ext)
		return -ENOTSUP;
	uint64_t align = gpu->info.host_import_alignment;
	if (size == 0 || !align || (uintptr_t)ptr % align || size % align)
		return -EINVAL;
	if (size > gpu_largest_buffer(gpu))
		return -E2BIG;
	PFN_vkGetMemoryHostPointerPropertiesEXT get_props = (PFN_vkGetMemoryHostPointerPropertiesEXT)
		vkGetDeviceProcAddr(gpu->device, "vkGetMemoryHostPointerPropertiesEXT");
	if (!get_props)
		return -ENOTSUP;
	const VkExternalMemoryHandleTypeFlagBits handle_type =
		VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
	VkMemoryHostPointerPropertiesEXT hp = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT,
	};
	VkResult r = get_props(gpu->device, handle_type, ptr, &hp);
	if (r != VK_SUCCESS)
		return gpu_errno_from_vk(r);
	int type = pick_type(gpu, hp.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, 0);
	if (type < 0)
		return -ENOTSUP;
	const VkExternalMemoryBufferCreateInfo ext = {
		.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
		.handleTypes = handle_type,
	};
	const VkBufferCreateInfo bi = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.pNext = &ext,
		.size = size,
		.usage = buffer_usage,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	r = vkCreateBuffer(gpu->device, &bi, NULL, &out->handle);
	if (r != VK_SUCCESS)
		return gpu_errno_from_vk(r);
	out->size = size;
	out->imported = true;
	const VkImportMemoryHostPointerInfoEXT import = {
		.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
		.handleType = handle_type,
		.pHostPointer = ptr,
	};
	int rc = bind_memory(gpu, out, (uint32_t)type, &import);
	if (rc < 0) {
		gpu_buffer_destroy(gpu, out);
		return rc;
	}
	out->map = ptr;
	return 0;
}

void gpu_buffer_destroy(struct gpu *gpu, struct gpu_buffer *buffer)
{
	if (!buffer)
		return;
	if (buffer->handle)
		vkDestroyBuffer(gpu->device, buffer->handle, NULL);
	if (buffer->memory)
		vkFreeMemory(gpu->device, buffer->memory, NULL); /* unmaps implicitly */
	memset(buffer, 0, sizeof(*buffer));
}
