/* irq_cpus.c: which CPUs take the GPU's interrupts, and keeping the daemon's threads off
 * them (irq_cpus.h says why). */

#include "irq_cpus.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int irq_cpus_parse_list(const char *list, cpu_set_t *out)
{
	const char *p = list;

	CPU_ZERO(out);
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\n' || *p == '\0')
		return 0;
	for (;;) {
		char *end;
		unsigned long first, last;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		first = strtoul(p, &end, 10);
		last = first;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			last = strtoul(p, &end, 10);
			p = end;
		}
		if (last < first || last >= CPU_SETSIZE)
			return -EINVAL;
		for (unsigned long cpu = first; cpu <= last; cpu++)
			CPU_SET(cpu, out);
		if (*p == ',') {
			p++;
			continue;
		}
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		return *p == '\0' ? 0 : -EINVAL;
	}
}

/* Reads the first line of path into buf; 0 or a negative errno. */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	int r = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)size, f))
		r = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	return r;
}

enum irq_use { IRQ_UNUSED, IRQ_FIRED, IRQ_UNKNOWN };

/* Whether interrupt irq has fired since boot, from SYSFS/kernel/irq/N/per_cpu_count
 * ("0,0,14,..."), where the kernel says. */
static enum irq_use irq_use(const char *sysfs_root, unsigned long irq)
{
	char path[256], line[8192];

	snprintf(path, sizeof(path), "%s/kernel/irq/%lu/per_cpu_count", sysfs_root, irq);
	if (read_line(path, line, sizeof(line)) != 0)
		return IRQ_UNKNOWN;
	for (const char *p = line; *p; p++)
		if (*p >= '1' && *p <= '9')
			return IRQ_FIRED; /* a count with a non-zero digit */
	return IRQ_UNUSED;
}

/* The device's interrupt vectors, gathered before their CPUs are: a driver may request
 * more vectors than it uses (the H100's requested eight, one of which fired). */
struct irq_list {
	unsigned long irq[256];
	enum irq_use use[256];
	size_t count;
};

static void irq_list_add(struct irq_list *l, const char *sysfs_root, unsigned long irq)
{
	if (l->count < sizeof(l->irq) / sizeof(l->irq[0])) {
		l->irq[l->count] = irq;
		l->use[l->count++] = irq_use(sysfs_root, irq);
	}
}

/* Adds the effective affinity of interrupt irq to out, where the kernel says it. */
static void add_irq(const char *proc_root, unsigned long irq, cpu_set_t *out)
{
	char path[256], line[4096];
	cpu_set_t cpus;

	snprintf(path, sizeof(path), "%s/irq/%lu/effective_affinity_list", proc_root, irq);
	if (read_line(path, line, sizeof(line)) != 0 || irq_cpus_parse_list(line, &cpus) != 0)
		return; /* not requested, or a kernel without effective affinities: nothing known */
	CPU_OR(out, out, &cpus);
}

/* Whether name is a whole decimal number, as the entries of msi_irqs are. */
static bool is_number(const char *name, unsigned long *value)
{
	char *end;

	if (name[0] < '0' || name[0] > '9')
		return false;
	*value = strtoul(name, &end, 10);
	return *end == '\0';
}

int irq_cpus_of_pci_device(const char *sysfs_root, const char *proc_root, const char *pci_address,
			   cpu_set_t *out)
{
	char path[512], line[64];
	unsigned long irq;
	struct irq_list irqs = { .count = 0 };
	bool any_fired = false;
	DIR *dir;

	CPU_ZERO(out);
	/* The address comes from the driver: keep it from naming anything but a device. */
	if (!pci_address[0] || strchr(pci_address, '/') || strstr(pci_address, ".."))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", sysfs_root, pci_address);
	dir = opendir(path);
	if (!dir)
		return -errno;
	closedir(dir);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/msi_irqs", sysfs_root, pci_address);
	if ((dir = opendir(path))) {
		struct dirent *e;
		while ((e = readdir(dir)))
			if (is_number(e->d_name, &irq))
				irq_list_add(&irqs, sysfs_root, irq);
		closedir(dir);
	}
	/* The legacy line only where there are no MSI vectors: with them, sysfs's irq names the
	 * unused INTx line (often an ISA number in a virtual machine). */
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/irq", sysfs_root, pci_address);
	if (irqs.count == 0 && read_line(path, line, sizeof(line)) == 0) {
		line[strcspn(line, "\n")] = '\0';
		if (is_number(line, &irq) && irq != 0)
			irq_list_add(&irqs, sysfs_root, irq);
	}
	/* Where any vector is known to have fired, leave out those known not to have: they are
	 * requested but unused. Otherwise (a device just opened, or no counts) every vector. */
	for (size_t i = 0; i < irqs.count; i++)
		any_fired |= irqs.use[i] == IRQ_FIRED;
	for (size_t i = 0; i < irqs.count; i++)
		if (!any_fired || irqs.use[i] != IRQ_UNUSED)
			add_irq(proc_root, irqs.irq[i], out);
	return 0;
}

bool irq_cpus_plan(const cpu_set_t *allowed, const cpu_set_t *avoid, cpu_set_t *keep)
{
	cpu_set_t taken;

	CPU_AND(&taken, allowed, avoid);
	/* keep = allowed without avoid: CPU_XOR of allowed with its part in avoid. At least two
	 * CPUs, for the loop and the completion thread, which both poll: on one CPU they would
	 * take turns, which costs more than the interrupts. */
	CPU_XOR(keep, allowed, &taken);
	if (CPU_COUNT(&taken) == 0 || CPU_COUNT(keep) < 2) {
		*keep = *allowed;
		return false;
	}
	return true;
}

const char *irq_cpus_format(const cpu_set_t *set, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, set))
			continue;
		int last = cpu;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		int n = last == cpu ? snprintf(buf + len, size - len, "%s%d", len ? "," : "", cpu)
				    : snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "", cpu, last);
		if (n < 0 || (size_t)n >= size - len) {
			buf[len] = '\0'; /* what fits, whole entries only */
			return buf;
		}
		len += (size_t)n;
		cpu = last;
	}
	return buf;
}

int irq_cpus_keep_process_to(const cpu_set_t *keep)
{
	int first_error = 0;

	/* Until a pass finds every thread already there: a thread started during a pass (by one
	 * not yet moved) may be missed by it. */
	for (int pass = 0; pass < 4; pass++) {
		DIR *dir = opendir("/proc/self/task");
		struct dirent *e;
		unsigned long tid;
		bool moved_any = false;

		if (!dir)
			return errno;
		while ((e = readdir(dir))) {
			cpu_set_t has;
			if (!is_number(e->d_name, &tid))
				continue;
			if (sched_getaffinity((pid_t)tid, sizeof(has), &has) == 0 && CPU_EQUAL(&has, keep))
				continue;
			moved_any = true;
			if (sched_setaffinity((pid_t)tid, sizeof(*keep), keep) != 0 && errno != ESRCH && !first_error)
				first_error = errno; /* ESRCH: a thread that ended meanwhile */
		}
		closedir(dir);
		if (!moved_any || first_error)
			break;
	}
	return first_error;
}

bool irq_cpus_watch_update(struct irq_cpus_watch *w, const char *sysfs_root, const char *proc_root,
			   const cpu_set_t *now, cpu_set_t *avoid, cpu_set_t *keep)
{
	bool set_from_outside = false;

	if (!w->pci_address[0])
		return false;
	if (!CPU_EQUAL(now, &w->applied)) {
		/* taskset or systemctl set-property AllowedCPUs= changed the daemon's CPUs since
		 * it placed its threads: the operator's choice, within which the interrupt CPUs
		 * are avoided from now on. */
		w->allowed = *now;
		w->applied = *now;
		set_from_outside = true;
	}
	/* Nothing read, or no vector with a known CPU (a driver resetting its device): the
	 * threads stay where they are until something is known. */
	if (irq_cpus_of_pci_device(sysfs_root, proc_root, w->pci_address, avoid) < 0 || CPU_COUNT(avoid) == 0)
		return false;
	if (CPU_EQUAL(avoid, &w->avoid) && !set_from_outside)
		return false;
	irq_cpus_plan(&w->allowed, avoid, keep); /* keep = allowed where there is nothing to do */
	if (CPU_EQUAL(keep, &w->applied)) {
		w->avoid = *avoid; /* the threads are already there */
		return false;
	}
	return true;
}

/* Reads where the interrupts land and places every thread accordingly; at_start chooses the
 * log lines. */
static void place_threads(struct irq_cpus_watch *w, bool at_start)
{
	cpu_set_t now, avoid, keep;
	char avoid_text[128], keep_text[128];
	int r;

	if ((r = pthread_getaffinity_np(pthread_self(), sizeof(now), &now)) != 0) {
		log_warn("GPU interrupts: cannot read the loop thread's CPUs: %s", strerror(r));
		return;
	}
	if (!irq_cpus_watch_update(w, "/sys", "/proc", &now, &avoid, &keep)) {
		if (at_start)
			log_debug("GPU interrupts of %s: nothing to avoid among CPUs %s", w->pci_address,
				  irq_cpus_format(&w->allowed, keep_text, sizeof(keep_text)));
		return;
	}
	irq_cpus_format(&avoid, avoid_text, sizeof(avoid_text));
	irq_cpus_format(&keep, keep_text, sizeof(keep_text));
	const char *plural = CPU_COUNT(&avoid) > 1 ? "s" : "";
	/* Every thread, the driver's too (it started some when the device was opened); the
	 * completion and copy threads, started later, inherit the loop's. */
	if ((r = irq_cpus_keep_process_to(&keep)) != 0) {
		/* Tried again at the next check: avoid stays uncommitted. Where the threads are now
		 * is what the next check compares with, so that a partial move is not taken for an
		 * operator's. */
		if (pthread_getaffinity_np(pthread_self(), sizeof(now), &now) == 0)
			w->applied = now;
		if (!w->apply_failed)
			log_warn("the GPU's interrupts land on CPU%s %s: cannot keep the daemon's threads to CPUs %s: %s",
				 plural, avoid_text, keep_text, strerror(r));
		w->apply_failed = true;
		return;
	}
	w->avoid = avoid;
	w->applied = keep;
	w->apply_failed = false;
	if (CPU_EQUAL(&keep, &w->allowed)) /* not at start: keep differed from allowed there */
		log_info("the GPU's interrupts moved to CPU%s %s: the daemon's threads use all their CPUs again, %s "
			 "(none to avoid among them, or too few left)", plural, avoid_text, keep_text);
	else if (at_start)
		log_info("the GPU's interrupts land on CPU%s %s: the daemon's threads keep to CPUs %s "
			 "(VKR_GPU_IRQ_CPUS=off leaves them anywhere)", plural, avoid_text, keep_text);
	else
		log_info("the GPU's interrupts moved to CPU%s %s: the daemon's threads keep to CPUs %s", plural,
			 avoid_text, keep_text);
}

void irq_cpus_watch_start(struct irq_cpus_watch *w, const char *pci_address)
{
	const char *mode = getenv("VKR_GPU_IRQ_CPUS");
	int r;

	memset(w, 0, sizeof(*w));
	if (mode && strcmp(mode, "off") == 0)
		return;
	if (mode && *mode && strcmp(mode, "avoid") != 0)
		log_warn("VKR_GPU_IRQ_CPUS=%s: unknown (avoid or off); avoiding", mode);
	if (!pci_address[0])
		return; /* the driver gives no PCI address (lavapipe) */
	if (strlen(pci_address) >= sizeof(w->pci_address)) {
		log_debug("GPU interrupts: PCI address %s longer than any in sysfs: not watched", pci_address);
		return;
	}
	if ((r = pthread_getaffinity_np(pthread_self(), sizeof(w->allowed), &w->allowed)) != 0) {
		log_warn("GPU interrupts: cannot read this thread's CPUs: %s", strerror(r));
		return;
	}
	w->applied = w->allowed;
	strcpy(w->pci_address, pci_address); /* watched from here on */
	place_threads(w, true);
}

void irq_cpus_watch_check(struct irq_cpus_watch *w)
{
	if (w->pci_address[0])
		place_threads(w, false);
}
