// SPDX-License-Identifier: MIT
/*
 * Cache topology from sysfs (pmon/cpu.h): which L3 each logical CPU shares,
 * as Linux's cacheinfo lays it out (Documentation/ABI/testing/
 * sysfs-devices-system-cpu: cpuN/cache/indexM/{level,id,shared_cpu_list}).
 * RDT monitoring counts per L3 domain (SDM 17.16.7: IA32_QM_CTR reports the
 * domain of the CPU that reads it), so its MSR path needs this. Also each
 * CPU's socket, die, core and node, for stat's --per-socket and the like.
 */
#define _GNU_SOURCE
#include <dirent.h>
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

/* The node whose cpulist holds @cpu, -1 when no node lists it. */
static int node_of(const char *sys, int cpu)
{
	char path[512], buf[4096];
	int node = -1;
	DIR *d;
	struct dirent *e;

	pmon__fmt(path, sizeof(path), "%s/devices/system/node", sys);
	if (!(d = opendir(path)))
		return -1;
	while (node < 0 && (e = readdir(d))) {
		char *end;
		long k, *ids = NULL;
		size_t n = 0;

		if (strncmp(e->d_name, "node", 4) || (k = strtol(e->d_name + 4, &end, 10)) < 0 ||
		    end == e->d_name + 4 || *end)
			continue;
		pmon__fmt(path, sizeof(path), "%s/devices/system/node/%s/cpulist", sys, e->d_name);
		if (pmon__read_text(path, buf, sizeof(buf)) <= 0)
			continue;
		buf[strcspn(buf, "\n")] = 0;
		if (buf[0] && !pmon__idlist_parse(buf, 1L << 30, &ids, &n))
			for (size_t i = 0; i < n; i++)
				if (ids[i] == cpu)
					node = (int)k;
		free(ids);
	}
	closedir(d);
	return node;
}

int pmon_cpu_places(const char *sysfs_root, const int *cpus, size_t n, struct pmon_cpu_place *out)
{
	static const char *const file[] = { "physical_package_id", "die_id", "core_id" };
	const char *sys = sysfs_root ? sysfs_root : "/sys";
	char path[512];

	for (size_t i = 0; i < n; i++) {
		long v[3];

		for (int f = 0; f < 3; f++) {
			pmon__fmt(path, sizeof(path), "%s/devices/system/cpu/cpu%d/topology/%s",
				  sys, cpus[i], file[f]);
			if (!pmon__read_long(path, &v[f]))
				continue;
			if (f == 1) { /* no die_id before Linux 5.2: one die per socket */
				v[f] = 0;
				continue;
			}
			return pmon__err(-ENOENT, "cannot read %s: the CPU's topology is unknown",
					 path);
		}
		int node = node_of(sys, cpus[i]);
		out[i] = (struct pmon_cpu_place){ .cpu = cpus[i],
						  .socket = (int)v[0],
						  .die = (int)v[1],
						  .core = (int)v[2],
						  .node = node < 0 ? 0 : node };
	}
	return 0;
}
