// SPDX-License-Identifier: MIT
/*
 * Workload: touch N fresh pages, optionally split over T threads, so that a
 * counter of page faults must read N above an empty run (touch 0). The
 * memory is mapped with MADV_NOHUGEPAGE: one fault per 4 KiB page.
 * usage: touch N [T]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct job {
	size_t pages;
};

static void *touch(void *arg)
{
	const struct job *j = arg;
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = j->pages * (size_t)psz;
	char *p;

	if (!j->pages)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < j->pages; i++)
		p[i * (size_t)psz] = 1;
	munmap(p, len);
	return NULL;
}

int main(int argc, char **argv)
{
	char *end;
	long n = argc > 1 ? strtol(argv[1], &end, 10) : -1;
	long t = argc > 2 ? strtol(argv[2], NULL, 10) : 0;

	if (n < 0 || t < 0 || t > 64) {
		fprintf(stderr, "usage: touch N [THREADS]\n");
		return 2;
	}
	if (!t) {
		struct job j = { (size_t)n };
		touch(&j);
		return 0;
	}
	pthread_t th[64];
	struct job jobs[64];
	for (long i = 0; i < t; i++) {
		jobs[i].pages = (size_t)(n / t + (i < n % t));
		if (pthread_create(&th[i], NULL, touch, &jobs[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	for (long i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	return 0;
}
