// SPDX-License-Identifier: MIT
/*
 * Workload: N pipe round trips between a parent and a child pinned to the
 * same CPU, so each trip blocks one side and runs the other: at least 2N-1
 * context switches (the child's last step is its exit, not a switch). On one
 * CPU a wake-up is cheap; across CPUs it costs ~50 us on these VMs.
 * usage: pingpong N
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : -1;
	int ab[2], ba[2];
	cpu_set_t one;
	char c = 0;

	if (n < 0) {
		fprintf(stderr, "usage: pingpong N\n");
		return 2;
	}
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one); /* inherited by the child */
	if (pipe(ab) || pipe(ba)) {
		perror("pipe");
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		for (long i = 0; i < n; i++) {
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	for (long i = 0; i < n; i++) {
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
