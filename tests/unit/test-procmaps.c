// SPDX-License-Identifier: MIT
/* The /proc/PID/maps line parser (lib/util/procmaps.c): the kernel's layout
 * (show_map_vma() in fs/proc/task_mmu.c), and lines it must refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "util/procmaps.h"

static void test_procmaps__lines(void **state)
{
	static const struct {
		int line;
		const char *text;
		int err;
		uint64_t start, end, pgoff, ino;
		unsigned maj, min;
		const char *perms, *name;
	} rows[] = {
		{ __LINE__, "55d4a3e00000-55d4a3e02000 r-xp 00002000 fd:01 1311 /usr/bin/cat\n", 0,
		  0x55d4a3e00000, 0x55d4a3e02000, 0x2000, 1311, 0xfd, 1, "r-xp", "/usr/bin/cat" },
		{ __LINE__,
		  "7f00-7f01 r-xp 00000000 08:02 42                         /lib/a b.so (deleted)",
		  0, 0x7f00, 0x7f01, 0, 42, 8, 2, "r-xp", "/lib/a b.so (deleted)" },
		{ __LINE__, "7ffd1000-7ffd2000 rw-p 00000000 00:00 0                  [stack]", 0,
		  0x7ffd1000, 0x7ffd2000, 0, 0, 0, 0, "rw-p", "[stack]" },
		{ __LINE__, "00400000-00401000 r-xs 00000000 00:00 0", 0, 0x400000, 0x401000, 0, 0,
		  0, 0, "r-xs", "" },
		{ __LINE__, "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]", 0,
		  0xffffffffff600000, 0xffffffffff601000, 0, 0, 0, 0, "--xp", "[vsyscall]" },
		/* refused */
		{ __LINE__, "", -22, 0, 0, 0, 0, 0, 0, NULL, NULL },
		{ __LINE__, "/usr/lib/tail-of-a-line-cut-by-fgets.so\n", -22, 0, 0, 0, 0, 0, 0,
		  NULL, NULL },
		{ __LINE__, "2000-1000 r-xp 00000000 00:00 0 /x", -22, 0, 0, 0, 0, 0, 0, NULL,
		  NULL }, /* end before start */
		{ __LINE__, "10000000000000000-1 r-xp 0 00:00 0 /x", -22, 0, 0, 0, 0, 0, 0, NULL,
		  NULL }, /* 65 bits */
		{ __LINE__, "1000-2000 rwxq 00000000 00:00 0 /x", -22, 0, 0, 0, 0, 0, 0, NULL,
		  NULL },
		{ __LINE__, "1000-2000 r-x 00000000 00:00 0 /x", -22, 0, 0, 0, 0, 0, 0, NULL,
		  NULL },
		{ __LINE__, "1000-2000 r-xp 0000000g 00:00 0 /x", -22, 0, 0, 0, 0, 0, 0, NULL,
		  NULL },
		{ __LINE__, "1000-2000 r-xp 00000000 1000:00 0 /x", -22, 0, 0, 0, 0, 0, 0, NULL,
		  NULL }, /* major > 12 bits */
		{ __LINE__, "1000-2000 r-xp 00000000 00:00 12a /x", -22, 0, 0, 0, 0, 0, 0, NULL,
		  NULL },
		{ __LINE__, "-1000-2000 r-xp 00000000 00:00 0 /x", -22, 0, 0, 0, 0, 0, 0, NULL,
		  NULL },
		{ __LINE__, "1000-2000 r-xp 00000000 00:00", -22, 0, 0, 0, 0, 0, 0, NULL, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char line[256];
		struct pmon__maps_line m;
		snprintf(line, sizeof(line), "%s", rows[i].text);
		int err = pmon__maps_parse_line(line, &m);
		if (err != rows[i].err)
			fail_msg("row at line %d: %d, expected %d", rows[i].line, err, rows[i].err);
		if (err)
			continue;
		if (m.start != rows[i].start || m.end != rows[i].end || m.pgoff != rows[i].pgoff ||
		    m.ino != rows[i].ino || m.maj != rows[i].maj || m.min != rows[i].min ||
		    strcmp(m.perms, rows[i].perms) || strcmp(m.name, rows[i].name))
			fail_msg("row at line %d: fields differ (name '%s')", rows[i].line, m.name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_procmaps__lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
