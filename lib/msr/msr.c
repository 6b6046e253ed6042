// SPDX-License-Identifier: MIT
/*
 * MSR access through the msr driver and the table of known MSRs
 * (pmon/msr.h). Addresses and fields: Intel SDM Vol. 4 (Model-Specific
 * Registers), Vol. 3B 21.2 (architectural perfmon), 17.16 (RDT), 18.26
 * (Pentium CESR); AMD APM Vol. 2 13.2 (PerfEvtSel/PerfCtr).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/cpu.h>
#include <pmon/msr.h>
#include <pmon/p5.h>

static const struct pmon_msr_field f_evtsel[] = {
	{ "EventSelect", 0, 7, "event code" },
	{ "UMask", 8, 15, "unit mask" },
	{ "USR", 16, 16, "count at CPL > 0" },
	{ "OS", 17, 17, "count at CPL 0" },
	{ "E", 18, 18, "edge detect" },
	{ "PC", 19, 19, "pin control" },
	{ "INT", 20, 20, "interrupt on overflow" },
	{ "AnyThread", 21, 21, "count on any thread of the core" },
	{ "EN", 22, 22, "enable" },
	{ "INV", 23, 23, "invert the counter mask" },
	{ "CMASK", 24, 31, "counter mask" },
	{ NULL, 0, 0, NULL },
};

static const struct pmon_msr_field f_fixed_ctrl[] = {
	{ "EN0", 0, 1, "fixed 0: 0 off, 1 OS, 2 USR, 3 all" },
	{ "AnyThr0", 2, 2, NULL },
	{ "PMI0", 3, 3, NULL },
	{ "EN1", 4, 5, "fixed 1" },
	{ "AnyThr1", 6, 6, NULL },
	{ "PMI1", 7, 7, NULL },
	{ "EN2", 8, 9, "fixed 2" },
	{ "AnyThr2", 10, 10, NULL },
	{ "PMI2", 11, 11, NULL },
	{ "EN3", 12, 13, "fixed 3" },
	{ "AnyThr3", 14, 14, NULL },
	{ "PMI3", 15, 15, NULL },
	{ NULL, 0, 0, NULL },
};

static const struct pmon_msr_field f_global_ctrl[] = {
	{ "PMC0", 0, 0, NULL },		  { "PMC1", 1, 1, NULL },     { "PMC2", 2, 2, NULL },
	{ "PMC3", 3, 3, NULL },		  { "PMC4", 4, 4, NULL },     { "PMC5", 5, 5, NULL },
	{ "PMC6", 6, 6, NULL },		  { "PMC7", 7, 7, NULL },     { "FIXED0", 32, 32, NULL },
	{ "FIXED1", 33, 33, NULL },	  { "FIXED2", 34, 34, NULL }, { "FIXED3", 35, 35, NULL },
	{ "PERF_METRICS", 48, 48, NULL }, { NULL, 0, 0, NULL },
};

static const struct pmon_msr_field f_perf_caps[] = {
	{ "LBR_FMT", 0, 5, "LBR format" },
	{ "PEBS_TRAP", 6, 6, NULL },
	{ "PEBS_ARCH_REG", 7, 7, NULL },
	{ "PEBS_REC_FMT", 8, 11, NULL },
	{ "SMM_FREEZE", 12, 12, NULL },
	{ "FW_WRITE", 13, 13, "full-width counter writes" },
	{ "PEBS_BASELINE", 14, 14, NULL },
	{ "PERF_METRICS_AVAILABLE", 15, 15, "RDPMC type 2000H allowed" },
	{ "PEBS_OUTPUT_PT", 16, 16, NULL },
	{ NULL, 0, 0, NULL },
};

/* The RMID fields of IA32_PQR_ASSOC and IA32_QM_EVTSEL are N =
 * ceil(log2(1 + CPUID.(0FH,0):EBX)) bits wide (SDM 17.16.6, 17.16.7; 10 on
 * the first parts, 12 on Zen 5's 4096 RMIDs), the bits above them up to 31
 * and 63 reserved: the table gives the whole room, rmid_fields[] narrows it
 * to N where the CPU is known (pmon_msr_decode_cpu()). */
static const struct pmon_msr_field f_pqr_assoc[] = {
	{ "RMID", 0, 31, "monitoring ID of this logical CPU" },
	{ "CLOS", 32, 63, "class of service (allocation)" },
	{ NULL, 0, 0, NULL },
};

static const struct pmon_msr_field f_qm_evtsel[] = {
	{ "EvtID", 0, 7, "1 L3 occupancy, 2 total bandwidth, 3 local bandwidth" },
	{ "RMID", 32, 63, NULL },
	{ NULL, 0, 0, NULL },
};

static const struct pmon_msr_field f_qm_ctr[] = {
	{ "Data", 0, 61, "monitored data, times the upscaling factor = bytes" },
	{ "Unavailable", 62, 62, "no data for this RMID and event" },
	{ "Error", 63, 63, "bad RMID or event" },
	{ NULL, 0, 0, NULL },
};

static const struct pmon_msr_field f_cesr[] = {
	{ "ES0", 0, 5, "event select, CTR0" },
	{ "CC0", 6, 8, "counter control, CTR0" },
	{ "PC0", 9, 9, "PM0 pin: 1 overflow, 0 increment" },
	{ "ES1", 16, 21, "event select, CTR1" },
	{ "CC1", 22, 24, "counter control, CTR1" },
	{ "PC1", 25, 25, "PM1 pin" },
	{ NULL, 0, 0, NULL },
};

static const struct pmon_msr_field f_amd_evtsel[] = {
	{ "EventSelect", 0, 7, "event code bits 7:0" },
	{ "UnitMask", 8, 15, NULL },
	{ "USR", 16, 16, NULL },
	{ "OS", 17, 17, NULL },
	{ "E", 18, 18, NULL },
	{ "INT", 20, 20, NULL },
	{ "EN", 22, 22, NULL },
	{ "INV", 23, 23, NULL },
	{ "CntMask", 24, 31, NULL },
	{ "EventSelectHi", 32, 35, "event code bits 11:8" },
	{ "GuestOnly", 40, 40, NULL },
	{ "HostOnly", 41, 41, NULL },
	{ NULL, 0, 0, NULL },
};

#define EVTSEL(n)                                                                                  \
	{                                                                                          \
		"IA32_PERFEVTSEL" #n, 0x186 + (n), "general-purpose event select " #n, f_evtsel    \
	}
#define PMC(n)                                                                                     \
	{                                                                                          \
		"IA32_PMC" #n, 0xc1 + (n), "general-purpose counter " #n, NULL                     \
	}
#define A_PMC(n)                                                                                   \
	{                                                                                          \
		"IA32_A_PMC" #n, 0x4c1 + (n),                                                      \
			"full-width alias of IA32_PMC" #n " (PERF_CAPABILITIES[13])", NULL         \
	}
#define FIXED(n)                                                                                   \
	{                                                                                          \
		"IA32_FIXED_CTR" #n, 0x309 + (n), "fixed-function counter " #n, NULL               \
	}
#define AMD_SEL(n)                                                                                 \
	{                                                                                          \
		"AMD_PERF_CTL" #n, 0xc0010200 + 2 * (n), "core event select " #n, f_amd_evtsel     \
	}
#define AMD_CTR(n)                                                                                 \
	{                                                                                          \
		"AMD_PERF_CTR" #n, 0xc0010201 + 2 * (n), "core counter " #n, NULL                  \
	}

static const struct pmon_msr_info table[] = {
	{ "IA32_TIME_STAMP_COUNTER", 0x10, "TSC (the Pentium's MSR 10H)", NULL },
	{ "CESR", 0x11, "Pentium control and event select", f_cesr },
	{ "CTR0", 0x12, "Pentium counter 0 (40 bits)", NULL },
	{ "CTR1", 0x13, "Pentium counter 1 (40 bits)", NULL },
	PMC(0),
	PMC(1),
	PMC(2),
	PMC(3),
	PMC(4),
	PMC(5),
	PMC(6),
	PMC(7),
	{ "IA32_MPERF", 0xe7, "maximum-frequency clock count", NULL },
	{ "IA32_APERF", 0xe8, "actual-frequency clock count", NULL },
	EVTSEL(0),
	EVTSEL(1),
	EVTSEL(2),
	EVTSEL(3),
	EVTSEL(4),
	EVTSEL(5),
	EVTSEL(6),
	EVTSEL(7),
	FIXED(0),
	FIXED(1),
	FIXED(2),
	FIXED(3),
	{ "MSR_PERF_METRICS", 0x329, "topdown metrics (RDPMC type 2000H)", NULL },
	{ "IA32_PERF_CAPABILITIES", 0x345, "performance monitoring capabilities", f_perf_caps },
	{ "IA32_FIXED_CTR_CTRL", 0x38d, "fixed-function counter control", f_fixed_ctrl },
	{ "IA32_PERF_GLOBAL_STATUS", 0x38e, "overflow status", f_global_ctrl },
	{ "IA32_PERF_GLOBAL_CTRL", 0x38f, "global enable of every counter", f_global_ctrl },
	{ "IA32_PERF_GLOBAL_OVF_CTRL", 0x390, "overflow status reset", f_global_ctrl },
	A_PMC(0),
	A_PMC(1),
	A_PMC(2),
	A_PMC(3),
	A_PMC(4),
	A_PMC(5),
	A_PMC(6),
	A_PMC(7),
	{ "IA32_QM_EVTSEL", 0xc8d, "RDT monitoring: event and RMID to read", f_qm_evtsel },
	{ "IA32_QM_CTR", 0xc8e, "RDT monitoring: the data", f_qm_ctr },
	{ "IA32_PQR_ASSOC", 0xc8f, "RMID and CLOS of this logical CPU", f_pqr_assoc },
	{ "AMD_PERFEVTSEL0", 0xc0010000, "legacy core event select 0", f_amd_evtsel },
	{ "AMD_PERFEVTSEL1", 0xc0010001, "legacy core event select 1", f_amd_evtsel },
	{ "AMD_PERFEVTSEL2", 0xc0010002, "legacy core event select 2", f_amd_evtsel },
	{ "AMD_PERFEVTSEL3", 0xc0010003, "legacy core event select 3", f_amd_evtsel },
	{ "AMD_PERFCTR0", 0xc0010004, "legacy core counter 0 (48 bits)", NULL },
	{ "AMD_PERFCTR1", 0xc0010005, "legacy core counter 1", NULL },
	{ "AMD_PERFCTR2", 0xc0010006, "legacy core counter 2", NULL },
	{ "AMD_PERFCTR3", 0xc0010007, "legacy core counter 3", NULL },
	AMD_SEL(0),
	AMD_CTR(0),
	AMD_SEL(1),
	AMD_CTR(1),
	AMD_SEL(2),
	AMD_CTR(2),
	AMD_SEL(3),
	AMD_CTR(3),
	AMD_SEL(4),
	AMD_CTR(4),
	AMD_SEL(5),
	AMD_CTR(5),
};

const struct pmon_msr_info *pmon_msr_table(size_t *n)
{
	*n = PMON_ARRAY_SIZE(table);
	return table;
}

const struct pmon_msr_info *pmon_msr_by_name(const char *name)
{
	for (size_t i = 0; i < PMON_ARRAY_SIZE(table); i++)
		if (!strcasecmp(table[i].name, name))
			return &table[i];
	if (!strcasecmp(name, "TSC"))
		return &table[0];
	return NULL;
}

const struct pmon_msr_info *pmon_msr_by_addr(uint32_t addr)
{
	for (size_t i = 0; i < PMON_ARRAY_SIZE(table); i++)
		if (table[i].addr == addr)
			return &table[i];
	return NULL;
}

int pmon_msr_parse_addr(const char *s, uint32_t *addr)
{
	const struct pmon_msr_info *m;
	uint64_t v;
	int err;

	if (!s || !*s)
		return pmon__err(-PMON_ERRNO__PARSE, "empty MSR address");
	if (isdigit((unsigned char)s[0])) {
		bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
		err = pmon__parse_u64(hex ? s + 2 : s, hex ? 16 : 10, &v);
		if (err || v > 0xffffffffULL)
			return pmon__err(-PMON_ERRNO__PARSE,
					 "MSR address '%s' is %s (MSRs are 32-bit addresses)", s,
					 err == -EINVAL ? "not a number" : "out of range");
		*addr = (uint32_t)v;
		return 0;
	}
	m = pmon_msr_by_name(s);
	if (!m)
		return pmon__err(-PMON_ERRNO__PARSE,
				 "'%s' is not an MSR pmon knows by name (give its address, e.g. "
				 "0x38f)",
				 s);
	*addr = m->addr;
	return 0;
}

/* The fields whose width CPUID enumerates (see f_pqr_assoc). */
static const struct {
	uint32_t addr;
	unsigned lo;
} rmid_fields[] = {
	{ 0xc8f, 0 }, /* IA32_PQR_ASSOC.RMID */
	{ 0xc8d, 32 }, /* IA32_QM_EVTSEL.RMID */
};

/* Bits of field @f of MSR @addr on @ci's CPU (NULL: unknown). */
static unsigned field_width(const struct pmon_cpu_info *ci, uint32_t addr,
			    const struct pmon_msr_field *f)
{
	unsigned w = f->hi - f->lo + 1;

	if (!ci || !ci->rdt.rmid_bits)
		return w;
	for (size_t i = 0; i < PMON_ARRAY_SIZE(rmid_fields); i++)
		if (rmid_fields[i].addr == addr && rmid_fields[i].lo == f->lo &&
		    ci->rdt.rmid_bits < w)
			return ci->rdt.rmid_bits;
	return w;
}

int pmon_msr_decode(uint32_t addr, uint64_t value, char *buf, size_t len)
{
	return pmon_msr_decode_cpu(NULL, addr, value, buf, len);
}

int pmon_msr_decode_cpu(const struct pmon_cpu_info *ci, uint32_t addr, uint64_t value, char *buf,
			size_t len)
{
	const struct pmon_msr_info *m = pmon_msr_by_addr(addr);
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	if (!m || !m->fields)
		return 0;
	for (const struct pmon_msr_field *f = m->fields; f->name && off < len; f++) {
		unsigned w = field_width(ci, addr, f);
		uint64_t v = (value >> f->lo) & (w >= 64 ? ~0ULL : (1ULL << w) - 1);
		int k = snprintf(buf + off, len - off, "%s%s=%#" PRIx64, off ? " " : "", f->name,
				 v);
		if (k < 0)
			return k;
		off += (size_t)k;
	}
	if (addr == PMON_P5_MSR_CESR && off < len) {
		int k = snprintf(buf + off, len - off, "\n");
		if (k > 0)
			off += (size_t)k;
		if (off < len) {
			k = pmon_p5_cesr_describe((uint32_t)value, buf + off, len - off);
			if (k > 0)
				off += (size_t)k;
		}
	}
	return (int)off;
}
/* Does @file (a modules list of /lib/modules/RELEASE) name the msr driver? */
static bool lists_msr(const char *file)
{
	char line[512];
	FILE *f = fopen(file, "re");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "arch/x86/kernel/msr.ko") != NULL;
	if (f)
		fclose(f);
	return found;
}

const char *pmon_msr_missing_why(char *buf, size_t len)
{
	struct utsname u;
	char dir[256], file[320];

	if (uname(&u)) {
		pmon__fmt(buf, len, "the msr driver is not loaded (as root: modprobe msr)");
		return buf;
	}
	pmon__fmt(dir, sizeof(dir), "/lib/modules/%s", u.release);
	pmon__fmt(file, sizeof(file), "%s/modules.builtin", dir);
	if (lists_msr(file)) {
		pmon__fmt(buf, len,
			  "the msr driver is built into this kernel: /dev/cpu/N/msr "
			  "should exist (is devtmpfs mounted on /dev?)");
		return buf;
	}
	pmon__fmt(file, sizeof(file), "%s/modules.dep", dir);
	if (lists_msr(file)) {
		pmon__fmt(buf, len, "the msr driver is not loaded (as root: modprobe msr)");
		return buf;
	}
	if (access(dir, F_OK)) {
		pmon__fmt(buf, len,
			  "this kernel (%s) has no module tree at %s, so no msr driver "
			  "can be loaded here",
			  u.release, dir);
		return buf;
	}
	pmon__fmt(buf, len, "this kernel (%s) has no msr driver (CONFIG_X86_MSR)", u.release);
	return buf;
}

static int open_dev(const char *device, int cpu, int flags, char *path, size_t plen)
{
	const char *d = device ? device : PMON_MSR_DEVICE;
	int fd;

	if (strstr(d, "%d")) {
		char fmt[512];
		/* Only one %d is allowed: build the path without a format string
		 * taken from the caller. */
		const char *p = strstr(d, "%d");
		if (strchr(p + 2, '%') || memchr(d, '%', (size_t)(p - d)))
			return pmon__err(-EINVAL, "device path '%s': one %%d at most", d);
		pmon__fmt(fmt, sizeof(fmt), "%.*s%d%s", (int)(p - d), d, cpu, p + 2);
		pmon__strlcpy(path, fmt, plen);
	} else {
		pmon__strlcpy(path, d, plen);
	}
	fd = open(path, flags | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	fd = -errno;
	if (fd == -ENOENT && !device) {
		char cpu_dir[64];
		pmon__fmt(cpu_dir, sizeof(cpu_dir), "/dev/cpu/%d", cpu);
		if (access(cpu_dir, F_OK))
			return pmon__err(-ENODEV, "CPU %d does not exist", cpu);
		char why[256];
		return pmon__err(-ENOENT, "%s does not exist: %s", path,
				 pmon_msr_missing_why(why, sizeof(why)));
	}
	if (fd == -EACCES || fd == -EPERM)
		return pmon__err(fd, "%s: permission denied: MSRs need root (CAP_SYS_RAWIO)", path);
	return pmon__err(fd, "%s: %s", path, strerror(-fd));
}

static const struct pmon__msr_ops *msr_ops;

/* Where MSR @addr lives in @fd: the msr driver's offset is the address
 * itself (arch/x86/kernel/msr.c msr_read(): reg = *ppos); in a regular file
 * standing in for it, 8 bytes per MSR, or IA32_PERFEVTSEL0 (186H) would
 * share 7 bytes with IA32_PERFEVTSEL1 (187H) and a write to one would
 * change the other -- something no CPU does, and that pmon's check of its
 * own event selects at stop would take for another user's write. */
static off_t msr_offset(int fd, uint32_t addr)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode) ? (off_t)addr * 8 : (off_t)addr;
}

void pmon__msr_set_ops(const struct pmon__msr_ops *ops)
{
	msr_ops = ops;
}

/* A model refuses as the msr driver does: -EIO where WRMSR/RDMSR #GPs. */
static int model_err(int err, bool wr, uint32_t addr, int cpu)
{
	if (err == -EIO)
		return pmon__err(-EIO,
				 "%s %#" PRIx32 " faulted on CPU %d: no such MSR, or a reserved "
				 "bit set",
				 wr ? "WRMSR" : "RDMSR", addr, cpu);
	return err ? pmon__err(err, "MSR %#" PRIx32 " on CPU %d: %s", addr, cpu, strerror(-err))
		   : 0;
}

int pmon_msr_read(const char *device, int cpu, uint32_t addr, uint64_t *value)
{
	char path[512];
	int fd;
	ssize_t n;

	if (msr_ops)
		return model_err(msr_ops->read(msr_ops->ctx, cpu, addr, value), false, addr, cpu);
	fd = open_dev(device, cpu, O_RDONLY, path, sizeof(path));
	if (fd < 0)
		return fd;
	n = pread(fd, value, sizeof(*value), msr_offset(fd, addr));
	close(fd);
	if (n == (ssize_t)sizeof(*value))
		return 0;
	if (n < 0 && errno == EIO)
		return pmon__err(-EIO,
				 "RDMSR %#" PRIx32 " faulted on CPU %d: this CPU (or the "
				 "hypervisor) has no such MSR",
				 addr, cpu);
	return pmon__err(n < 0 ? -errno : -EIO, "reading MSR %#" PRIx32 " from %s: %s", addr, path,
			 n < 0 ? strerror(errno)
			       : "short read (the file is too small: a file standing for the "
				 "device keeps each MSR at 8 x its address)");
}

int pmon_msr_write(const char *device, int cpu, uint32_t addr, uint64_t value)
{
	char path[512];
	int fd;
	ssize_t n;

	if (msr_ops)
		return model_err(msr_ops->write(msr_ops->ctx, cpu, addr, value), true, addr, cpu);
	fd = open_dev(device, cpu, O_WRONLY, path, sizeof(path));
	if (fd < 0)
		return fd;
	n = pwrite(fd, &value, sizeof(value), msr_offset(fd, addr));
	close(fd);
	if (n == (ssize_t)sizeof(value))
		return 0;
	if (n < 0 && errno == EIO)
		return pmon__err(-EIO,
				 "WRMSR %#" PRIx32 " faulted on CPU %d: no such MSR, or a "
				 "reserved bit set",
				 addr, cpu);
	return pmon__err(n < 0 ? -errno : -EIO, "writing MSR %#" PRIx32 " to %s: %s", addr, path,
			 n < 0 ? strerror(errno) : "short write");
}

int pmon__msr_log_write(struct pmon__msr_log *log, const char *device, int cpu, uint32_t addr,
			uint64_t v, bool restore)
{
	if (log->max && log->n >= log->max) {
		size_t keep = log->max / 4;
		memmove(log->rec, log->rec + (log->n - keep), keep * sizeof(*log->rec));
		log->dropped += log->n - keep;
		log->n = keep;
	}
	if (PMON_GROW(&log->rec, &log->cap, log->n + 1))
		return pmon__err(-ENOMEM, "out of memory for the MSR write log");
	log->rec[log->n++] = (struct pmon_msr_write_rec){ cpu, addr, v, restore };
	return pmon_msr_write(device, cpu, addr, v);
}
