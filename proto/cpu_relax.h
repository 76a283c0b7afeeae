/* cpu_relax.h: the pause a busy-wait loop executes between polls (the daemon's and the
 * client's), so that it yields the core's pipeline (and a hyperthread sibling) while it waits. */
#ifndef VKR_CPU_RELAX_H
#define VKR_CPU_RELAX_H

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#endif /* VKR_CPU_RELAX_H */
