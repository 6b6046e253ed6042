// SPDX-License-Identifier: MIT
/*
 * Lists (pmon/monitor.h): the one list parser for pids, tids and CPUs
 * (exported here, kept in lib/util/idlist.c) and the online CPUs, so that
 * stat, top, record and rdt accept the same lists. The target built from
 * them lives in the counting layer (lib/counter/target.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/monitor.h>

/* The parser lives in the support layer (lib/util/idlist.c) so that the
 * layers below this one read sysfs lists with it too (issue #25). */
int pmon_idlist__parse(const char *s, long max, long **out, size_t *n)
{
	return pmon__idlist_parse(s, max, out, n);
}

int pmon_idlist__format(const int *ids, size_t n, char *buf, size_t len)
{
	size_t at = 0, cut = 0; /* cut: the last item's end that leaves room for ",..." */

	if (len < 5)
		return -EINVAL;
	buf[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && ids[j] != INT_MAX && ids[j + 1] == ids[j] + 1)
			j++;
		char item[32];
		int k = j > i
			? snprintf(item, sizeof(item), "%s%d-%d", i ? "," : "", ids[i], ids[j])
			: snprintf(item, sizeof(item), "%s%d", i ? "," : "", ids[i]);
		if (at + (size_t)k >= len) {
			memcpy(buf + cut, cut ? ",..." : "...", cut ? 5 : 4);
			return -ENOSPC;
		}
		memcpy(buf + at, item, (size_t)k + 1);
		at += (size_t)k;
		if (at + 4 < len)
			cut = at;
		i = j + 1;
	}
	return 0;
}

int pmon_cpus_online(const char *sysfs_root, int **cpus, size_t *n)
{
	char path[4096], buf[4096];
	long *ids;
	size_t nids;
	long len;
	int err;

	*cpus = NULL;
	*n = 0;
	pmon__fmt(path, sizeof(path), "%s/devices/system/cpu/online",
		  sysfs_root ? sysfs_root : "/sys");
	len = pmon__read_text(path, buf, sizeof(buf));
	if (len <= 0)
		return pmon__err(-EINVAL, "cannot read the online CPUs from %s", path);
	buf[strcspn(buf, "\n")] = '\0';
	err = pmon_idlist__parse(buf, 1 << 20, &ids, &nids);
	if (err)
		return pmon__err(-EINVAL, "%s: the online CPU list '%s' does not parse", path, buf);
	if (!nids) {
		free(ids);
		return pmon__err(-EINVAL, "%s lists no CPU", path);
	}
	*cpus = malloc(nids * sizeof(**cpus));
	if (!*cpus) {
		free(ids);
		return pmon__err(-ENOMEM, "out of memory for %zu online CPUs", nids);
	}
	for (size_t i = 0; i < nids; i++)
		(*cpus)[i] = (int)ids[i];
	*n = nids;
	free(ids);
	return 0;
}
