// SPDX-License-Identifier: MIT
/*
 * Workload for JIT symbols: writes a counting loop into an anonymous
 * executable mapping, names it "jitted_loop" in /tmp/perf-PID.map (perf's
 * convention for JITs), and runs it.
 * usage: jit [ITERATIONS [MAPNAME]]   (the map file is left for the report;
 * the caller removes it; with MAPNAME its path is also written there, so that
 * tests running side by side each find their own)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	/* mov rcx, rdi; 1: dec rcx; jnz 1b; ret */
	static const uint8_t code[] = { 0x48, 0x89, 0xf9, 0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000000;
	char path[64];

	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED) {
		perror("jit: mmap");
		return 1;
	}
	memcpy(p, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f ||
	    fprintf(f, "%lx %zx jitted_loop\n", (unsigned long)(uintptr_t)p, sizeof(code)) < 0 ||
	    fclose(f)) {
		perror(path);
		return 1;
	}
	if (argc > 2) {
		FILE *o = fopen(argv[2], "w");
		if (!o || fprintf(o, "%s\n", path) < 0 || fclose(o)) {
			perror(argv[2]);
			return 1;
		}
	}
	void (*loop)(long) = (void (*)(long))p;
	loop(n);
	return 0;
}
