// SPDX-License-Identifier: MIT
/*
 * Workload: a process whose work runs in its threads only. The main thread
 * starts T workers (default 2) and sits in pause(); each worker burns CPU
 * and sleeps now and then, so that context switches happen too. A tool
 * that takes "-p PID" as the main thread alone counts next to nothing here:
 * the process's counts are all in the workers.
 *
 * usage: workers [T]        run until killed
 *        workers T N        the workers exist but wait for one byte on
 *                           standard input; then each does N rounds of
 *                           (burn, usleep 200 us) and the process exits.
 *                           Tools attached before the byte count the same
 *                           fixed work whatever the machine's load.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;
static long rounds; /* 0: forever */
static pthread_barrier_t start;

static void *burn(void *arg)
{
	(void)arg;
	if (rounds)
		pthread_barrier_wait(&start);
	for (long r = 0; !rounds || r < rounds; r++) {
		for (unsigned long i = 0; i < (1ul << 20); i++)
			sink += i * i;
		usleep(200); /* a voluntary context switch */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2;
	pthread_t t[64];
	char c;

	rounds = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	if (n < 1 || n > 64 || rounds < 0) {
		fprintf(stderr, "usage: workers [T [N]], 1 <= T <= 64\n");
		return 2;
	}
	if (rounds)
		pthread_barrier_init(&start, NULL, (unsigned)n + 1);
	for (long i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, burn, NULL)) {
			perror("pthread_create");
			return 1;
		}
	}
	if (!rounds)
		for (;;)
			pause();
	if (read(STDIN_FILENO, &c, 1) != 1)
		return 1;
	pthread_barrier_wait(&start);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
