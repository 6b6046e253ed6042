// SPDX-License-Identifier: MIT
/*
 * Workload for C++ names without a C++ compiler: its hot function carries
 * the symbol g++ gives `ns::Worker::spin(long)` (Itanium C++ ABI mangling,
 * set with an asm label), so the report has a mangled name to demangle.
 * usage: cxxnames [N]
 */
#include <stdlib.h>

static volatile unsigned long sink;

void spin(long n) __asm__("_ZN2ns6Worker4spinEl");
__attribute__((noinline)) void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 3;
}

int main(int argc, char **argv)
{
	spin(argc > 1 ? strtol(argv[1], NULL, 10) : 100000000);
	return 0;
}
