// SPDX-License-Identifier: MIT
/*
 * Workload: three threads named w1, w2 and w3 doing CPU-bound work in the
 * ratio 1:2:3 (a fixed number of loop rounds each, not a time), while the
 * main thread waits for them. Sampled by the threads' own CPU time
 * (task-clock), each thread's share is 1/6, 2/6 and 3/6 of the work
 * whatever else the machine runs (issue #27: report --sort tid, comm).
 *
 * usage: threads123 [UNITS]   each unit is 2^22 rounds (default 24)
 * Prints "wN TID" per thread on standard output.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long units = 24;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *arg)
{
	unsigned long share = (unsigned long)arg;
	volatile unsigned long x = share;
	char name[16];

	snprintf(name, sizeof(name), "w%lu", share);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&print_lock);
	printf("%s %ld\n", name, (long)syscall(SYS_gettid));
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
	for (unsigned long i = 0; i < share * units << 22; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	if (argc > 1)
		units = strtoul(argv[1], NULL, 10);
	for (unsigned long i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, work, (void *)(i + 1)))
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
