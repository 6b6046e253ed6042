// SPDX-License-Identifier: MIT
/*
 * The state file a pmon keeps while it has MSRs programmed (issue #14.6):
 * who wrote it and the writes that put the registers back, so that a pmon
 * killed meanwhile leaves a way out (pmon_msr_state__restore(),
 * `--cleanup`). Shared by the MSR counting backend (lib/msr/counting.c) and
 * RDT's MSR interface (lib/rdt/msr.c); each names what it left.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/msr.h>

static int emit_line(void *ctx, int cpu, uint32_t addr, uint64_t v)
{
	return fprintf(ctx, "write %d %#" PRIx32 " %#" PRIx64 "\n", cpu, addr, v) < 0 ? -EIO : 0;
}

/*
 * The file: "pmon-msr-state 1", "pid N", "device PATH" ("-": the default),
 * then one "write CPU ADDR VALUE" per register to put back, in order.
 * Written to a temporary name and renamed, so it is whole or absent.
 */
int pmon__msr_state_write(const char *path, const char *device, pmon__msr_restore_seq seq,
			  const void *obj)
{
	char tmp[4096];
	int fd, err = 0;
	FILE *f;

	if (!pmon__fmt(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()))
		return pmon__err(-ENAMETOOLONG, "state file '%s': the name is too long", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return pmon__err(err, "cannot write the MSR state file '%s': %s", tmp,
				 strerror(-err));
	}
	fprintf(f, "pmon-msr-state 1\npid %d\ndevice %s\n", (int)getpid(), device ? device : "-");
	err = seq(obj, emit_line, f);
	if (fflush(f) || fsync(fileno(f)))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return pmon__err(err, "cannot write the MSR state file '%s': %s", path,
				 strerror(-err));
	}
	return 0;
}

int pmon__msr_state_check(const char *path, const char *what)
{
	FILE *f = fopen(path, "re");
	int pid = 0;

	if (!f)
		return errno == ENOENT
			? 0
			: pmon__err(-errno, "MSR state file '%s': %s", path, strerror(errno));
	if (fscanf(f, "pmon-msr-state 1 pid %d", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid > 0 && pmon__process_alive(pid))
		return pmon__err(-EBUSY, "pmon (pid %d) is programming %s (state file '%s')", pid,
				 what, path);
	return pmon__err(-EBUSY,
			 "a pmon that ended without restoring them (pid %d) left %s "
			 "programmed (saved in '%s')",
			 pid, what, path);
}

const char *pmon_msr_state_path(const char *device, const char *dev_suffix, const char *name,
				char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (device)
		snprintf(buf, len, "%s%s", device, dev_suffix);
	else if (mkdir("/run/pmon", 0700) == 0 || errno == EEXIST)
		snprintf(buf, len, "/run/pmon/%s", name);
	else if (xdg && *xdg)
		snprintf(buf, len, "%s/pmon-%s", xdg, name);
	else
		return NULL;
	return buf;
}
