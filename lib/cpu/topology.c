// SPDX-License-Identifier: MIT
/*
 * Cache topology from sysfs (pmon/cpu.h): which L3 each logical CPU shares,
 * as Linux's cacheinfo lays it out (Documentation/ABI/testing/
 * sysfs-devices-system-cpu: cpuN/cache/indexM/{level,id,shared_cpu_list}).
 * RDT monitoring counts per L3 domain (SDM 17.16.7: IA32_QM_CTR reports the
 * domain of the CPU that reads it), so its MSR path needs this.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <pmon/cpu.h>

static int l3_id(const char *sys, int cpu)
{
	char path[512], buf[256];
	long v;

	for (int idx = 0; idx < 16; idx++) {
		pmon__fmt(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index%d/level",
			  sys, cpu, idx);
		if (pmon__read_long(path, &v))
			break;
		if (v != 3)
			continue;
		pmon__fmt(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index%d/id", sys,
			  cpu, idx);
		if (!pmon__read_long(path, &v))
			return (int)v;
		/* Kernels before the "id" attribute: the first CPU sharing it. */
		pmon__fmt(path, sizeof(path),
			  "%s/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", sys, cpu,
			  idx);
		if (pmon__read_text(path, buf, sizeof(buf)) > 0) {
			char *end;
			long first = strtol(buf, &end, 10);
			if (end != buf && first >= 0)
				return (int)first;
		}
		return -1;
	}
	return -1;
}

int pmon_cpu_l3_ids(const char *sysfs_root, const int *cpus, size_t n, int *ids)
{
	const char *sys = sysfs_root ? sysfs_root : "/sys";
	size_t known = 0;

	for (size_t i = 0; i < n; i++) {
		ids[i] = l3_id(sys, cpus[i]);
		known += ids[i] >= 0;
	}
	if (!known)
		return pmon__err(-ENOENT,
				 "%s/devices/system/cpu/cpuN/cache: no L3 listed for these CPUs",
				 sys);
	return 0;
}

int pmon_thread_pin(int cpu)
{
	cpu_set_t one;

	if (cpu < 0 && (cpu = sched_getcpu()) < 0)
		return pmon__err(-errno, "cannot tell which CPU this thread runs on: %s",
				 strerror(errno));
	if (cpu >= CPU_SETSIZE)
		return pmon__err(-EINVAL, "CPU %d is beyond the %d this build knows", cpu,
				 CPU_SETSIZE);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return pmon__err(-errno, "cannot run on CPU %d: %s", cpu,
				 errno == EINVAL ? "not online or not in this thread's cpuset"
						 : strerror(errno));
	return cpu;
}
