// SPDX-License-Identifier: MIT
/*
 * Why a file is not the recording or trace a reader was given: a directory,
 * a device or FIFO, an empty file, perf's recording, or pmon's other format
 * (issue #14.11). One place for every reader (pmon report, annotate, trace
 * report, simulate --compare through report), so each says the same thing
 * and says what the file is. The library names no pmon command (issue
 * #11): the tool adds which one reads it (cli_hint(), cli/util.c).
 * Also the one safe open of a file named by outside input (a recording's
 * module paths, a JIT's perf map, an ELF file): regular files only, so a
 * FIFO never blocks a reader (issue #25 moved it here from lib/report).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* The formats' first 8 bytes: PMON_DATA_MAGIC (lib/sample/datafile.h) and
 * PMON_TRACE_MAGIC (lib/trace/tracefile.h); t2000 checks each reader names
 * the other's file, so a change there shows. */
static const struct {
	const char magic[9];
	const char *name; /* "a pmon recording" */
} pmon_formats[] = {
	[PMON__FILE_RECORDING] = { "PMONDATA", "a pmon recording" },
	[PMON__FILE_TRACE] = { "PMONTRC1", "a pmon trace" },
	[PMON__FILE_RECORDING_ANY] = { "PMONDATA", "a pmon recording" },
};

/* perf's file header starts with the u64 "PERFILE2" (tools/perf/util/
 * header.c, __perf_magic2), stored in the writer's byte order, so a file
 * from a big-endian machine reads "2ELIFREP"; version 1 wrote "PERFFILE".
 * In pipe mode (`perf record -o -`) the header is struct
 * perf_pipe_file_header, the same magic then its size, 16 (check_magic_endian
 * and perf_header__read_pipe in the same file). */
static int perf_kind(const unsigned char *h, size_t n)
{
	uint64_t size = 0;

	if (n < 8 ||
	    (memcmp(h, "PERFILE2", 8) && memcmp(h, "2ELIFREP", 8) && memcmp(h, "PERFFILE", 8)))
		return 0;
	if (n >= 16)
		memcpy(&size, h + 8, 8);
	return size == 16 || size == 16ull << 56 ? 2 : 1;
}

int pmon__file_check(int fd, const char *path, enum pmon__file_format want)
{
	const char *name = pmon_formats[want].name;
	unsigned char h[16];
	struct stat st;
	char subject[4200];
	ssize_t n;

	/* "x.data: ..." for a recording (report's form), "'x' is ..." for a
	 * trace (trace's form), so the messages read as before. */
	if (want != PMON__FILE_TRACE)
		pmon__fmt(subject, sizeof(subject), "%s:", path);
	else
		pmon__fmt(subject, sizeof(subject), "'%s' is", path);
	if (fstat(fd, &st))
		return pmon__err(-errno, "cannot read '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return pmon__err(-PMON_ERRNO__PARSE, "%s a directory, not %s", subject, name);
	if (!S_ISREG(st.st_mode))
		return pmon__err(-PMON_ERRNO__PARSE, "%s not a regular file, so not %s", subject,
				 name);
	n = pread(fd, h, sizeof(h), 0);
	if (n < 0)
		return pmon__err(-errno, "cannot read '%s': %s", path, strerror(errno));
	if (n >= 8 && !memcmp(h, pmon_formats[want].magic, 8))
		return 0;
	if (n == 0)
		return pmon__err(-PMON_ERRNO__PARSE, "%s an empty file, not %s", subject, name);
	int perf = perf_kind(h, (size_t)n);
	if (perf && want == PMON__FILE_RECORDING_ANY)
		return 0; /* the recording reader reads it (sample/perfdata.c) */
	if (perf)
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s perf's recording%s, not %s: 'perf report -i %s' or "
				 "'perf script -i %s' reads it",
				 subject, perf == 2 ? " in pipe mode" : "", name, path, path);
	for (size_t i = 0; i < PMON_ARRAY_SIZE(pmon_formats); i++)
		if (i != (size_t)want && i != PMON__FILE_RECORDING_ANY && n >= 8 &&
		    !memcmp(h, pmon_formats[i].magic, 8))
			return pmon__err(-PMON_ERRNO__PARSE, "%s %s, not %s", subject,
					 pmon_formats[i].name, name);
	return pmon__err(-PMON_ERRNO__PARSE, "%s not %s (no %s header)", subject, name,
			 pmon_formats[want].magic);
}

/* The one way an input file is opened: read-only, non-blocking (a FIFO
 * must not hang the open), no controlling terminal, close-on-exec. */
static int open_input(const char *path, bool nofollow)
{
	int fd = open(path,
		      O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));

	return fd < 0 ? -errno : fd;
}

int pmon__open_regular(const char *path, bool nofollow)
{
	struct stat st;
	int fd = open_input(path, nofollow);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int pmon__open_format(const char *path, enum pmon__file_format want)
{
	int fd = open_input(path, false), err;

	if (fd < 0)
		return pmon__err(fd, "%s: %s", path, strerror(-fd));
	if ((err = pmon__file_check(fd, path, want))) {
		close(fd);
		return err;
	}
	return fd;
}
