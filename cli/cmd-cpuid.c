// SPDX-License-Identifier: MIT
/*
 * pmon cpuid: print the raw CPUID leaves in the dump format, so a user can
 * send their machine's description ('pmon info --cpuid-file' reads it back).
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include <pmon/pmon.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon cpuid [--cpu N | --cpuid-file FILE] [-o FILE]\n\n"
		"Prints one 'LLLLLLLL SS: EAX EBX ECX EDX' line per leaf and subleaf.\n"
		"  --cpu N            snapshot logical CPU N (/dev/cpu/N/cpuid, else pinned)\n"
		"  --cpuid-file FILE  re-print a dump (also 'cpuid -r' output) in pmon's format\n"
		"  -o FILE            write to FILE instead of standard output\n");
}

int cmd_cpuid(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "cpuid-file", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL, *outpath = NULL;
	long cpu = -1;
	unsigned long ul;
	struct pmon_cpuid *snap;
	FILE *out;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+c:f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (!cli_parse_uint(optarg, 4095, "--cpu", &ul))
				return CLI_USAGE;
			cpu = (long)ul;
			break;
		case 'f':
			file = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind < argc) {
		cli_error("unexpected argument '%s' (see 'pmon cpuid --help')", argv[optind]);
		return CLI_USAGE;
	}
	snap = file	   ? pmon_cpuid__new_file(file)
		: cpu >= 0 ? pmon_cpuid__new_cpu((int)cpu)
			   : pmon_cpuid__new_live();
	if (!snap) {
		cli_error("%s", pmon_errdetail()[0] ? pmon_errdetail() : strerror(errno));
		return CLI_USAGE;
	}
	out = cli_open_output(outpath);
	if (!out) {
		pmon_cpuid__free(snap);
		return CLI_FAIL;
	}
	rc = pmon_cpuid__write(snap, out) ? CLI_FAIL : CLI_OK;
	if (out != stdout && cli_close_output(out, outpath) != CLI_OK)
		rc = CLI_FAIL;
	pmon_cpuid__free(snap);
	return rc;
}
