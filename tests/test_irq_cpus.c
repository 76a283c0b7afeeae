/* Unit tests of daemon/irq_cpus.c: CPU lists, finding a PCI device's interrupt CPUs in a
 * sysfs and proc tree made here, and the plan that keeps the daemon off them. */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "irq_cpus.h"

static void set_of(cpu_set_t *set, const int *cpus, size_t n)
{
	CPU_ZERO(set);
	for (size_t i = 0; i < n; i++)
		CPU_SET(cpus[i], set);
}

static void test_lists_parse(void **state)
{
	(void)state;
	cpu_set_t got, want;

	assert_int_equal(irq_cpus_parse_list("0-3,14\n", &got), 0);
	set_of(&want, (const int[]){ 0, 1, 2, 3, 14 }, 5);
	assert_true(CPU_EQUAL(&got, &want));
	assert_int_equal(irq_cpus_parse_list("7", &got), 0);
	assert_int_equal(CPU_COUNT(&got), 1);
	assert_true(CPU_ISSET(7, &got));
	assert_int_equal(irq_cpus_parse_list("\n", &got), 0);
	assert_int_equal(CPU_COUNT(&got), 0);
	const char *bad[] = { "x", "1-", "3-1", "1,,2", "1;2", "-1", "99999999", "1 2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(irq_cpus_parse_list(bad[i], &got), -EINVAL);
}

static void test_lists_format(void **state)
{
	(void)state;
	cpu_set_t set;
	char buf[64], tiny[5];

	set_of(&set, (const int[]){ 0, 1, 2, 5, 7, 8 }, 6);
	assert_string_equal(irq_cpus_format(&set, buf, sizeof(buf)), "0-2,5,7-8");
	/* Only whole entries where the buffer is short. */
	assert_string_equal(irq_cpus_format(&set, tiny, sizeof(tiny)), "0-2");
	CPU_ZERO(&set);
	assert_string_equal(irq_cpus_format(&set, buf, sizeof(buf)), "");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *path)
{
	assert_int_equal(mkdir(path, 0755), 0);
}

/* Makes the temporary directory root (a mkdtemp template) and names its sys and proc
 * (PATH_MAX bytes each), the roots that irq_cpus is given in place of /sys and /proc. */
static void make_roots(char *root, char *sys, char *proc)
{
	assert_non_null(mkdtemp(root));
	snprintf(sys, PATH_MAX, "%s/sys", root);
	snprintf(proc, PATH_MAX, "%s/proc", root);
}

/* Makes directories root/dirs[i], in order, then files root/files[i][0] holding files[i][1]. */
static void make_tree(const char *root, const char *const *dirs, size_t ndirs, const char *const (*files)[2],
		      size_t nfiles)
{
	char p[PATH_MAX * 2];

	for (size_t i = 0; i < ndirs; i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		make_dir(p);
	}
	for (size_t i = 0; i < nfiles; i++) {
		snprintf(p, sizeof(p), "%s/%s", root, files[i][0]);
		write_file(p, files[i][1]);
	}
}

/* A tree with device 0000:00:06.0: MSI-X vectors 42 (effective CPU 14), 43 (effective 3) and
 * 44 (no effective affinity file: not requested), and an unused legacy line 10 (effective
 * CPU 0), which sysfs shows beside MSI vectors and which must not count; device 0000:00:07.0
 * with only legacy line 11 (effective CPU 5). Per-CPU counts are added part way. */
static void test_device_interrupt_cpus_found(void **state)
{
	(void)state;
	char root[] = "/tmp/vkr-irq-XXXXXX", sys[PATH_MAX], proc[PATH_MAX], p[PATH_MAX * 2];
	cpu_set_t got, want;

	make_roots(root, sys, proc);
	const char *dirs[] = { "sys", "sys/bus", "sys/bus/pci", "sys/bus/pci/devices",
			       "sys/bus/pci/devices/0000:00:06.0", "sys/bus/pci/devices/0000:00:06.0/msi_irqs",
			       "sys/bus/pci/devices/0000:00:07.0", "proc", "proc/irq", "proc/irq/42",
			       "proc/irq/43", "proc/irq/44", "proc/irq/11", "proc/irq/10" };
	const char *const files[][2] = {
		{ "sys/bus/pci/devices/0000:00:06.0/msi_irqs/42", "msix\n" },
		{ "sys/bus/pci/devices/0000:00:06.0/msi_irqs/43", "msix\n" },
		{ "sys/bus/pci/devices/0000:00:06.0/msi_irqs/44", "msix\n" },
		{ "sys/bus/pci/devices/0000:00:06.0/irq", "10\n" },
		{ "proc/irq/10/effective_affinity_list", "0\n" },
		{ "sys/bus/pci/devices/0000:00:07.0/irq", "11\n" },
		{ "proc/irq/42/effective_affinity_list", "14\n" },
		{ "proc/irq/43/effective_affinity_list", "3\n" },
		{ "proc/irq/44/smp_affinity_list", "0-15\n" },
		{ "proc/irq/11/effective_affinity_list", "5\n" },
	};
	make_tree(root, dirs, sizeof(dirs) / sizeof(dirs[0]), files, sizeof(files) / sizeof(files[0]));

	/* No per-CPU counts (kernel/irq/N/per_cpu_count): every vector counts. */
	assert_int_equal(irq_cpus_of_pci_device(sys, proc, "0000:00:06.0", &got), 0);
	set_of(&want, (const int[]){ 3, 14 }, 2);
	assert_true(CPU_EQUAL(&got, &want));
	/* Vector 42 has fired and 43 not: only 42's CPU. */
	const char *kdirs[] = { "sys/kernel", "sys/kernel/irq", "sys/kernel/irq/42", "sys/kernel/irq/43" };
	const char *const counts[][2] = {
		{ "sys/kernel/irq/42/per_cpu_count", "0,0,0,0,0,0,0,0,0,0,0,0,0,0,14472,0\n" },
		{ "sys/kernel/irq/43/per_cpu_count", "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n" },
	};
	make_tree(root, kdirs, sizeof(kdirs) / sizeof(kdirs[0]), counts, sizeof(counts) / sizeof(counts[0]));
	assert_int_equal(irq_cpus_of_pci_device(sys, proc, "0000:00:06.0", &got), 0);
	set_of(&want, (const int[]){ 14 }, 1);
	assert_true(CPU_EQUAL(&got, &want));
	/* None has fired yet (a device just opened): every vector counts again. */
	snprintf(p, sizeof(p), "%s/sys/kernel/irq/42/per_cpu_count", root);
	write_file(p, "0,0,0,0\n");
	assert_int_equal(irq_cpus_of_pci_device(sys, proc, "0000:00:06.0", &got), 0);
	set_of(&want, (const int[]){ 3, 14 }, 2);
	assert_true(CPU_EQUAL(&got, &want));
	assert_int_equal(irq_cpus_of_pci_device(sys, proc, "0000:00:07.0", &got), 0);
	set_of(&want, (const int[]){ 5 }, 1);
	assert_true(CPU_EQUAL(&got, &want));
	/* Unknown to sysfs, empty, or an address that names a path: refused, nothing found. */
	assert_int_equal(irq_cpus_of_pci_device(sys, proc, "0000:00:08.0", &got), -ENOENT);
	assert_int_equal(CPU_COUNT(&got), 0);
	assert_int_equal(irq_cpus_of_pci_device(sys, proc, "", &got), -EINVAL);
	assert_int_equal(irq_cpus_of_pci_device(sys, proc, "../../etc", &got), -EINVAL);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void test_plan_keeps_other_cpus(void **state)
{
	(void)state;
	cpu_set_t allowed, avoid, keep, want;

	/* 16 CPUs, interrupts on 14: keep the other 15. */
	CPU_ZERO(&allowed);
	for (int i = 0; i < 16; i++)
		CPU_SET(i, &allowed);
	set_of(&avoid, (const int[]){ 14 }, 1);
	assert_true(irq_cpus_plan(&allowed, &avoid, &keep));
	assert_int_equal(CPU_COUNT(&keep), 15);
	assert_false(CPU_ISSET(14, &keep));

	/* Interrupts on CPUs the daemon may not use anyway: nothing to do. */
	set_of(&allowed, (const int[]){ 1, 2 }, 2);
	set_of(&avoid, (const int[]){ 7 }, 1);
	assert_false(irq_cpus_plan(&allowed, &avoid, &keep));
	assert_true(CPU_EQUAL(&keep, &allowed));

	/* Every allowed CPU takes interrupts: stay where allowed rather than nowhere. */
	set_of(&avoid, (const int[]){ 1, 2, 3 }, 3);
	assert_false(irq_cpus_plan(&allowed, &avoid, &keep));
	assert_true(CPU_EQUAL(&keep, &allowed));

	/* Some of them, leaving one CPU: the loop and the completion thread would share it, so
	 * nothing changes. */
	set_of(&avoid, (const int[]){ 2 }, 1);
	assert_false(irq_cpus_plan(&allowed, &avoid, &keep));
	assert_true(CPU_EQUAL(&keep, &allowed));
	/* Leaving two. */
	set_of(&allowed, (const int[]){ 1, 2, 3 }, 3);
	assert_true(irq_cpus_plan(&allowed, &avoid, &keep));
	set_of(&want, (const int[]){ 1, 3 }, 2);
	assert_true(CPU_EQUAL(&keep, &want));

	/* No interrupt CPU known. */
	CPU_ZERO(&avoid);
	assert_false(irq_cpus_plan(&allowed, &avoid, &keep));
	assert_true(CPU_EQUAL(&keep, &allowed));
}

/* The daemon's side of a check that moved its threads: what irq_cpus_watch_check commits
 * once the move is applied. */
static void commit(struct irq_cpus_watch *w, const cpu_set_t *avoid, const cpu_set_t *keep)
{
	w->avoid = *avoid;
	w->applied = *keep;
}

/* A vector moved by irqbalance, a vector that fires only later, or CPUs an operator gives the
 * daemon are found by the next check, which then says where the daemon's threads go; an
 * unchanged one, or one where nothing is known, asks for nothing. */
static void test_watch_follows_moved_vectors(void **state)
{
	(void)state;
	char root[] = "/tmp/vkr-irq-XXXXXX", sys[PATH_MAX], proc[PATH_MAX], p[PATH_MAX * 2], q[PATH_MAX * 2];
	struct irq_cpus_watch w = { .pci_address = "0000:00:06.0" };
	cpu_set_t avoid, keep, want, now;

	make_roots(root, sys, proc);
	const char *dirs[] = { "sys", "sys/bus", "sys/bus/pci", "sys/bus/pci/devices",
			       "sys/bus/pci/devices/0000:00:06.0", "sys/bus/pci/devices/0000:00:06.0/msi_irqs",
			       "sys/kernel", "sys/kernel/irq", "sys/kernel/irq/42", "sys/kernel/irq/43",
			       "proc", "proc/irq", "proc/irq/42", "proc/irq/43" };
	const char *const files[][2] = {
		{ "sys/bus/pci/devices/0000:00:06.0/msi_irqs/42", "msix\n" },
		{ "sys/bus/pci/devices/0000:00:06.0/msi_irqs/43", "msix\n" },
		{ "sys/kernel/irq/42/per_cpu_count", "0,0,5\n" },
		{ "sys/kernel/irq/43/per_cpu_count", "0,0,0\n" },
		{ "proc/irq/42/effective_affinity_list", "14\n" },
		{ "proc/irq/43/effective_affinity_list", "2\n" },
	};
	make_tree(root, dirs, sizeof(dirs) / sizeof(dirs[0]), files, sizeof(files) / sizeof(files[0]));
	snprintf(p, sizeof(p), "%s/proc/irq/42/effective_affinity_list", root);
	set_of(&w.allowed, (const int[]){ 0, 1, 2, 3, 14, 15 }, 6);
	set_of(&w.avoid, (const int[]){ 14 }, 1);
	set_of(&w.applied, (const int[]){ 0, 1, 2, 3, 15 }, 5);
	now = w.applied;

	/* Where the daemon placed them at start: nothing to do. */
	assert_false(irq_cpus_watch_update(&w, sys, proc, &now, &avoid, &keep));
	/* Vector 42 moved to CPU 3: every allowed CPU but 3, CPU 14 again among them. Not
	 * committed (the move failed, say): asked again, until committed. */
	write_file(p, "3\n");
	assert_true(irq_cpus_watch_update(&w, sys, proc, &now, &avoid, &keep));
	set_of(&want, (const int[]){ 0, 1, 2, 14, 15 }, 5);
	assert_true(CPU_EQUAL(&keep, &want));
	set_of(&want, (const int[]){ 3 }, 1);
	assert_true(CPU_EQUAL(&avoid, &want));
	set_of(&want, (const int[]){ 14 }, 1);
	assert_true(CPU_EQUAL(&w.avoid, &want));
	assert_true(irq_cpus_watch_update(&w, sys, proc, &now, &avoid, &keep));
	commit(&w, &avoid, &keep);
	now = keep;
	assert_false(irq_cpus_watch_update(&w, sys, proc, &now, &avoid, &keep));
	/* Vector 43 fires for the first time: its CPU 2 is avoided too. */
	snprintf(q, sizeof(q), "%s/sys/kernel/irq/43/per_cpu_count", root);
	write_file(q, "0,0,9\n");
	assert_true(irq_cpus_watch_update(&w, sys, proc, &now, &avoid, &keep));
	set_of(&want, (const int[]){ 0, 1, 14, 15 }, 4);
	assert_true(CPU_EQUAL(&keep, &want));
	commit(&w, &avoid, &keep);
	now = keep;
	/* An operator gives the daemon CPUs 0-3 (taskset): the interrupt CPUs 2 and 3 are
	 * avoided within those, which leaves 0 and 1. */
	set_of(&now, (const int[]){ 0, 1, 2, 3 }, 4);
	assert_true(irq_cpus_watch_update(&w, sys, proc, &now, &avoid, &keep));
	assert_true(CPU_EQUAL(&w.allowed, &now));
	set_of(&want, (const int[]){ 0, 1 }, 2);
	assert_true(CPU_EQUAL(&keep, &want));
	commit(&w, &avoid, &keep);
	now = keep;
	/* Spread over all but one allowed CPU: too few left to avoid them, so all allowed. */
	write_file(p, "0-1\n");
	assert_true(irq_cpus_watch_update(&w, sys, proc, &now, &avoid, &keep));
	assert_true(CPU_EQUAL(&keep, &w.allowed));
	commit(&w, &avoid, &keep);
	now = keep;
	/* Moved off the allowed CPUs, with vector 43 back on CPU 2: only 2 avoided. */
	write_file(p, "7\n");
	assert_true(irq_cpus_watch_update(&w, sys, proc, &now, &avoid, &keep));
	set_of(&want, (const int[]){ 0, 1, 3 }, 3);
	assert_true(CPU_EQUAL(&keep, &want));
	commit(&w, &avoid, &keep);
	now = keep;
	cpu_set_t placed = w.avoid;
	/* No vector with a known CPU (a driver resetting its device): nothing known, the threads
	 * stay. */
	assert_int_equal(unlink(p), 0);
	snprintf(q, sizeof(q), "%s/proc/irq/43/effective_affinity_list", root);
	assert_int_equal(unlink(q), 0);
	assert_false(irq_cpus_watch_update(&w, sys, proc, &now, &avoid, &keep));
	assert_true(CPU_EQUAL(&w.avoid, &placed));
	/* The device gone from sysfs, or nothing watched (VKR_GPU_IRQ_CPUS=off, lavapipe). */
	snprintf(q, sizeof(q), "rm -rf '%s/sys/bus/pci/devices/0000:00:06.0'", root);
	assert_int_equal(system(q), 0);
	assert_false(irq_cpus_watch_update(&w, sys, proc, &now, &avoid, &keep));
	assert_true(CPU_EQUAL(&w.avoid, &placed));
	struct irq_cpus_watch none = { .pci_address = "" };
	assert_false(irq_cpus_watch_update(&none, sys, proc, &now, &avoid, &keep));

	snprintf(q, sizeof(q), "rm -rf '%s'", root);
	assert_int_equal(system(q), 0);
}

static void *park_until_told(void *arg)
{
	pthread_mutex_t *mu = arg;
	pthread_mutex_lock(mu);
	pthread_mutex_unlock(mu);
	return NULL;
}

/* Every thread of the process is moved, not only the caller; and back. */
static void test_keep_process_to_moves_every_thread(void **state)
{
	(void)state;
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_t other;
	cpu_set_t before, one, got;

	assert_int_equal(sched_getaffinity(0, sizeof(before), &before), 0);
	int first = 0;
	while (!CPU_ISSET(first, &before))
		first++;
	set_of(&one, (const int[]){ first }, 1);
	pthread_mutex_lock(&mu);
	assert_int_equal(pthread_create(&other, NULL, park_until_told, &mu), 0);
	assert_int_equal(irq_cpus_keep_process_to(&one), 0);
	assert_int_equal(pthread_getaffinity_np(other, sizeof(got), &got), 0);
	assert_true(CPU_EQUAL(&got, &one));
	assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(got), &got), 0);
	assert_true(CPU_EQUAL(&got, &one));
	assert_int_equal(irq_cpus_keep_process_to(&before), 0);
	assert_int_equal(pthread_getaffinity_np(other, sizeof(got), &got), 0);
	assert_true(CPU_EQUAL(&got, &before));
	pthread_mutex_unlock(&mu);
	assert_int_equal(pthread_join(other, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists_parse),
		cmocka_unit_test(test_lists_format),
		cmocka_unit_test(test_device_interrupt_cpus_found),
		cmocka_unit_test(test_plan_keeps_other_cpus),
		cmocka_unit_test(test_watch_follows_moved_vectors),
		cmocka_unit_test(test_keep_process_to_moves_every_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
