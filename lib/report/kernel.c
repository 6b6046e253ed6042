// SPDX-License-Identifier: MIT
/*
 * Which kernel symbols name a recording's kernel addresses, and where
 * perf's build-id cache keeps a recorded file (lib/report/ctx.h).
 *
 * A perf.data made on another machine, or before a kernel update, holds
 * addresses of a kernel this machine does not run: this machine's
 * /proc/kallsyms would name them wrongly and confidently. perf's rule
 * (tools/perf/util/symbol.c, dso__load_kernel_sym() and
 * dso__find_kallsyms()): the running kernel's symbols only when its build
 * id (/sys/kernel/notes, sysfs__read_build_id()) is the one the recording
 * states for [kernel.kallsyms]; else the copy of kallsyms the build-id
 * cache keeps for that build id (perf record puts it there, perf archive
 * carries it to other machines); else none.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"
#include "report/ctx.h"
#include "sample/reader.h"

/* NT_GNU_BUILD_ID (elf.h): the note the kernel's build id is. */
#define NOTE_GNU_BUILD_ID 3

/*
 * The build id in a buffer of ELF notes ({ u32 namesz, descsz, type; name,
 * desc, each padded to 4 bytes }, the layout of /sys/kernel/notes): the
 * descriptor of the first "GNU" note of type 3, at most 20 bytes. Return:
 * its size, 0 if none.
 */
size_t pmon__notes_build_id(const uint8_t *b, size_t n, uint8_t id[20])
{
	size_t at = 0;

	while (n - at >= 12) {
		uint32_t namesz = pmon__u32_at(b + at), descsz = pmon__u32_at(b + at + 4);
		uint32_t type = pmon__u32_at(b + at + 8);
		size_t name = at + 12, pname = ((size_t)namesz + 3) & ~(size_t)3;
		size_t pdesc = ((size_t)descsz + 3) & ~(size_t)3;
		if (pname > n - name || pdesc > n - name - pname)
			return 0; /* a note cut short: nothing after it is trusted */
		if (type == NOTE_GNU_BUILD_ID && namesz == 4 && !memcmp(b + name, "GNU", 4) &&
		    descsz && descsz <= 20) {
			memcpy(id, b + name + pname, descsz);
			return descsz;
		}
		at = name + pname + pdesc;
	}
	return 0;
}

/* The running kernel's build id; 0 where /sys/kernel/notes says none. */
static size_t running_build_id(uint8_t id[20])
{
	uint8_t buf[4096];
	size_t len = 0;
	int fd = pmon__open_regular("/sys/kernel/notes", false);

	if (fd < 0)
		return 0;
	for (ssize_t got; len < sizeof(buf) && (got = read(fd, buf + len, sizeof(buf) - len));) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	return pmon__notes_build_id(buf, len, id);
}

/* perf's cache: $PERF_BUILDID_DIR, else ~/.debug (perf's buildid.dir). */
static const char *cache_root(char *buf, size_t n)
{
	const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");

	if (env && env[0])
		return env;
	if (!home || !home[0])
		return NULL;
	pmon__fmt(buf, n, "%s/.debug", home);
	return buf;
}

/*
 * The cached copy of the file with build id @bid: perf keeps it as
 * ROOT/.build-id/XX/REST, a link to ROOT/PATH/HEX/, a directory holding it
 * as @leaf ("elf" a binary, "kallsyms" the kernel's symbols, "vdso" the
 * vDSO, "debug" debuginfo); perf before 4.7 linked .build-id/XX/REST to
 * the file itself, taken where @leaf is "elf". Return: true with the path
 * in @out when such a regular file exists.
 */
bool pmon__cache_file(const uint8_t *bid, size_t bidlen, const char *leaf, char *out, size_t n)
{
	char root[4096], hex[41];
	struct stat st;
	const char *r;

	if (!bidlen || bidlen > 20 || !(r = cache_root(root, sizeof(root))))
		return false;
	for (size_t i = 0; i < bidlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	pmon__fmt(out, n, "%s/.build-id/%.2s/%s/%s", r, hex, hex + 2, leaf);
	if (!stat(out, &st) && S_ISREG(st.st_mode))
		return true;
	pmon__fmt(out, n, "%s/.build-id/%.2s/%s", r, hex, hex + 2);
	return !strcmp(leaf, "elf") && !stat(out, &st) && S_ISREG(st.st_mode);
}

static void hexs(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n && i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	out[2 * (n < 20 ? n : 20)] = '\0';
}

/* Name the kernel's addresses from the kallsyms file @path. */
static int use_file(struct ctx *x, const char *path, const char *what)
{
	int err = pmon__ksyms_load(path, &x->kfile);

	if (err)
		return pmon__err(err, "%s '%s': %s", what, path, strerror(-err));
	x->kernel_from = PMON__KSYMS_FILE;
	return 0;
}

int pmon__kernel_pick(struct ctx *x, const struct pmon__rec_reader *rd, const char *kallsyms)
{
	const struct pmon__perf_info *pi = pmon__rec_reader_perf_info(rd);
	uint8_t id[20] = { 0 };
	char path[4300], want[41], have[41];
	struct utsname u;

	x->kernel_from = PMON__KSYMS_PROC;
	if (kallsyms && kallsyms[0]) /* the user's word (perf report --kallsyms) */
		return use_file(x, kallsyms, "--kallsyms");
	if (x->nfk || !pi) /* pmon's recordings carry their kernel's symbols */
		return 0;
	if (pi->kernel_build_id_size) {
		size_t n = running_build_id(id);
		if (n == pi->kernel_build_id_size && !memcmp(id, pi->kernel_build_id, n))
			return 0;
		if (pmon__cache_file(pi->kernel_build_id, pi->kernel_build_id_size, "kallsyms",
				     path, sizeof(path)) &&
		    !use_file(x, path, "kallsyms"))
			return 0;
		hexs(pi->kernel_build_id, pi->kernel_build_id_size, want);
		hexs(id, n, have);
		pmon__fmt(x->kernel_note, sizeof(x->kernel_note),
			  "the recording's kernel (build id %s) is not the one running here (%s): "
			  "its addresses are not named; --kallsyms FILE or perf archive's "
			  "~/.debug names them",
			  want, n ? have : "none known");
	} else if (pi->osrelease[0] && !uname(&u) && strcmp(pi->osrelease, u.release)) {
		pmon__fmt(x->kernel_note, sizeof(x->kernel_note),
			  "the recording's kernel (%.64s) is not the one running here (%.64s): "
			  "its addresses are not named; --kallsyms FILE names them",
			  pi->osrelease, u.release);
	} else {
		return 0; /* nothing says it is another kernel (pipe mode, old perf) */
	}
	x->kernel_from = PMON__KSYMS_NONE;
	return 0;
}
