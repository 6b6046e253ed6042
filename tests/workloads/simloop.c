// SPDX-License-Identifier: MIT
/*
 * Workloads for pmon simulate (tests/cli/t1900-simulate.sh), each small
 * enough for valgrind on a shared machine:
 *   simloop spin N            spin(): a loop of exactly N trips
 *   simloop walk BYTES STRIDE REPS   walk(): REPS passes over BYTES, one load
 *                                    every STRIDE bytes
 *   simloop rank              hot_a > hot_b > hot_c by instructions
 *   simloop forever FILE      creates FILE, then spins until killed
 *   simloop segv              dies by SIGSEGV after a little work
 *   simloop chain N           chain(): N trips of 8 dependent adds (pmon
 *                             simulate --mca: 1 add a cycle, add's latency)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spin(unsigned long n);
unsigned long walk(const volatile char *a, unsigned long bytes, unsigned long stride,
		   unsigned long reps);
void hot_a(void);
void hot_b(void);
void hot_c(void);
void chain(unsigned long n);

/* dec + jnz per trip: the body objdump shows between the label and the jump. */
__attribute__((noinline)) void spin(unsigned long n)
{
	__asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

__attribute__((noinline)) unsigned long walk(const volatile char *a, unsigned long bytes,
					     unsigned long stride, unsigned long reps)
{
	unsigned long s = 0;

	for (unsigned long r = 0; r < reps; r++)
		for (unsigned long i = 0; i < bytes; i += stride)
			s += (unsigned char)a[i];
	return s;
}

__attribute__((noinline)) void hot_a(void)
{
	spin(300000);
}

__attribute__((noinline)) void hot_b(void)
{
	__asm__ volatile("" ::: "memory");
	for (volatile int i = 0; i < 40000; i++)
		;
}

__attribute__((noinline)) void hot_c(void)
{
	for (volatile int i = 0; i < 10000; i++)
		;
}

/* Each add waits for the one before: 8 cycles a trip wherever add's
 * latency is 1 cycle; dec + jnz run beside them. */
__attribute__((noinline)) void chain(unsigned long n)
{
	unsigned long x = 0;

	__asm__ volatile("1:\n\tadd $1, %1\n\tadd $1, %1\n\tadd $1, %1\n\tadd $1, %1\n"
			 "\tadd $1, %1\n\tadd $1, %1\n\tadd $1, %1\n\tadd $1, %1\n"
			 "\tdec %0\n\tjnz 1b"
			 : "+r"(n), "+r"(x)
			 :
			 : "cc");
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "chain")) {
		chain(strtoul(argv[2], NULL, 10));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "spin")) {
		spin(strtoul(argv[2], NULL, 10));
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "walk")) {
		unsigned long bytes = strtoul(argv[2], NULL, 10);
		char *a = malloc(bytes);
		if (!a)
			return 1;
		memset(a, 1, bytes);
		unsigned long s =
			walk(a, bytes, strtoul(argv[3], NULL, 10), strtoul(argv[4], NULL, 10));
		free(a);
		return s == 0 && bytes ? 1 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "rank")) {
		hot_a();
		hot_b();
		hot_c();
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "forever")) {
		FILE *f = fopen(argv[2], "w");
		if (f)
			fclose(f);
		for (;;)
			spin(1000);
	}
	if (argc == 2 && !strcmp(argv[1], "segv")) {
		spin(1000);
		raise(SIGSEGV);
		return 0;
	}
	fprintf(stderr,
		"usage: simloop spin N | walk BYTES STRIDE REPS | rank | forever FILE | "
		"segv\n");
	return 2;
}
