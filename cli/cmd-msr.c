// SPDX-License-Identifier: MIT
/*
 * pmon msr: the seeds' PMX (RDMSR/WRMSR) on Linux: read, write (with --yes,
 * printing before and after) and list model-specific registers, known ones
 * decoded field by field. Everything goes through libpmon's pmon/msr.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include <pmon/pmon.h>

static const char *msr_name(uint32_t addr)
{
	const struct pmon_msr_info *m = pmon_msr_by_addr(addr);

	return m ? m->name : "";
}

/* Fields as wide as this CPU (or --cpuid-file's) enumerates them: the RMID
 * is ceil(log2(1 + CPUID.(0FH,0):EBX)) bits (SDM 17.16.6), not 10. */
static const struct pmon_cpu_info *show_ci;

static void show(int cpu, uint32_t addr, uint64_t v)
{
	char dec[1024];

	pmon_msr_decode_cpu(show_ci, addr, v, dec, sizeof(dec));
	printf("CPU%-3d %-26s %#010" PRIx32 " = 0x%016" PRIx64 "%s%s\n", cpu, msr_name(addr), addr,
	       v, dec[0] ? "  " : "", dec);
}

static int exit_for(int err)
{
	return err == -ENOENT || err == -EACCES || err == -EPERM || err == -EIO ? CLI_UNSUPPORTED
		: err == -ENODEV || err == -EINVAL				? CLI_USAGE
										: CLI_FAIL;
}

static int do_list(void)
{
	size_t n;
	const struct pmon_msr_info *t = pmon_msr_table(&n);

	for (size_t i = 0; i < n; i++)
		printf("%#010" PRIx32 "  %-26s %s\n", t[i].addr, t[i].name, t[i].desc);
	return CLI_OK;
}

int cmd_msr(int argc, char **argv)
{
	const char *device = NULL, *verb, *cpuid_file = NULL;
	struct pmon_cpu_info ci;
	unsigned long cpu = 0;
	bool all = false, yes = false;
	const struct cli_option options[] = {
		CLI_OPT_TEXT("ADDR is a number (0x38f) or a name ('pmon msr list'). Needs root and "
			     "the msr\ndriver (modprobe msr)."),
		CLI_OPT_UINT('c', "cpu", &cpu, "N", 4095, "on logical CPU N (default 0)"),
		CLI_OPT_FLAG('a', "all", &all, "read on every CPU"),
		CLI_OPT_STRING(0, "device", &device, "PATH",
			       "replaces /dev/cpu/%d/msr (or a regular file standing for\n"
			       "it: 8 bytes per MSR at offset 8 x address)"),
		CLI_OPT_FLAG(0, "yes", &yes, "write: yes, change the machine"),
		CLI_OPT_CPUID_FILE(0, &cpuid_file,
				   "decode fields as that dump's CPU enumerates them\n"
				   "(the RMID width)"),
		CLI_OPT_END(),
	};
	uint32_t addr;
	uint64_t v, before, after;
	int err;
	/* Options may come anywhere: getopt permutes, operands end up last. */
	int argi = cli_parse_options(
		"msr",
		"usage: pmon msr read ADDR [--cpu N | -a] [--device PATH] [--cpuid-file FILE]\n"
		"       pmon msr write ADDR VALUE [--cpu N] --yes [--device PATH]\n"
		"       pmon msr list",
		options, 0, argc, argv);

	if (argi <= 0)
		return -argi;
	if (argi >= argc) {
		cli_error("give read, write or list (see 'pmon msr --help')");
		return CLI_USAGE;
	}
	verb = argv[argi++];
	if (!strcmp(verb, "list"))
		return do_list();
	if (strcmp(verb, "read") && strcmp(verb, "write")) {
		cli_error("'%s' is not an msr action (read, write, list)", verb);
		return CLI_USAGE;
	}
	if (argi >= argc) {
		cli_error("msr %s needs an MSR address or name", verb);
		return CLI_USAGE;
	}
	if (pmon_msr_parse_addr(argv[argi++], &addr)) {
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
	if (cpuid_file) {
		if (!cli_cpu_decode(cpuid_file, &ci))
			return CLI_USAGE;
		show_ci = &ci;
	} else {
		/* This CPU; one that cannot be decoded shows the whole fields. */
		struct pmon_cpuid *snap = pmon_cpuid__new_live();
		if (snap && !pmon_cpu_decode(snap, &ci))
			show_ci = &ci;
		pmon_cpuid__free(snap);
	}
	if (!strcmp(verb, "read")) {
		if (!cli_no_operands_at("msr", argi, argc, argv))
			return CLI_USAGE;
		long ncpu = all ? sysconf(_SC_NPROCESSORS_CONF) : 1;
		for (long i = 0; i < ncpu; i++) {
			int k = all ? (int)i : (int)cpu;
			err = pmon_msr_read(device, k, addr, &v);
			if (err) {
				cli_error("%s", pmon_errdetail());
				return exit_for(err);
			}
			show(k, addr, v);
		}
		return CLI_OK;
	}
	/* write */
	if (argi >= argc) {
		cli_error("msr write needs a value");
		return CLI_USAGE;
	}
	const char *val = argv[argi++];
	bool hex = val[0] == '0' && (val[1] == 'x' || val[1] == 'X');
	err = cli_parse_u64(hex ? val + 2 : val, hex ? 16 : 10, &v);
	if (err) {
		cli_error("value '%s' %s", val,
			  err == -ERANGE ? "does not fit 64 bits" : "is not a number");
		return CLI_USAGE;
	}
	if (!cli_no_operands_at("msr", argi, argc, argv))
		return CLI_USAGE;
	if (all) {
		cli_error("msr write takes one --cpu, not -a");
		return CLI_USAGE;
	}
	if (!yes) {
		cli_error("writing an MSR changes the machine: add --yes to write %#" PRIx64
			  " to %s%s%#" PRIx32 " on CPU %lu",
			  v, msr_name(addr), msr_name(addr)[0] ? " " : "", addr, cpu);
		return CLI_USAGE;
	}
	err = pmon_msr_read(device, (int)cpu, addr, &before);
	if (!err)
		err = pmon_msr_write(device, (int)cpu, addr, v);
	if (!err)
		err = pmon_msr_read(device, (int)cpu, addr, &after);
	if (err) {
		cli_error("%s", pmon_errdetail());
		return exit_for(err);
	}
	printf("before: ");
	show((int)cpu, addr, before);
	printf("after:  ");
	show((int)cpu, addr, after);
	return CLI_OK;
}
