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
#include <sys/resource.h>

enum cli_exit {
	CLI_OK = 0,
	CLI_FAIL = 1, /* a runtime failure: I/O error, out of memory */
	CLI_USAGE = 2, /* bad input: option, event name, file contents */
	CLI_UNSUPPORTED = 3, /* not possible on this machine or with these rights */
};

/* @s as it may be printed on a terminal: control bytes and bytes that are
 * not UTF-8 made '?' (a string from a file: a symbol, a channel's name, a
 * brand string), in @buf. Return: @buf (NULL for NULL). */
const char *cli_printable(const char *s, char *buf, size_t len);
/* The library's error @err (-errno) in one line: its detail, or, where the
 * library left none (out of memory), strerror's words. */
void cli_lib_error(int err);
/* Print "pmon: <message>" on one line to stderr; non-printable characters of
 * the message (from a garbage file, say) are shown as '?'. */
__attribute__((format(printf, 1, 2))) void cli_error(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void cli_warn(const char *fmt, ...);
struct pmon_run;
/* A signal came while the run was being set up (Ctrl-C right at start): it
 * was passed on and ended the held command, so what failed to open on it
 * is no error. Return: 128 + the signal, the command reaped; 0 if none came. */
int cli_run_interrupted(struct pmon_run *run);
/* Append to a library message where to look ("(see 'pmon info')"): the
 * library never names a pmon command. cli_error() does it by itself. */
void cli_hint(char *buf, size_t len);

/* The exit code of an event list the library refused with @err: an event
 * of a core PMU this machine lacks (cycles-like names, cpu/.../) cannot be
 * counted here (CLI_UNSUPPORTED); any other name or syntax is bad input. */
int cli_event_error_code(int err);

/* Parse a non-negative decimal integer; false (and an error printed naming
 * @what) when @s is not one or exceeds @max. */
bool cli_parse_uint(const char *s, unsigned long max, const char *what, unsigned long *out);

/* A 64-bit value in @base; -EINVAL not a number, -ERANGE wider than 64 bits. */
int cli_parse_u64(const char *s, int base, uint64_t *out);

/* Output stream: stdout for NULL or "-", else what -o names, opened by
 * pmon_output__open() (include/pmon/output.h) with @flags: a regular file
 * is written to a temporary beside it and replaced at cli_close_output()
 * (PMON_OUTPUT_IN_PLACE: truncated and written where it is, for logs read
 * while written); a character device or FIFO is a stream where @flags has
 * PMON_OUTPUT_STREAM, else refused; nothing a user named is ever removed.
 * NULL after printing the one-line error. */
FILE *cli_open_output_as(const char *path, unsigned flags);
#define cli_open_output(path) cli_open_output_as(path, 1u /* PMON_OUTPUT_STREAM */)
/* Close an output stream, reporting write errors. A closed pipe (EPIPE:
 * `pmon ... | head`) is the reader's choice, not an error: no message, but
 * still CLI_FAIL (docs/exit-codes.md). A file written through a temporary
 * replaces the named one only when every write succeeded. Return: CLI_OK
 * or CLI_FAIL. */
int cli_close_output(FILE *f, const char *path);
/* The write to @f (from cli_open_output()) failed with errno @e: what
 * cli_close_output() says when a retried flush no longer tells (a write
 * larger than the buffer bypassed it). The first one counts. */
void cli_output_errno(FILE *f, int e);
/* Has writing @f failed (after flushing it)? A full disk or a closed file is
 * reported once, naming @path (NULL: standard output) and the reason; a
 * closed pipe silently. Commands that run something stop when it is true. */
bool cli_output_failed(FILE *f, const char *path);
/* Writing @f failed with errno @e (0: unknown; a retried flush then gives
 * the reason): reported once, as cli_output_failed() does, so the final
 * close of standard output says nothing more. */
void cli_output_error(FILE *f, const char *path, int e);
/* Is @fd the write end of a pipe or socket whose reader has gone? */
bool cli_reader_gone(int fd);
/* Can @path be opened as an output with @flags (as cli_open_output_as()),
 * before any work is done? pmon_output__check(): nothing is created; one
 * line naming @what ("-o", "--plot") when not. */
bool cli_check_output_as(const char *path, const char *what, unsigned flags);
#define cli_check_output_path(path, what) cli_check_output_as(path, what, 1u)
/* Whether output @out is the same file as input @in (links and other names
 * followed): said in one line naming @what ("-o", "--plot"), so the caller
 * refuses (exit 2) before writing over what it reads. */
bool cli_output_is_input(const char *out, const char *in, const char *what);
/* A command that failed after opening its output: the file named keeps
 * what it held (the temporary is removed); stdout is left alone. */
void cli_abandon_output(FILE *f);

/* Does @path name a picture pmon draws (.svg or .png, lib/plot's rule)?
 * One line printed when not. */
bool cli_plot_name_ok(const char *path);

struct pmon_cpuid;
/* The CPUID snapshot --cpuid-file @file or --cpu @cpu name (NULL, -1: this
 * CPU's). Return: the snapshot (pmon_cpuid__free() it), or NULL after one
 * line saying why, with the exit status in @rc (untouched otherwise). */
struct pmon_cpuid *cli_cpuid_snapshot(const char *file, int cpu, int *rc);
struct pmon_cpu_info;
/* The CPUID facts of the dump @file, or of the CPU this runs on when @file
 * is NULL. Return: true, or false after one line saying why. */
bool cli_cpu_decode(const char *file, struct pmon_cpu_info *ci);

/* A command's options as one table (git's parse-options): what each option
 * stores and its --help line; cli_parse_options() builds getopt_long()'s
 * tables and the --help text from it. Fill rows with the CLI_OPT_*() macros,
 * end with CLI_OPT_END(). */
enum cli_option_type {
	CLI_OPTION_END,
	CLI_OPTION_TEXT, /* a paragraph of --help, at its place in the table */
	CLI_OPTION_FLAG, /* bool *value = true */
	CLI_OPTION_SET_INT, /* int *value = defval */
	CLI_OPTION_STRING, /* const char **value = the argument: the last one wins */
	CLI_OPTION_UINT, /* unsigned long *value, in [min, max] */
	CLI_OPTION_CHOICE, /* int *value = the index of the argument in choices */
	CLI_OPTION_LIST, /* struct cli_list *value: each argument appended */
	CLI_OPTION_JOIN, /* const char **value: the arguments joined by commas (-e a -e b
			  * is -e a,b, as a comma list is given) */
	CLI_OPTION_CALLBACK, /* cb(): anything else, repeated options (-e a -e b) */
};
/* A repeatable option's values, in the order given (they point into argv);
 * free(v) when done. */
struct cli_list {
	char **v;
	size_t n;
};
/* Flags of a row. CLI_OPTARG: its value (it has an argname) may be left
 * out, --calibrate[=HZ]; the callback then gets NULL. */
#define CLI_OPTARG 1u

struct cli_option {
	enum cli_option_type type;
	int short_name; /* 'e', or 0: long only */
	const char *long_name; /* "event", or NULL: short only */
	void *value;
	const char *argname; /* the value in --help ("N", "FILE"); NULL: a flag */
	const char *help; /* its --help text ('\n' continues it); NULL: not listed */
	unsigned flags; /* CLI_OPTARG */
	int defval; /* CLI_OPTION_SET_INT */
	unsigned long min, max; /* CLI_OPTION_UINT: the error above max is cli_parse_uint()'s */
	const char *too_small; /* ... below min: "-I 5: <too_small>" */
	const char *const *choices; /* CLI_OPTION_CHOICE: NULL-terminated */
	/* Return CLI_OK, or the exit status after printing one line. */
	int (*cb)(const struct cli_option *opt, const char *arg);
};

/* The value's type is checked: a pointer of another type does not build. */
#define CLI_OPT_PTR_(type, v) ((void *)(1 ? (v) : (type *)0))
// clang-format off
#define CLI_OPT_TEXT(text) { .type = CLI_OPTION_TEXT, .help = (text) }
#define CLI_OPT_FLAG(s, l, v, h) { .type = CLI_OPTION_FLAG, .short_name = (s), \
	.long_name = (l), .value = CLI_OPT_PTR_(bool, v), .help = (h) }
#define CLI_OPT_SET_INT(s, l, v, i, h) { .type = CLI_OPTION_SET_INT, .short_name = (s), \
	.long_name = (l), .value = CLI_OPT_PTR_(int, v), .defval = (i), .help = (h) }
#define CLI_OPT_STRING(s, l, v, a, h) { .type = CLI_OPTION_STRING, .short_name = (s), \
	.long_name = (l), .value = CLI_OPT_PTR_(const char *, v), .argname = (a), .help = (h) }
#define CLI_OPT_UINT(s, l, v, a, mx, h) CLI_OPT_UINT_MIN(s, l, v, a, 0, mx, NULL, h)
#define CLI_OPT_UINT_MIN(s, l, v, a, mn, mx, small, h) { .type = CLI_OPTION_UINT, \
	.short_name = (s), .long_name = (l), .value = CLI_OPT_PTR_(unsigned long, v), \
	.argname = (a), .min = (mn), .max = (mx), .too_small = (small), .help = (h) }
#define CLI_OPT_CHOICE(s, l, v, a, ch, h) { .type = CLI_OPTION_CHOICE, .short_name = (s), \
	.long_name = (l), .value = CLI_OPT_PTR_(int, v), .argname = (a), .choices = (ch), \
	.help = (h) }
#define CLI_OPT_LIST(s, l, v, a, h) { .type = CLI_OPTION_LIST, .short_name = (s), \
	.long_name = (l), .value = CLI_OPT_PTR_(struct cli_list, v), .argname = (a), .help = (h) }
#define CLI_OPT_JOIN(s, l, v, a, h) { .type = CLI_OPTION_JOIN, .short_name = (s), \
	.long_name = (l), .value = CLI_OPT_PTR_(const char *, v), .argname = (a), .help = (h) }
#define CLI_OPT_CALLBACK(s, l, v, a, fn, h) { .type = CLI_OPTION_CALLBACK, .short_name = (s), \
	.long_name = (l), .value = (v), .argname = (a), .cb = (fn), .help = (h) }
#define CLI_OPT_END() { .type = CLI_OPTION_END }
// clang-format on

/* The rows several commands share. --cpu N: int *cpu, -1 when not given. */
int cli_opt_cpu(const struct cli_option *opt, const char *arg);
#define CLI_OPT_CPU(s, v, h) CLI_OPT_CALLBACK(s, "cpu", CLI_OPT_PTR_(int, v), "N", cli_opt_cpu, h)
#define CLI_OPT_CPUID_FILE(s, v, h) CLI_OPT_STRING(s, "cpuid-file", v, "FILE", h)
#define CLI_OPT_OUTPUT(v, a, h) CLI_OPT_STRING('o', "output", v, a, h)
/* --duration SECONDS: double *, positive (0.5 is fine), at most 1e7. */
int cli_opt_duration(const struct cli_option *opt, const char *arg);
/* --debug-dir D, --symfs D: const char **dir, a directory that exists. */
int cli_opt_debug_dir(const struct cli_option *opt, const char *arg);
/* Where the readers of recordings find symbols (report, annotate, script,
 * diff): the three rows of CLI_OPT_SYMBOLS(&struct cli_symbols). */
struct cli_symbols {
	const char *debug_dir, *symfs, *kallsyms;
};
#define CLI_OPT_SYMBOLS(v)                                                                         \
	CLI_OPT_CALLBACK(0, "debug-dir", CLI_OPT_PTR_(const char *, &(v)->debug_dir), "D",         \
			 cli_opt_debug_dir,                                                        \
			 "look for debuginfo by build id in D/.build-id/ first\n"                  \
			 "(then /usr/lib/debug): stripped or rebuilt binaries"),                   \
		CLI_OPT_CALLBACK(0, "symfs", CLI_OPT_PTR_(const char *, &(v)->symfs), "D",         \
				 cli_opt_debug_dir,                                                \
				 "the recorded binaries are under D (D/usr/bin/x for\n"            \
				 "/usr/bin/x), as perf's --symfs: another machine's files"),       \
		CLI_OPT_STRING(0, "kallsyms", &(v)->kallsyms, "FILE",                              \
			       "name kernel addresses from FILE (a copy of the recording\n"        \
			       "machine's /proc/kallsyms)")

enum {
	CLI_PARSE_STOP_AT_OPERAND = 1, /* getopt's '+': `pmon stat -e x -- cmd -e y` */
	CLI_PARSE_NO_OPERANDS = 2, /* an operand is an error */
};
/* Parse the options of command @cmd ("stat": messages name 'pmon stat
 * --help') by the table @opts, setting what each one names, in the order
 * given. -h/--help prints @usage (the synopsis lines), then @opts' TEXT rows
 * and option lines, on standard output. An unknown option, a missing or
 * extra value, a bad number: one line (cli_bad_option(), cli_parse_uint()),
 * exit status CLI_USAGE. Options and operands may mix unless @flags has
 * CLI_PARSE_STOP_AT_OPERAND; "--" ends the options either way.
 * Return: the index in @argv of the first operand (>= 1; @argc when none),
 * or minus the exit status the command returns (<= 0): 0 after --help. */
int cli_parse_options(const char *cmd, const char *usage, const struct cli_option *opts,
		      unsigned flags, int argc, char **argv);
/* After a command's operands: true when @argi is @argc, else one line
 * naming the operand there. */
bool cli_no_operands_at(const char *cmd, int argi, int argc, char **argv);
/* The --help text of cli_parse_options(), on @f. */
void cli_usage(FILE *f, const char *usage, const struct cli_option *opts);

/* --cleanup of an MSR user (stat --backend msr, rdt --msr): replay the
 * state file at @path (NULL or absent: nothing to do), listing each write
 * on @f; @who ("pmon stat") begins the summary lines. Return: CLI status. */
int cli_msr_cleanup(FILE *f, const char *who, const char *path);
/* @v with a comma between each group of three digits ("1,234,567"). */
void cli_group_digits(char *buf, size_t len, uint64_t v);

/* getopt_long()'s '?' (opterr is 0, cli/pmon.c): one line, "unknown option
 * '--x'" or "option '-e' needs a value", naming 'pmon @cmd --help'.
 * Return: CLI_USAGE. */
struct option;
int cli_bad_option(const char *cmd, char **argv, const char *shortopts,
		   const struct option *longopts);

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
int cmd_script(int argc, char **argv); /* in pmon-ui-report.so */
int cmd_diff(int argc, char **argv); /* in pmon-ui-report.so */
int cmd_trace(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_serve(int argc, char **argv); /* in pmon-serve.so */
/* The modules (cli/ui.c): one per set of heavy libraries, so that a command
 * maps only its own; cli/pmon.c's command table says which command is in
 * which. They bind to the process's libpmon and to these helpers. */
#define CLI_MODULE_UI "pmon-ui.so" /* top, plot; plot_log, trace_draw */
#define CLI_MODULE_REPORT "pmon-ui-report.so"
#define CLI_MODULE_ANNOTATE "pmon-ui-annotate.so"
#define CLI_MODULE_SERVE "pmon-serve.so"
/* pmon-ui-report.so's report of recording @path as plain rows, for
 * simulate --compare (cli/cmd-report.c). Return: 0 or -errno, detail set. */
struct pmon_sim_profile;
int report_sim_profile(const char *path, struct pmon_sim_profile *out);
/* Symbol @name of @module, loaded on first use; NULL with one line printed
 * naming @what and why. */
void *cli_module_symbol(const char *module, const char *name, const char *what);

/* Draw @log into @out (used by plot, stat --plot, rdt --plot); h 0: by series. */
int plot_log(const char *log, const char *out, unsigned w, unsigned h, const char *title);
/* pmon trace report --format svg|png: the trace @in's window [@from, @to)
 * (ns; @to UINT64_MAX: its end) as a timeline @width px wide (0: 1200),
 * drawn with cairo (pmon-ui.so), into @outpath (NULL: standard output).
 * Return: the exit status, the error printed. */
int trace_draw(const char *in, const char *outpath, bool png, uint64_t from, uint64_t to,
	       unsigned width);

#endif
