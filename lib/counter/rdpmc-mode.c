// SPDX-License-Identifier: MIT
/*
 * The core PMU's rdpmc sysfs knob (Linux arch/x86/events/core.c,
 * set_attr_rdpmc(): 0 never, 1 processes with an mmapped event, 2 any
 * process): opened to every process for a session, the mode before kept in
 * a state file, and put back from it (pmon rdpmc --allow-user/--restore).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/kernel.h>

/* The knob's path and the state file's, and the mode now. */
static int knob(const char *sysfs, char *path, size_t len, char *state, size_t slen, int *now)
{
	struct pmon_kernel_info k;
	struct pmon_kernel_probe_opts o = { .sz = sizeof(o),
					    .sysfs_root = sysfs,
					    .no_perf_open = true };

	pmon_kernel_probe(&o, &k);
	if (!k.core_pmu[0] || k.rdpmc_mode < 0)
		return pmon__err(-ENODEV,
				 "no core PMU with an rdpmc mode (%s/bus/event_source/devices/cpu/"
				 "rdpmc does not exist): nothing to change",
				 sysfs ? sysfs : "/sys");
	pmon__fmt(path, len, "%s/bus/event_source/devices/%s/rdpmc", sysfs ? sysfs : "/sys",
		  k.core_pmu);
	pmon__fmt(state, slen, "%s/.pmon-rdpmc-saved", sysfs ? sysfs : "/run");
	*now = k.rdpmc_mode;
	return 0;
}

/* Write "@v\n" to @file. Return: 0 or -errno. */
static int put(const char *file, const char *v)
{
	FILE *f = fopen(file, "we");
	int err = !f || fprintf(f, "%s\n", v) < 0 ? -errno : 0;

	if (f && fclose(f) && !err)
		err = -errno;
	return err ? err : 0;
}

int pmon_rdpmc_mode_allow(const char *sysfs, char *path, size_t len, int *was)
{
	char state[512], cur[16];
	int err = knob(sysfs, path, len, state, sizeof(state), was);

	if (err)
		return err;
	pmon__fmt(cur, sizeof(cur), "%d", *was);
	if ((err = put(state, cur)))
		return pmon__err(err == -EACCES ? -EACCES : -EIO,
				 "cannot save the current mode in %s: %s", state, strerror(-err));
	if ((err = put(path, "2")))
		return pmon__err(err, "cannot write %s: %s (root needed)", path, strerror(-err));
	return 0;
}

int pmon_rdpmc_mode_restore(const char *sysfs, char *path, size_t len, int *was, int *now)
{
	char state[512], saved[16] = "";
	int err = knob(sysfs, path, len, state, sizeof(state), was);
	FILE *f;

	if (err)
		return err;
	f = fopen(state, "re");
	if (!f || !fgets(saved, sizeof(saved), f)) {
		if (f)
			fclose(f);
		return pmon__err(-ENOENT,
				 "nothing to restore: %s has no saved mode (was --allow-user run?)",
				 state);
	}
	fclose(f);
	saved[strcspn(saved, "\n")] = '\0';
	if (pmon__parse_u64(saved, 10, &(uint64_t){ 0 }) || strlen(saved) != 1 || saved[0] > '2')
		return pmon__err(-EINVAL, "%s holds '%s', not an rdpmc mode (0, 1 or 2)", state,
				 saved);
	if ((err = put(path, saved)))
		return pmon__err(err, "cannot write %s: %s (root needed)", path, strerror(-err));
	unlink(state);
	*now = saved[0] - '0';
	return 0;
}
