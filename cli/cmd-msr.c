// SPDX-License-Identifier: MIT
/*
 * pmon msr: the seeds' PMX (RDMSR/WRMSR) on Linux: read, write (with --yes,
 * printing before and after) and list model-specific registers, known ones
 * decoded field by field. Everything goes through libpmon's pmon/msr.h.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include <pmon/pmon.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon msr read ADDR [--cpu N | -a] [--device PATH]\n"
		"       pmon msr write ADDR VALUE [--cpu N] --yes [--device PATH]\n"
		"       pmon msr list\n\n"
		"ADDR is a number (0x38f) or a name ('pmon msr list'). Needs root and the msr\n"
		"driver (modprobe msr). --device PATH replaces /dev/cpu/%%d/msr (a file laid\n"
		"out the same way: 8 bytes at offset = address).\n");
}

static const char *msr_name(uint32_t addr)
{
	const struct pmon_msr_info *m = pmon_msr_by_addr(addr);

	return m ? m->name : "";
}

static void show(int cpu, uint32_t addr, uint64_t v)
{
	char dec[1024];

	pmon_msr_decode(addr, v, dec, sizeof(dec));
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
	static const struct option longopts[] = {
		{ "cpu", required_argument, NULL, 'c' },    { "all", no_argument, NULL, 'a' },
		{ "device", required_argument, NULL, 'd' }, { "yes", no_argument, NULL, 'y' },
		{ "help", no_argument, NULL, 'h' },	    { NULL, 0, NULL, 0 },
	};
	const char *device = NULL, *verb;
	unsigned long cpu = 0;
	bool all = false, yes = false;
	uint32_t addr;
	uint64_t v, before, after;
	int c, err;

	/* Options may come anywhere: getopt permutes, operands end up last. */
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:ah", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (!cli_parse_uint(optarg, 4095, "--cpu", &cpu))
				return CLI_USAGE;
			break;
		case 'a':
			all = true;
			break;
		case 'd':
			device = optarg;
			break;
		case 'y':
			yes = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		cli_error("give read, write or list (see 'pmon msr --help')");
		return CLI_USAGE;
	}
	verb = argv[optind++];
	if (!strcmp(verb, "list"))
		return do_list();
	if (strcmp(verb, "read") && strcmp(verb, "write")) {
		cli_error("'%s' is not an msr action (read, write, list)", verb);
		return CLI_USAGE;
	}
	if (optind >= argc) {
		cli_error("msr %s needs an MSR address or name", verb);
		return CLI_USAGE;
	}
	if (pmon_msr_parse_addr(argv[optind++], &addr)) {
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
	if (!strcmp(verb, "read")) {
		if (optind < argc) {
			cli_error("unexpected argument '%s'", argv[optind]);
			return CLI_USAGE;
		}
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
	if (optind >= argc) {
		cli_error("msr write needs a value");
		return CLI_USAGE;
	}
	const char *val = argv[optind++];
	bool hex = val[0] == '0' && (val[1] == 'x' || val[1] == 'X');
	err = cli_parse_u64(hex ? val + 2 : val, hex ? 16 : 10, &v);
	if (err) {
		cli_error("value '%s' %s", val,
			  err == -ERANGE ? "does not fit 64 bits" : "is not a number");
		return CLI_USAGE;
	}
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return CLI_USAGE;
	}
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
