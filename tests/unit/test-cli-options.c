// SPDX-License-Identifier: MIT
/*
 * cli/options.c: the commands' option tables. Every kind of row, repeated
 * options, the one-line errors (exit status 2), "--" and the stop at the
 * first operand, and the --help text generated from the table.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../cli/cli.h"

/* What one parse stored. */
static struct {
	bool verbose;
	const char *output;
	unsigned long count, level;
	int mode, cpu, format;
	char events[64]; /* -e a -e b: "a,b" */
	unsigned long calibrate; /* --calibrate: 1000, --calibrate=N: N */
	bool calibrate_given;
	struct cli_list paths; /* -I a --include b */
	const char *kinds; /* -k a --kind b,c: "a,b,c" */
} st;

static int add_event(const struct cli_option *opt, const char *arg)
{
	char *buf = opt->value;
	size_t used = strlen(buf);

	if (!arg[0]) {
		cli_error("-e '': no event named");
		return CLI_USAGE;
	}
	snprintf(buf + used, sizeof(st.events) - used, "%s%s", used ? "," : "", arg);
	return CLI_OK;
}

static int calibrate(const struct cli_option *opt, const char *arg)
{
	st.calibrate_given = true;
	*(unsigned long *)opt->value = 1000;
	return arg ? cli_parse_uint(arg, 100000, "--calibrate", opt->value) ? CLI_OK : CLI_USAGE
		   : CLI_OK;
}

#define USAGE "usage: pmon t [-v] [-o FILE] [-n N] [-- command]"

static const char *const formats[] = { "text", "json", "csv", NULL };

static const struct cli_option *table(void)
{
	static struct cli_option opts[20];
	const struct cli_option rows[] = {
		CLI_OPT_TEXT("A test command."),
		CLI_OPT_FLAG('v', "verbose", &st.verbose, "say more"),
		CLI_OPT_OUTPUT(&st.output, "FILE", "write to FILE\ninstead of standard output"),
		CLI_OPT_UINT_MIN('n', "count", &st.count, "N", 1, 100, "at least 1", "N times"),
		CLI_OPT_UINT(0, "level", &st.level, "L", 5, "how deep"),
		CLI_OPT_UINT(0, "level-alias", &st.level, "L", 5, NULL), /* not listed */
		CLI_OPT_CALLBACK('e', "event", st.events, "E", add_event, "an event; again: more"),
		CLI_OPT_CALLBACK(0, "calibrate", &st.calibrate, "HZ", calibrate, "calibrate"),
		CLI_OPT_SET_INT(0, "mode-a", &st.mode, 1, "mode a"),
		CLI_OPT_SET_INT(0, "mode-b", &st.mode, 2, "mode b"),
		CLI_OPT_CPU('c', &st.cpu, "on CPU N"),
		CLI_OPT_CHOICE(0, "format", &st.format, "text|json|csv", formats, "the format"),
		CLI_OPT_LIST('I', "include", &st.paths, "DIR", "look in DIR too; again: more"),
		CLI_OPT_JOIN('k', "kind", &st.kinds, "K", "kinds, comma-separated; again: more"),
		CLI_OPT_TEXT("The end."),
		CLI_OPT_END(),
	};
	memcpy(opts, rows, sizeof(rows));
	opts[7].flags = CLI_OPTARG; /* --calibrate[=HZ] */
	return opts;
}

/* Parse "t @args..." with @flags; its standard output and error in @out
 * and @err. Return: cli_parse_options()'s value; @argv the (permuted) argv. */
static int parse(unsigned flags, const char *const *args, char **argv, char *out, size_t outlen,
		 char *err, size_t errlen)
{
	FILE *fo = tmpfile(), *fe = tmpfile();
	int argc = 0, so, se, rc;

	assert_non_null(fo);
	assert_non_null(fe);
	memset(&st, 0, sizeof(st));
	st.cpu = -1;
	argv[argc++] = "t";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	rc = cli_parse_options("t", USAGE, table(), flags, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	rewind(fo);
	rewind(fe);
	out[fread(out, 1, outlen - 1, fo)] = '\0';
	err[fread(err, 1, errlen - 1, fe)] = '\0';
	fclose(fo);
	fclose(fe);
	return rc;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_cli_options__values(void **state)
{
	char *argv[32], out[4096], err[1024];
	int rc = parse(CLI_PARSE_NO_OPERANDS,
		       ARGS("-v", "-o", "a", "--output=b", "-n", "7", "--level=3", "-e", "x",
			    "--event", "y", "-ez", "--calibrate", "--mode-b", "--cpu", "12",
			    "--format", "csv", "-I", "a", "--include=b", "-k", "p", "--kind=q,r",
			    "-ks"),
		       argv, out, sizeof(out), err, sizeof(err));

	assert_int_equal(rc, 26); /* argc: no operands */
	assert_string_equal(err, "");
	assert_string_equal(out, "");
	assert_true(st.verbose);
	assert_string_equal(st.output, "b"); /* the last one wins */
	assert_int_equal(st.count, 7);
	assert_int_equal(st.level, 3);
	assert_string_equal(st.events, "x,y,z"); /* repeated: the callback appends */
	assert_true(st.calibrate_given);
	assert_int_equal(st.calibrate, 1000); /* no value: the default */
	assert_int_equal(st.mode, 2);
	assert_int_equal(st.cpu, 12);
	assert_int_equal(st.format, 2);
	assert_int_equal(st.paths.n, 2);
	assert_string_equal(st.paths.v[0], "a");
	assert_string_equal(st.paths.v[1], "b");
	free(st.paths.v);
	/* repeated: joined as one comma list (serve's -e kept only the last) */
	assert_string_equal(st.kinds, "p,q,r,s");

	rc = parse(0, ARGS("--calibrate=50", "--mode-a", "--level-alias", "5", "-c", "3"), argv,
		   out, sizeof(out), err, sizeof(err));
	assert_int_equal(rc, 7);
	assert_int_equal(st.calibrate, 50);
	assert_int_equal(st.mode, 1);
	assert_int_equal(st.level, 5);
	assert_int_equal(st.cpu, 3);
	assert_false(st.verbose);
	assert_null(st.output);
	assert_null(st.kinds);
}

static void test_cli_options__operands(void **state)
{
	char *argv[32], out[4096], err[1024];
	int rc;

	/* '+': the first operand ends the options; what follows is the command's. */
	rc = parse(CLI_PARSE_STOP_AT_OPERAND, ARGS("-v", "cmd", "-n", "5"), argv, out, sizeof(out),
		   err, sizeof(err));
	assert_int_equal(rc, 2);
	assert_string_equal(argv[rc], "cmd");
	assert_true(st.verbose);
	assert_int_equal(st.count, 0);
	assert_string_equal(err, "");

	/* Without it options and operands mix (getopt permutes); "--" still
	 * ends the options. A second parse in one process starts afresh. */
	rc = parse(0, ARGS("cmd", "-v", "--", "-n", "5"), argv, out, sizeof(out), err, sizeof(err));
	assert_int_equal(rc, 3);
	assert_string_equal(argv[rc], "cmd");
	assert_string_equal(argv[rc + 1], "-n");
	assert_true(st.verbose);
	assert_int_equal(st.count, 0);

	rc = parse(CLI_PARSE_STOP_AT_OPERAND, ARGS("-n", "4", "--", "-v"), argv, out, sizeof(out),
		   err, sizeof(err));
	assert_int_equal(rc, 4);
	assert_string_equal(argv[rc], "-v");
	assert_false(st.verbose);
	assert_int_equal(st.count, 4);

	/* No operand at all: argc. */
	rc = parse(CLI_PARSE_STOP_AT_OPERAND, ARGS("-v"), argv, out, sizeof(out), err, sizeof(err));
	assert_int_equal(rc, 2);
}

static void test_cli_options__errors(void **state)
{
	static const struct {
		int line;
		unsigned flags;
		const char *args[4];
		const char *err; /* the whole of standard error */
	} rows[] = {
		{ __LINE__, 0, { "--bogus" }, "unknown option '--bogus' (see 'pmon t --help')" },
		{ __LINE__, 0, { "--bogus=1" }, "unknown option '--bogus' (see 'pmon t --help')" },
		{ __LINE__, 0, { "-z" }, "unknown option '-z' (see 'pmon t --help')" },
		{ __LINE__, 0, { "-o" }, "option '-o' needs a value (see 'pmon t --help')" },
		{ __LINE__,
		  0,
		  { "--output" },
		  "option '--output' needs a value (see 'pmon t --help')" },
		{ __LINE__,
		  0,
		  { "--verbose=1" },
		  "option '--verbose' takes no value (see 'pmon t --help')" },
		{ __LINE__, 0, { "--mode" }, "option '--mode' is ambiguous (see 'pmon t --help')" },
		{ __LINE__, 0, { "-n", "0" }, "-n 0: at least 1" },
		{ __LINE__, 0, { "--count", "0" }, "--count 0: at least 1" },
		{ __LINE__, 0, { "--count", "101" }, "--count 101 is too large (at most 100)" },
		{ __LINE__, 0, { "--cou=101" }, "--count 101 is too large (at most 100)" },
		{ __LINE__, 0, { "-n", "x" }, "-n 'x' is not a non-negative integer" },
		{ __LINE__, 0, { "--level", "6" }, "--level 6 is too large (at most 5)" },
		{ __LINE__, 0, { "--cpu", "4096" }, "--cpu 4096 is too large (at most 4095)" },
		{ __LINE__, 0, { "-e", "" }, "-e '': no event named" },
		{ __LINE__, 0, { "--format", "svg" }, "--format 'svg': text, json or csv" },
		{ __LINE__, 0, { "--form=" }, "--format '': text, json or csv" },
		{ __LINE__, 0, { "-e", "a", "-n", "-1" }, "-n '-1' is not a non-negative integer" },
		{ __LINE__,
		  CLI_PARSE_NO_OPERANDS,
		  { "-v", "x" },
		  "unexpected argument 'x' (see 'pmon t --help')" },
	};
	char *argv[32], out[4096], err[1024], want[256];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int rc = parse(rows[i].flags, rows[i].args, argv, out, sizeof(out), err,
			       sizeof(err));
		snprintf(want, sizeof(want), "pmon: %s\n", rows[i].err);
		if (rc != -CLI_USAGE || strcmp(err, want) || out[0])
			fail_msg("line %d: returned %d, said '%s'", rows[i].line, rc, err);
	}
}

static void test_cli_options__help(void **state)
{
	char *argv[32], out[4096], err[1024];
	const char *const *h, *const helps[] = { "--help", "-h", NULL };

	for (h = helps; *h; h++) {
		int rc = parse(CLI_PARSE_STOP_AT_OPERAND, ((const char *const[]){ "-v", *h, NULL }),
			       argv, out, sizeof(out), err, sizeof(err));
		assert_int_equal(rc, 0); /* the command returns CLI_OK */
		assert_string_equal(err, "");
		assert_true(!strncmp(out, USAGE "\n\nA test command.\n\n  -v", strlen(USAGE) + 21));
		/* Every listed long option, with its value's name, and its text. */
		for (const struct cli_option *o = table(); o->type != CLI_OPTION_END; o++) {
			char want[64];
			if (o->type == CLI_OPTION_TEXT || !o->long_name)
				continue;
			snprintf(want, sizeof(want), "--%s%s%s", o->long_name,
				 o->argname ? o->flags & CLI_OPTARG ? "[=" : " " : "",
				 o->argname ? o->argname : "");
			if (!o->help) {
				assert_null(strstr(out, want));
				continue;
			}
			/* The help's first line, after the option's column. */
			char text[64];
			snprintf(text, sizeof(text), " %.*s\n", (int)strcspn(o->help, "\n"),
				 o->help);
			if (!strstr(out, want) || !strstr(out, text))
				fail_msg("--help lacks '%s' or '%s': %s", want, text, out);
		}
		/* Short and long on one line, the text in one column; a second
		 * line of text under the first. */
		assert_non_null(strstr(out, "\n  -v, --verbose         say more\n"));
		assert_non_null(strstr(out,
				       "\n  -o, --output FILE     write to FILE\n"
				       "                        instead of standard output\n"));
		assert_non_null(strstr(out, "\n      --calibrate[=HZ]  calibrate\n"));
		const char *tail =
			"  -c, --cpu N           on CPU N\n"
			"      --format text|json|csv  the format\n"
			"  -I, --include DIR     look in DIR too; again: more\n"
			"  -k, --kind K          kinds, comma-separated; again: more\n\nThe end.\n";
		if (!(strlen(out) > strlen(tail) &&
		      !strcmp(out + strlen(out) - strlen(tail), tail)))
			fail_msg("--help ends otherwise: %s", out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_options__values),
		cmocka_unit_test(test_cli_options__operands),
		cmocka_unit_test(test_cli_options__errors),
		cmocka_unit_test(test_cli_options__help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
