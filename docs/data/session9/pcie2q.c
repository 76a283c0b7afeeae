/* Probe: can Vulkan copy engines move host->device and device->host at once faster than
 * one queue does (torch with two streams reached 47.6-49 GB/s each way, one queue 42)? */
#include <vulkan/vulkan.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { VkResult r_ = (x); if (r_ != VK_SUCCESS) { fprintf(stderr, "%s:%d %s = %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)
static VkDevice dev;
static VkPhysicalDevice phys;
static VkPhysicalDeviceMemoryProperties mp;

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static uint32_t memtype(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid)
{
	for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
		if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want && !(mp.memoryTypes[i].propertyFlags & avoid))
			return i;
	for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
		if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
			return i;
	fprintf(stderr, "no memory type\n"); exit(1);
}

static VkBuffer mkbuf(VkDeviceSize size, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid)
{
	VkBufferCreateInfo bi = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
		.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT };
	VkBuffer b; CK(vkCreateBuffer(dev, &bi, NULL, &b));
	VkMemoryRequirements r; vkGetBufferMemoryRequirements(dev, b, &r);
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = r.size,
		.memoryTypeIndex = memtype(r.memoryTypeBits, want, avoid) };
	VkDeviceMemory m; CK(vkAllocateMemory(dev, &ai, NULL, &m));
	CK(vkBindBufferMemory(dev, b, m, 0));
	if (want & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) { void *p; CK(vkMapMemory(dev, m, 0, size, 0, &p)); memset(p, 1, size); }
	return b;
}

struct q { VkQueue q; VkCommandPool pool; };
static VkCommandBuffer cmd_copy(struct q *q, VkBuffer src[], VkBuffer dst[], int n, VkDeviceSize bytes, int chunks)
{
	VkCommandBufferAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = q->pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1 };
	VkCommandBuffer c; CK(vkAllocateCommandBuffers(dev, &ai, &c));
	VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
	CK(vkBeginCommandBuffer(c, &bi));
	for (int k = 0; k < chunks; k++)
		for (int i = 0; i < n; i++) {
			VkBufferCopy r = { .srcOffset = bytes / chunks * k, .dstOffset = bytes / chunks * k, .size = bytes / chunks };
			vkCmdCopyBuffer(c, src[i], dst[i], 1, &r);
		}
	CK(vkEndCommandBuffer(c));
	return c;
}

static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

/* submit each command buffer on its queue, wait for all; median time of reps */
static double run(struct q *qs[], VkCommandBuffer cs[], int n, int reps)
{
	VkFence f[4];
	for (int i = 0; i < n; i++) { VkFenceCreateInfo fi = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO }; CK(vkCreateFence(dev, &fi, NULL, &f[i])); }
	double t[64];
	for (int r = 0; r < reps + 2; r++) {
		double t0 = now();
		for (int i = 0; i < n; i++) {
			VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cs[i] };
			CK(vkQueueSubmit(qs[i]->q, 1, &si, f[i]));
		}
		CK(vkWaitForFences(dev, n, f, VK_TRUE, UINT64_MAX));
		double t1 = now();
		CK(vkResetFences(dev, n, f));
		if (r >= 2) t[r - 2] = t1 - t0;
	}
	for (int i = 0; i < n; i++) vkDestroyFence(dev, f[i], NULL);
	qsort(t, reps, sizeof(double), cmpd);
	return t[reps / 2];
}

int main(int argc, char **argv)
{
	VkDeviceSize bytes = (argc > 1 ? strtoull(argv[1], NULL, 0) : 1024) << 20;
	int reps = 7;
	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_3 };
	VkInstanceCreateInfo ii = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
	VkInstance inst; CK(vkCreateInstance(&ii, NULL, &inst));
	uint32_t n = 8; VkPhysicalDevice pd[8]; CK(vkEnumeratePhysicalDevices(inst, &n, pd));
	phys = pd[0];
	VkPhysicalDeviceProperties props; vkGetPhysicalDeviceProperties(phys, &props);
	printf("device %s\n", props.deviceName);
	vkGetPhysicalDeviceMemoryProperties(phys, &mp);
	uint32_t nf = 16; VkQueueFamilyProperties fam[16]; vkGetPhysicalDeviceQueueFamilyProperties(phys, &nf, fam);
	int tf = -1, cf = -1;
	for (uint32_t i = 0; i < nf; i++) {
		printf("family %u: flags 0x%x count %u\n", i, fam[i].queueFlags, fam[i].queueCount);
		VkQueueFlags f = fam[i].queueFlags;
		if ((f & VK_QUEUE_TRANSFER_BIT) && !(f & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT)) && tf < 0) tf = (int)i;
		if ((f & VK_QUEUE_COMPUTE_BIT) && !(f & VK_QUEUE_GRAPHICS_BIT) && cf < 0) cf = (int)i;
	}
	if (cf < 0) cf = 0;
	float prio[4] = { 1, 1, 1, 1 };
	VkDeviceQueueCreateInfo qi[2]; uint32_t nqi = 0;
	uint32_t tcount = tf >= 0 ? (fam[tf].queueCount < 2 ? fam[tf].queueCount : 2) : 0;
	uint32_t ccount = fam[cf].queueCount < 2 ? fam[cf].queueCount : 2;
	qi[nqi++] = (VkDeviceQueueCreateInfo){ .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = (uint32_t)cf, .queueCount = ccount, .pQueuePriorities = prio };
	if (tf >= 0) qi[nqi++] = (VkDeviceQueueCreateInfo){ .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = (uint32_t)tf, .queueCount = tcount, .pQueuePriorities = prio };
	VkDeviceCreateInfo di = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = nqi, .pQueueCreateInfos = qi };
	CK(vkCreateDevice(phys, &di, NULL, &dev));
	printf("compute family %d (%u queues used), transfer-only family %d (%u queues used)\n", cf, ccount, tf, tcount);
	struct q cq[2] = { 0 }, tq[2] = { 0 };
	for (uint32_t i = 0; i < ccount; i++) {
		vkGetDeviceQueue(dev, (uint32_t)cf, i, &cq[i].q);
		VkCommandPoolCreateInfo pi = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = (uint32_t)cf };
		CK(vkCreateCommandPool(dev, &pi, NULL, &cq[i].pool));
	}
	for (uint32_t i = 0; i < tcount; i++) {
		vkGetDeviceQueue(dev, (uint32_t)tf, i, &tq[i].q);
		VkCommandPoolCreateInfo pi = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = (uint32_t)tf };
		CK(vkCreateCommandPool(dev, &pi, NULL, &tq[i].pool));
	}
	VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	VkBuffer hsrc = mkbuf(bytes, hv, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
	VkBuffer hdst = mkbuf(bytes, hv | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
	VkBuffer d1 = mkbuf(bytes, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
	VkBuffer d2 = mkbuf(bytes, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
	double gb = (double)bytes / 1e9;
	struct { const char *name; struct q *q; } sets[2] = { { "compute", cq }, { "transfer-only", tq } };
	for (int s = 0; s < 2; s++) {
		struct q *q = sets[s].q;
		uint32_t cnt = s == 0 ? ccount : tcount;
		if (cnt == 0) continue;
		VkCommandBuffer up = cmd_copy(&q[0], &hsrc, &d1, 1, bytes, 1);
		VkCommandBuffer down = cmd_copy(&q[0], &d2, &hdst, 1, bytes, 1);
		struct q *qs1[1] = { &q[0] };
		double t = run(qs1, &up, 1, reps);
		printf("%-14s h->d alone            %8.2f ms %6.1f GB/s\n", sets[s].name, t * 1e3, gb / t);
		t = run(qs1, &down, 1, reps);
		printf("%-14s d->h alone            %8.2f ms %6.1f GB/s\n", sets[s].name, t * 1e3, gb / t);
		VkBuffer srcs[2] = { hsrc, d2 }, dsts[2] = { d1, hdst };
		VkCommandBuffer both = cmd_copy(&q[0], srcs, dsts, 2, bytes, 1);
		t = run(qs1, &both, 1, reps);
		printf("%-14s both, one cmdbuf      %8.2f ms %6.1f GB/s each way\n", sets[s].name, t * 1e3, gb / t);
		VkCommandBuffer both8 = cmd_copy(&q[0], srcs, dsts, 2, bytes, 8);
		t = run(qs1, &both8, 1, reps);
		printf("%-14s both, one cmdbuf, 8 interleaved chunks %8.2f ms %6.1f GB/s each way\n", sets[s].name, t * 1e3, gb / t);
		VkBuffer hh_s = hsrc, hh_d = hdst;
		VkCommandBuffer hh = cmd_copy(&q[0], &hh_s, &hh_d, 1, bytes, 1);
		t = run(qs1, &hh, 1, reps);
		printf("%-14s host->host one copy   %8.2f ms %6.1f GB/s each way\n", sets[s].name, t * 1e3, gb / t);
		if (cnt >= 2) {
			VkCommandBuffer down2 = cmd_copy(&q[1], &d2, &hdst, 1, bytes, 1);
			struct q *qs2[2] = { &q[0], &q[1] };
			VkCommandBuffer cs[2] = { up, down2 };
			t = run(qs2, cs, 2, reps);
			printf("%-14s both, two queues      %8.2f ms %6.1f GB/s each way\n", sets[s].name, t * 1e3, gb / t);
		}
	}
	/* mixed: h->d on a transfer queue, d->h on a compute queue */
	if (tcount >= 1) {
		VkCommandBuffer up = cmd_copy(&tq[0], &hsrc, &d1, 1, bytes, 1);
		VkCommandBuffer down = cmd_copy(&cq[0], &d2, &hdst, 1, bytes, 1);
		struct q *qs2[2] = { &tq[0], &cq[0] };
		VkCommandBuffer cs[2] = { up, down };
		double t = run(qs2, cs, 2, reps);
		printf("mixed: h->d transfer queue, d->h compute queue %8.2f ms %6.1f GB/s each way\n", t * 1e3, gb / t);
	}
	return 0;
}
