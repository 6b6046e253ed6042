// SPDX-License-Identifier: MIT
/*
 * pmon cpuid: print the raw CPUID leaves in the dump format, so a user can
 * send their machine's description ('pmon info --cpuid-file' reads it back).
 */

#include "cli.h"
#include <pmon/pmon.h>

int cmd_cpuid(int argc, char **argv)
{
	const char *file = NULL, *outpath = NULL;
	int cpu = -1;
	const struct cli_option options[] = {
		CLI_OPT_TEXT(
			"Prints one 'LLLLLLLL SS: EAX EBX ECX EDX' line per leaf and subleaf."),
		CLI_OPT_CPU('c', &cpu, "snapshot logical CPU N (/dev/cpu/N/cpuid, else pinned)"),
		CLI_OPT_CPUID_FILE('f', &file,
				   "re-print a dump (or 'cpuid -r' output) in pmon's format"),
		CLI_OPT_OUTPUT(&outpath, "FILE", "write to FILE instead of standard output"),
		CLI_OPT_END(),
	};
	struct pmon_cpuid *snap;
	FILE *out;
	int rc = cli_parse_options(
		"cpuid", "usage: pmon cpuid [--cpu N | --cpuid-file FILE] [-o FILE]", options,
		CLI_PARSE_STOP_AT_OPERAND | CLI_PARSE_NO_OPERANDS, argc, argv);

	if (rc <= 0)
		return -rc;
	snap = cli_cpuid_snapshot(file, cpu, &rc);
	if (!snap)
		return rc;
	out = cli_open_output(outpath);
	if (!out) {
		pmon_cpuid__free(snap);
		return CLI_USAGE;
	}
	rc = pmon_cpuid__write(snap, out) ? CLI_FAIL : CLI_OK;
	if (out != stdout && cli_close_output(out, outpath) != CLI_OK)
		rc = CLI_FAIL;
	pmon_cpuid__free(snap);
	return rc;
}
