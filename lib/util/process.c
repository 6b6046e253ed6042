// SPDX-License-Identifier: MIT
/*
 * One liveness rule for every process pmon watches or finds named in a file
 * (pmon/monitor.h): the attached targets of stat/record/top/trace/rdt, the
 * pmon that wrote an MSR state file, the owners of leftover bench, trace and
 * resctrl artefacts. Before it, cli/ and lib/ asked kill(pid, 0) with two
 * different errno rules and counted a zombie as running.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include <pmon/monitor.h>

bool pmon__process_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	long n;

	if (pid <= 0)
		return false;
	/* kill(2) with signal 0 fails only with ESRCH (no such process) or
	 * EPERM (it exists, owned by another user): EPERM is alive. */
	if (kill(pid, 0) && errno == ESRCH)
		return false;
	/* A zombie has exited; only its parent's wait() is missing, and its
	 * parent may never call it. proc(5) /proc/PID/stat: the state follows
	 * the last ')' (the command name may hold parentheses and blanks). */
	pmon__fmt(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = pmon__read_text(path, buf, sizeof(buf));
	if (n <= 0)
		return true; /* no /proc, or not ours to read: kill(2) said it exists */
	p = strrchr(buf, ')');
	if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
		return false;
	return true;
}

bool pmon_process_alive(pid_t pid)
{
	return pmon__process_alive(pid);
}
