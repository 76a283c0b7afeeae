/*
 * irq_cpus: which CPUs take the GPU's interrupts, and keeping the daemon's threads off them.
 *
 * The GPU raises an interrupt for about every batch it completes, on the CPU the kernel
 * assigned to the device's interrupt vector. A thread that spins there (the daemon's loop,
 * its completion thread) is interrupted at every completion; in a virtual machine each such
 * interrupt also exits to the host. On an H100 host (KVM guest, 16 vCPUs) a lone
 * synchronous client's p50 was 69-76 us with the loop pinned to that CPU and 36-37 us with
 * it on another (docs/BENCHMARKS.md, session 35, run S35-3).
 */
#ifndef VKRD_IRQ_CPUS_H
#define VKRD_IRQ_CPUS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

/* Parses a kernel CPU list ("0-3,14", "5", "") into out. 0, or -EINVAL for a malformed list
 * or a CPU beyond CPU_SETSIZE. */
int irq_cpus_parse_list(const char *list, cpu_set_t *out);

/* The CPUs that service the interrupts of the PCI device at pci_address ("dddd:bb:dd.f"):
 * the effective affinity (PROC/irq/N/effective_affinity_list) of each of its MSI or MSI-X
 * vectors (SYSFS/bus/pci/devices/ADDRESS/msi_irqs/N), or where it has none, of its legacy
 * line (SYSFS/bus/pci/devices/ADDRESS/irq, where not 0); without those known not to have
 * fired (SYSFS/kernel/irq/N/per_cpu_count) where any is known to have. sysfs_root and proc_root are "/sys" and
 * "/proc" (tests pass trees of their own). 0 with out filled (possibly empty: no vector
 * with a known effective affinity), or a negative errno where the device is not in sysfs. */
int irq_cpus_of_pci_device(const char *sysfs_root, const char *proc_root, const char *pci_address,
			   cpu_set_t *out);

/* The CPUs the daemon's threads keep to: allowed without avoid, where that leaves at least
 * two CPUs and avoid took any. Returns whether keep differs from allowed (there is something
 * to do). */
bool irq_cpus_plan(const cpu_set_t *allowed, const cpu_set_t *avoid, cpu_set_t *keep);

/* Formats set as a CPU list ("3,14-15") into buf; returns buf. */
const char *irq_cpus_format(const cpu_set_t *set, char *buf, size_t size);

/* Moves every thread of this process to keep (threads started later inherit it from the one
 * that starts them). 0, or the first error (an errno). */
int irq_cpus_keep_process_to(const cpu_set_t *keep);

/* What the daemon decided, kept to decide again: irqbalance (or an operator) may move the
 * vectors, a vector that had not fired at start may fire later, and an operator may give the
 * daemon other CPUs. */
struct irq_cpus_watch {
	char pci_address[32];   /* "" where nothing is watched */
	cpu_set_t allowed;      /* the daemon's CPUs: at start, or as set from outside since */
	cpu_set_t avoid;        /* the interrupt CPUs the threads were last placed against */
	cpu_set_t applied;      /* where the threads were last placed (allowed at start) */
	bool apply_failed;      /* the last placement failed (warned once) */
};

/* For the daemon's start, on its main thread (the loop), before it starts the completion and
 * copy threads, which inherit the result: restricts every thread of the process (the loop,
 * and the driver's threads) to the CPUs the loop may run on other than those taking the
 * interrupts of the GPU at pci_address (no change where that address is "" or unknown to
 * sysfs, no vector has a known CPU, or fewer than two CPUs would be left).
 * VKR_GPU_IRQ_CPUS=off leaves the affinity alone and watches nothing. Logs what it did. */
void irq_cpus_watch_start(struct irq_cpus_watch *w, const char *pci_address);

/* The decision of a check, without acting on it: now is the loop thread's CPUs as read now
 * (where they differ from w->applied, an operator set them: they become w->allowed). Reads
 * the interrupt CPUs under sysfs_root and proc_root into avoid and, where the threads should
 * move (the interrupts moved, or the daemon's CPUs were set from outside), sets keep to
 * where and returns true. The caller commits avoid and keep to w once they are applied (so
 * that a failed move is tried again). False where nothing is watched, nothing is known (no
 * vector with a known CPU) or nothing is to be done. */
bool irq_cpus_watch_update(struct irq_cpus_watch *w, const char *sysfs_root, const char *proc_root,
			   const cpu_set_t *now, cpu_set_t *avoid, cpu_set_t *keep);

/* For a timer on the loop: irq_cpus_watch_update on /sys and /proc, and where the threads
 * should move, moves every thread of the process. Logs what it did. */
void irq_cpus_watch_check(struct irq_cpus_watch *w);

#endif
