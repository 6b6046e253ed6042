// SPDX-License-Identifier: MIT
/*
 * The report's symbol index (lib/report/symindex.c) against elfutils'
 * dwfl_module_addrinfo() on real files: libc, libdw and this program. At
 * the edges of every symbol (first byte, last byte, the bytes on either
 * side) and at random addresses of the executable segments, both must name
 * the same symbol (or none); most answers must come from the index itself.
 */
#define _GNU_SOURCE /* dl_iterate_phdr() */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <gelf.h>

#include "report/report.h"

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static const char *same_name(const char *a, const char *b)
{
	if (!a || !b)
		return a == b ? NULL : (a ? a : b);
	return strcmp(a, b) ? a : NULL;
}

/* A loaded library's path, from the dynamic loader's list. */
static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	char **want = arg;

	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, want[0])) {
		want[1] = strdup(info->dlpi_name);
		return 1;
	}
	return 0;
}

static void compare_module(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwfl *dwfl = dwfl_begin(&offline);
	Dwfl_Module *mod;
	struct pmon__symindex ix = { 0 };
	unsigned long asked = 0, wrong = 0;
	GElf_Addr bias;
	Elf *elf;
	size_t nph;

	assert_true(fd >= 0);
	assert_non_null(dwfl);
	mod = dwfl_report_offline(dwfl, path, path, fd);
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	elf = dwfl_module_getelf(mod, &bias);
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &nph), 0);

	/* Where answers differ: the edges of every sized symbol. */
	int n = dwfl_module_getsymtab(mod);
	assert_true(n > 1);
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a;
		if (!dwfl_module_getsym_info(mod, i, &s, &a, NULL, NULL, NULL) || !s.st_size ||
		    GELF_ST_TYPE(s.st_info) != STT_FUNC)
			continue;
		GElf_Addr probe[] = { a - 1, a, a + s.st_size / 2, a + s.st_size - 1,
				      a + s.st_size };
		for (size_t k = 0; k < sizeof(probe) / sizeof(probe[0]); k++) {
			GElf_Off off;
			GElf_Sym sym;
			const char *want =
				dwfl_module_addrinfo(mod, probe[k], &off, &sym, NULL, NULL, NULL);
			const char *got = pmon__symindex_find(&ix, mod, probe[k]);
			const char *bad = same_name(want, got);
			asked++;
			if (bad || (!want) != (!got)) {
				if (wrong++ < 5)
					print_message("%s: %#llx: elfutils %s, index %s\n", path,
						      (unsigned long long)probe[k],
						      want ? want : "(none)", got ? got : "(none)");
			}
		}
	}
	/* And random addresses of the executable segments. */
	const char *env = getenv("PMON_TEST_SYMINDEX_PROBES");
	int probes = env ? atoi(env) : 2000;
	srandom(42);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		for (int k = 0; k < probes; k++) {
			GElf_Addr a = ph.p_vaddr + bias + (GElf_Addr)random() % ph.p_memsz;
			GElf_Off off;
			GElf_Sym sym;
			const char *want =
				dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
			const char *got = pmon__symindex_find(&ix, mod, a);
			asked++;
			if (same_name(want, got) || (!want) != (!got)) {
				if (wrong++ < 5)
					print_message("%s: %#llx: elfutils %s, index %s\n", path,
						      (unsigned long long)a, want ? want : "(none)",
						      got ? got : "(none)");
			}
		}
	}
	print_message("%s: %lu addresses, %lu answered by elfutils, %lu differ\n", path, asked,
		      ix.fallbacks, wrong);
	assert_int_equal(wrong, 0);
	assert_true(ix.n > 0);
	/* The index answers where sized symbols cover the code. */
	assert_true(ix.fallbacks * 2 < asked);
	pmon__symindex_free(&ix);
	dwfl_end(dwfl);
}

static void test_symindex__libc(void **state)
{
	char *want[2] = { "libc.so", NULL };

	(void)state;
	dl_iterate_phdr(find_lib, want);
	if (!want[1])
		skip();
	compare_module(want[1]);
	free(want[1]);
}

static void test_symindex__libdw(void **state)
{
	char *want[2] = { "libdw", NULL };

	(void)state;
	dl_iterate_phdr(find_lib, want);
	if (!want[1])
		skip(); /* linked statically */
	compare_module(want[1]);
	free(want[1]);
}

static void test_symindex__this_program(void **state)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	(void)state;
	assert_true(n > 0);
	path[n] = '\0';
	compare_module(path);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) /* files of one's own: a wider check */
		compare_module(argv[i]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symindex__libc),
		cmocka_unit_test(test_symindex__libdw),
		cmocka_unit_test(test_symindex__this_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
