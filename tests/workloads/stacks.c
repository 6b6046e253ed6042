// SPDX-License-Identifier: MIT
/*
 * Workload for call stacks: known call chains, threads and a fork.
 * Built with frame pointers; every worker calls tick() after its loop, so it
 * is not a leaf and sets up its frame (gcc omits a leaf's frame even with
 * -fno-omit-frame-pointer, and its caller then drops out of the chain).
 * usage: stacks chain|threads|fork|inline|phases [N]
 *   chain    main -> outer -> middle -> inner, inner doing the work
 *   threads  two threads, one in thread_a(), one in thread_b()
 *   fork     the child works in child_work(), the parent in parent_work()
 *   inline   main -> inl_outer, whose loop is mixer(), inlined into it
 *   phases   phase_a, then phase_b, then phase_c, one after the other
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void tick(void)
{
	sink++;
}

#define SPIN(n, k)                                                                                 \
	do {                                                                                       \
		for (long i = 0; i < (n); i++)                                                     \
			sink += (unsigned long)i * (k);                                            \
		tick();                                                                            \
		sink++; /* after the call: not a tail call */                                      \
	} while (0)

static __attribute__((noinline)) void inner(long n)
{
	SPIN(n, 3);
}

static __attribute__((noinline)) void middle(long n)
{
	inner(n);
	sink++;
}

static __attribute__((noinline)) void outer(long n)
{
	middle(n);
	sink++;
}

static __attribute__((noinline)) void *thread_a(void *arg)
{
	SPIN(*(long *)arg, 5);
	return NULL;
}

static __attribute__((noinline)) void *thread_b(void *arg)
{
	SPIN(*(long *)arg, 7);
	return NULL;
}

static __attribute__((noinline)) void child_work(long n)
{
	SPIN(n, 11);
}

static __attribute__((noinline)) void parent_work(long n)
{
	SPIN(n, 13);
}

static __attribute__((noinline)) void phase_a(long n)
{
	SPIN(n, 19);
}

static __attribute__((noinline)) void phase_b(long n)
{
	SPIN(n, 23);
}

static __attribute__((noinline)) void phase_c(long n)
{
	SPIN(n, 29);
}

static inline __attribute__((always_inline)) void mixer(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 17;
}

static __attribute__((noinline)) void inl_outer(long n)
{
	mixer(n);
	tick();
	sink++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "chain";
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 100000000;

	if (!strcmp(mode, "threads")) {
		pthread_t a, b;
		if (pthread_create(&a, NULL, thread_a, &n) ||
		    pthread_create(&b, NULL, thread_b, &n))
			return 1;
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	} else if (!strcmp(mode, "fork")) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			child_work(n);
			_exit(0);
		}
		parent_work(n);
		waitpid(pid, NULL, 0);
	} else if (!strcmp(mode, "phases")) {
		phase_a(n);
		phase_b(n);
		phase_c(n);
	} else if (!strcmp(mode, "inline")) {
		inl_outer(n);
	} else {
		outer(n);
	}
	return 0;
}
