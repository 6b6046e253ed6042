// SPDX-License-Identifier: MIT
/*
 * A fork + exec + exit workload for pmon trace's processes (t1812): the
 * parent ("wl-forkexec") starts a thread named "fe-worker", forks a child
 * that execs this program again as "fe-child" (named by exec's argv[0]
 * through prctl, as a command's name is its file's), which writes one line
 * and exits 3; the parent waits for it and exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "fe-worker");
	usleep(1000);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child")) {
		prctl(PR_SET_NAME, "fe-child");
		if (write(1, "child\n", 6) != 6)
			return 1;
		return 3;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
		return 1;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 3)
		return 1;
	return 0;
}
