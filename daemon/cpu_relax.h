/* cpu_relax.h: the pause a busy-wait loop executes between polls, so that it yields the
 * core's pipeline (and a hyperthread sibling) while it waits. */
#ifndef VKRD_CPU_RELAX_H
#define VKRD_CPU_RELAX_H

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#endif /* VKRD_CPU_RELAX_H */
