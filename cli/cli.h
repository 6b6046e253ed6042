/* SPDX-License-Identifier: MIT */
/*
 * Private to the pmon tool: the subcommands' entry points, the documented
 * exit codes (docs/exit-codes.md), and the one-line error printer.
 */
#ifndef PMON_CLI_H
#define PMON_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum cli_exit {
	CLI_OK = 0,
	CLI_FAIL = 1, /* a runtime failure: I/O error, out of memory */
	CLI_USAGE = 2, /* bad input: option, event name, file contents */
	CLI_UNSUPPORTED = 3, /* not possible on this machine or with these rights */
};

/* Print "pmon: <message>" on one line to stderr; non-printable characters of
 * the message (from a garbage file, say) are shown as '?'. */
__attribute__((format(printf, 1, 2))) void cli_error(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void cli_warn(const char *fmt, ...);

/* Parse a non-negative decimal integer; false (and an error printed naming
 * @what) when @s is not one or exceeds @max. */
bool cli_parse_uint(const char *s, unsigned long max, const char *what, unsigned long *out);

/* A 64-bit value in @base; -EINVAL not a number, -ERANGE wider than 64 bits. */
int cli_parse_u64(const char *s, int base, uint64_t *out);

/* Output stream: stdout, or the file named by -o. */
FILE *cli_open_output(const char *path);
/* Close an output stream, reporting write errors. Return: CLI_OK or CLI_FAIL. */
int cli_close_output(FILE *f, const char *path);

int cmd_info(int argc, char **argv);
int cmd_cpuid(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_msr(int argc, char **argv);
int cmd_rdpmc(int argc, char **argv);
int cmd_rdt(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
/* Draw @log into @out (used by plot, stat --plot, rdt --plot); h 0: by series. */
int plot_log(const char *log, const char *out, unsigned w, unsigned h, const char *title);

#endif
