// SPDX-License-Identifier: MIT
/*
 * pmon: the command table and the setup every subcommand shares (git's
 * builtin table, perf.c). Each subcommand lives in cli/cmd-<name>.c and uses
 * only libpmon's public headers.
 */
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include <pmon/pmon.h>

/* The one command table: a command is built in (fn) or in a module that
 * cli/ui.c loads on first use, where its entry point is cmd_<name>. */
struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv); /* NULL: in @module */
	const char *module;
	const char *help;
};

static const struct cmd commands[] = {
	{ "info", cmd_info, NULL, "what this CPU and kernel can count, and why not" },
	{ "cpuid", cmd_cpuid, NULL, "print the raw CPUID leaves as a dump file" },
	{ "stat", cmd_stat, NULL, "run a command and count its events (EMON)" },
	{ "list", cmd_list, NULL, "list the event names pmon accepts, and which count here" },
	{ "bench", cmd_bench, NULL, "time a snippet of assembly or a C function (RDTSC, n vs 2n)" },
	{ "rdpmc", cmd_rdpmc, NULL, "execute RDPMC by the SDM's rules, and explain why it faults" },
	{ "msr", cmd_msr, NULL, "read, write and decode model-specific registers (PMX)" },
	{ "record", cmd_record, NULL, "sample where events happen (VTune EBS, Sample After N)" },
	{ "report", NULL, CLI_MODULE_REPORT,
	  "where a recording's samples fell; flame graph, pprof, speedscope" },
	{ "script", NULL, CLI_MODULE_REPORT,
	  "list a recording's samples one a line, as perf script does" },
	{ "diff", NULL, CLI_MODULE_REPORT,
	  "compare two recordings by symbol or DSO; differential flame graph" },
	{ "annotate", NULL, CLI_MODULE_ANNOTATE,
	  "a sampled function's instructions with samples and source" },
	{ "top", NULL, CLI_MODULE_UI, "live event rates with a trace (PMON, MTPM, P5MON)" },
	{ "plot", NULL, CLI_MODULE_UI, "draw an interval log (stat -I, rdt) as SVG or PNG" },
	{ "simulate", cmd_simulate, NULL,
	  "simulate events per instruction, no PMU needed (callgrind)" },
	{ "trace", cmd_trace, NULL, "trace timestamped hooks on channels (Soft Logic Analyzer)" },
	{ "rdt", cmd_rdt, NULL,
	  "cache occupancy and memory bandwidth per task (CMT/MBM, resctrl)" },
	{ "serve", NULL, CLI_MODULE_SERVE,
	  "export counters to Prometheus and CPU profiles to pprof (HTTP)" },
};

#define USAGE "usage: pmon [--version] [--help] <command> [<args>]"

/* What the first operand of a command may be: its subcommands, each with
 * its own options (pmon trace report), or its actions (pmon msr read). For
 * the man pages and shell completion (pmon --options-json). */
static const char *const words[][2] = {
	{ "msr", "read write list" },
	{ "rdt", "info" },
	{ "trace", "report" },
};

/* `pmon --options-json`: the command table, hidden, as each command's
 * `--options-json` is (cli/options.c). */
static int dump_commands(void)
{
	json_t *cmds = json_array(), *doc;

	for (size_t i = 0; cmds && i < sizeof(commands) / sizeof(commands[0]); i++) {
		const char *w = "";
		for (size_t j = 0; j < sizeof(words) / sizeof(words[0]); j++)
			if (!strcmp(words[j][0], commands[i].name))
				w = words[j][1];
		json_array_append_new(cmds,
				      json_pack("{ss ss ss}", "name", commands[i].name, "help",
						commands[i].help, "words", w));
	}
	doc = cmds ? json_pack("{ss ss so}", "command", "", "usage", USAGE, "commands", cmds)
		   : NULL;
	if (!doc || json_dumpf(doc, stdout, JSON_INDENT(1)) || putchar('\n') == EOF) {
		json_decref(doc);
		cli_error("cannot write the command table");
		return CLI_FAIL;
	}
	json_decref(doc);
	return cli_close_output(stdout, NULL);
}

/* The entry point of @c: built in, or from its module (cli/ui.c). */
static int (*cmd_fn(const struct cmd *c))(int, char **)
{
	char sym[32], what[48];

	if (c->fn)
		return c->fn;
	snprintf(sym, sizeof(sym), "cmd_%s", c->name);
	snprintf(what, sizeof(what), "'pmon %s'", c->name);
	return (int (*)(int, char **))cli_module_symbol(c->module, sym, what);
}

static void usage(FILE *f)
{
	fprintf(f, USAGE "\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f,
		"\n'pmon <command> --help' describes a command. Exit codes: docs/exit-codes.md\n");
}

int main(int argc, char **argv)
{
	const char *name;
	int rc;

	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	/* The user's character set and message language only (git does the
	 * same): numbers are printed and parsed in the C locale everywhere, so
	 * logs and CSV read the same whatever LC_NUMERIC says. */
	setlocale(LC_CTYPE, "");
	setlocale(LC_MESSAGES, "");
	/* A closed pipe is the end of the output, not a reason to die with the
	 * command still running: writes fail with EPIPE, each command stops its
	 * child, cleans up and exits 1 (docs/exit-codes.md). Children get the
	 * default back (pmon_run__new()). */
	signal(SIGPIPE, SIG_IGN);
	/* An output being written goes to a temporary beside the file named
	 * (pmon/output.h): a pmon ended by a signal it does not handle itself,
	 * or exiting early, leaves none behind. */
	pmon_output_cleanup_on_signals();
	/* getopt's own messages are two lines; cli_bad_option() says one. */
	opterr = 0;
	name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		if (argc > 2 && strcmp(name, "help") == 0) {
			char *hargv[] = { argv[2], "--help", NULL };
			for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
				if (!strcmp(commands[i].name, argv[2])) {
					int (*fn)(int, char **) = cmd_fn(&commands[i]);
					return fn ? fn(2, hargv) : CLI_UNSUPPORTED;
				}
		}
		usage(stdout);
		return cli_close_output(stdout, NULL);
	}
	if (!strcmp(name, "--options-json") && argc == 2)
		return dump_commands();
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("pmon %s (libpmon %s)\n", PMON_VERSION_STRING, pmon_version());
		return cli_close_output(stdout, NULL);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, name))
			continue;
		int (*fn)(int, char **) = cmd_fn(&commands[i]);
		if (!fn)
			return CLI_UNSUPPORTED;
		rc = fn(argc - 1, argv + 1);
		/* A full disk or closed pipe must not pass for success. A
		 * command that failed has said why, so its stdout is not
		 * reported twice. */
		if (rc != CLI_OK)
			fflush(stdout);
		else if (cli_close_output(stdout, NULL) != CLI_OK)
			rc = CLI_FAIL;
		return rc;
	}
	cli_error("'%s' is not a pmon command (see 'pmon --help')", name);
	return CLI_USAGE;
}
