// SPDX-License-Identifier: MIT
/*
 * The floor for `pmon stat -e task-clock,page-faults,context-switches --
 * CMD`: the essential system calls and nothing else. Fork a child that
 * waits on a pipe, open the three software counters on it as one group
 * enabled on exec, let it exec CMD, wait for it, read the group once. No
 * parsing, no output: what any counting tool must at least do.
 * bench/stat-overhead.sh times it beside pmon and perf.
 * usage: stat-floor CMD [ARGS...]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int open_counter(pid_t pid, uint64_t config, int group)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.read_format =
		PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.disabled = group < 0;
	a.enable_on_exec = group < 0;
	a.inherit = 1;
	return (int)syscall(SYS_perf_event_open, &a, pid, -1, group, PERF_FLAG_FD_CLOEXEC);
}

int main(int argc, char **argv)
{
	int go[2];
	char c = 0;

	if (argc < 2 || pipe2(go, O_CLOEXEC))
		return 2;
	pid_t pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	close(go[0]);
	int lead = open_counter(pid, PERF_COUNT_SW_TASK_CLOCK, -1);
	if (lead < 0 || open_counter(pid, PERF_COUNT_SW_PAGE_FAULTS, lead) < 0 ||
	    open_counter(pid, PERF_COUNT_SW_CONTEXT_SWITCHES, lead) < 0)
		return 3;
	if (write(go[1], &c, 1) != 1)
		return 4;
	int status;
	while (waitpid(pid, &status, 0) < 0)
		;
	uint64_t buf[8];
	return read(lead, buf, sizeof(buf)) > 0 ? 0 : 5;
}
