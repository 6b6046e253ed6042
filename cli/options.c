// SPDX-License-Identifier: MIT
/*
 * The commands' option parser: one table per command says what each option
 * stores and how --help describes it (git's parse-options, made small);
 * getopt_long() does the parsing, cli_bad_option() the one-line errors.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"

/* More than any command has; a longer table is a bug said at once. */
#define CLI_OPTIONS_MAX 48
#define CLI_LONG_ONLY 0x100 /* getopt_long's value of a row with no short name */
/* The widest option column of --help; a wider one puts its text after two spaces. */
#define CLI_HELP_COLUMN 24

/* The strings CLI_OPTION_JOIN made, freed at exit (they live as long as
 * argv, which the other rows point into). */
struct joined {
	struct joined *next;
	char s[];
};
static struct joined *joined;
static bool free_at_exit;

static void free_joined(void)
{
	while (joined) {
		struct joined *j = joined;
		joined = j->next;
		free(j);
	}
}

static int join(const char **value, const char *arg)
{
	size_t a = *value ? strlen(*value) : 0, b = strlen(arg);
	struct joined *j;

	if (!*value) {
		*value = arg;
		return CLI_OK;
	}
	j = malloc(sizeof(*j) + a + b + 2);
	if (!j) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	if (!free_at_exit)
		free_at_exit = !atexit(free_joined);
	memcpy(j->s, *value, a);
	j->s[a] = ',';
	memcpy(j->s + a + 1, arg, b + 1);
	j->next = joined;
	joined = j;
	*value = j->s;
	return CLI_OK;
}

static bool listed(const struct cli_option *o)
{
	return o->type != CLI_OPTION_TEXT && o->help;
}

static bool any_short(const struct cli_option *opts)
{
	for (const struct cli_option *o = opts; o->type != CLI_OPTION_END; o++)
		if (listed(o) && o->short_name)
			return true;
	return false;
}

/* "  -e, --event LIST", "      --cpu N", "  -b", "  --calibrate[=HZ]". */
static int option_column(char *buf, size_t len, const struct cli_option *o, bool shorts)
{
	const char *a = o->argname, *opt = o->flags & CLI_OPTARG ? "[" : "";
	const char *eq = o->flags & CLI_OPTARG ? "=" : " ", *end = o->flags & CLI_OPTARG ? "]" : "";
	int n;

	if (o->long_name && o->short_name)
		n = snprintf(buf, len, "  -%c, --%s%s%s%s%s", o->short_name, o->long_name,
			     a ? opt : "", a ? eq : "", a ? a : "", a ? end : "");
	else if (o->long_name)
		n = snprintf(buf, len, "%s--%s%s%s%s%s", shorts ? "      " : "  ", o->long_name,
			     a ? opt : "", a ? eq : "", a ? a : "", a ? end : "");
	else
		n = snprintf(buf, len, "  -%c%s%s%s", o->short_name,
			     a && !(o->flags & CLI_OPTARG) ? " " : opt, a ? a : "", a ? end : "");
	return n < 0 ? 0 : n;
}

void cli_usage(FILE *f, const char *usage, const struct cli_option *opts)
{
	bool shorts = any_short(opts);
	char left[128];
	int col = 0;

	for (const struct cli_option *o = opts; o->type != CLI_OPTION_END; o++) {
		int n = listed(o) ? option_column(left, sizeof(left), o, shorts) : 0;
		if (n <= CLI_HELP_COLUMN && n > col)
			col = n;
	}
	col += 2;
	fprintf(f, "%s%s\n", usage, usage[0] && usage[strlen(usage) - 1] == '\n' ? "" : "\n");
	/* A blank line between a paragraph and the option lines either side. */
	for (const struct cli_option *o = opts, *prev = NULL; o->type != CLI_OPTION_END; o++) {
		if (o->type == CLI_OPTION_TEXT) {
			size_t len = strlen(o->help);
			fprintf(f, "%s%s%s", prev && prev->type != CLI_OPTION_TEXT ? "\n" : "",
				o->help, len && o->help[len - 1] == '\n' ? "" : "\n");
			prev = o;
			continue;
		}
		if (!listed(o))
			continue;
		if (prev && prev->type == CLI_OPTION_TEXT)
			fputc('\n', f);
		prev = o;
		int n = option_column(left, sizeof(left), o, shorts);
		fprintf(f, "%s%*s", left, n < col ? col - n : 2, "");
		/* Each further line of the help starts under the first. */
		for (const char *h = o->help, *nl;; h = nl + 1) {
			nl = strchr(h, '\n');
			if (!nl) {
				fprintf(f, "%s\n", h);
				break;
			}
			fprintf(f, "%.*s\n%*s", (int)(nl - h), h, col, "");
		}
	}
}

/* The table as JSON, for the man pages and shell completion that
 * tools/pmon-doc.py makes from it at build time (docs/packaging.md): the
 * same rows as --help, TEXT rows included, hidden ones left out. */
static json_t *option_json(const struct cli_option *o)
{
	static const char *const types[] = { "end",  "text",   "flag", "set-int", "string",
					     "uint", "choice", "list", "join",	  "callback" };
	char s[2] = { (char)o->short_name, '\0' };
	json_t *r, *ch;

	if (o->type == CLI_OPTION_TEXT)
		return json_pack("{ss}", "text", o->help);
	r = json_pack("{ss s:s? s:s? s:s? ss sb}", "help", o->help, "short",
		      o->short_name ? s : NULL, "long", o->long_name, "arg", o->argname, "type",
		      types[o->type], "optarg", (o->flags & CLI_OPTARG) != 0);
	if (r && o->choices && (ch = json_array())) {
		for (size_t i = 0; o->choices[i]; i++)
			json_array_append_new(ch, json_string(o->choices[i]));
		json_object_set_new(r, "choices", ch);
	}
	return r;
}

static int dump_options(const char *cmd, const char *usage, const struct cli_option *opts)
{
	json_t *rows = json_array(), *doc;

	for (const struct cli_option *o = opts; rows && o->type != CLI_OPTION_END; o++)
		if (o->type == CLI_OPTION_TEXT || listed(o))
			json_array_append_new(rows, option_json(o));
	doc = rows ? json_pack("{ss ss so}", "command", cmd, "usage", usage, "options", rows)
		   : NULL;
	if (!doc || json_dumpf(doc, stdout, JSON_INDENT(1)) || putchar('\n') == EOF) {
		json_decref(doc);
		cli_error("cannot write the options of 'pmon %s'", cmd);
		return CLI_FAIL;
	}
	json_decref(doc);
	return cli_close_output(stdout, NULL);
}

bool cli_no_operands_at(const char *cmd, int argi, int argc, char **argv)
{
	if (argi >= argc)
		return true;
	cli_error("unexpected argument '%s' (see 'pmon %s --help')", argv[argi], cmd);
	return false;
}

int cli_opt_cpu(const struct cli_option *opt, const char *arg)
{
	unsigned long cpu;

	if (!cli_parse_uint(arg, 4095, "--cpu", &cpu))
		return CLI_USAGE;
	*(int *)opt->value = (int)cpu;
	return CLI_OK;
}

/* The index of @arg in @o's choices; else one line listing them:
 * "--format 'x': text, json or pprof". */
static int choose(const struct cli_option *o, const char *name, const char *arg)
{
	char list[256];
	size_t n = 0, len = 0;

	for (n = 0; o->choices[n]; n++)
		if (!strcmp(arg, o->choices[n])) {
			*(int *)o->value = (int)n;
			return CLI_OK;
		}
	list[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(list); i++) {
		int w = snprintf(list + len, sizeof(list) - len, "%s%s",
				 !i		     ? ""
					 : i + 1 < n ? ", "
						     : " or ",
				 o->choices[i]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	cli_error("%s '%s': %s", name, arg, list);
	return CLI_USAGE;
}

int cli_opt_duration(const struct cli_option *opt, const char *arg)
{
	char *end;

	errno = 0;
	double v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > 1e7) {
		cli_error("--%s '%s' is not a number of seconds", opt->long_name, arg);
		return CLI_USAGE;
	}
	*(double *)opt->value = v;
	return CLI_OK;
}

int cli_opt_debug_dir(const struct cli_option *opt, const char *arg)
{
	struct stat st;

	int err = stat(arg, &st) ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;

	if (err) {
		cli_error("--%s '%s': %s", opt->long_name, arg,
			  err == ENOENT ? "no such directory" : "not a directory");
		return CLI_USAGE;
	}
	*(const char **)opt->value = arg;
	return CLI_OK;
}

/* Store what option @o says, given as @name ("-r", "--repeat") with @arg. */
static int apply(const struct cli_option *o, const char *name, const char *arg)
{
	unsigned long ul;

	switch (o->type) {
	case CLI_OPTION_FLAG:
		*(bool *)o->value = true;
		return CLI_OK;
	case CLI_OPTION_SET_INT:
		*(int *)o->value = o->defval;
		return CLI_OK;
	case CLI_OPTION_STRING:
		*(const char **)o->value = arg;
		return CLI_OK;
	case CLI_OPTION_UINT:
		if (!cli_parse_uint(arg, o->max, name, &ul))
			return CLI_USAGE;
		if (ul < o->min) {
			cli_error("%s %lu: %s", name, ul, o->too_small);
			return CLI_USAGE;
		}
		*(unsigned long *)o->value = ul;
		return CLI_OK;
	case CLI_OPTION_CHOICE:
		return choose(o, name, arg);
	case CLI_OPTION_LIST: {
		struct cli_list *l = o->value;
		char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
		if (!v) {
			cli_error("out of memory");
			return CLI_FAIL;
		}
		l->v = v;
		l->v[l->n++] = (char *)arg;
		return CLI_OK;
	}
	case CLI_OPTION_JOIN:
		return join(o->value, arg);
	case CLI_OPTION_CALLBACK:
		return o->cb(o, arg);
	case CLI_OPTION_END:
	case CLI_OPTION_TEXT:
		break;
	}
	return CLI_FAIL;
}

int cli_parse_options(const char *cmd, const char *usage, const struct cli_option *opts,
		      unsigned flags, int argc, char **argv)
{
	struct option longopts[CLI_OPTIONS_MAX + 2];
	char shortopts[3 * CLI_OPTIONS_MAX + 3];
	size_t nl = 0, ns = 0;
	int i, c;

	/* Hidden, as git's --git-completion-helper: the table itself, only as
	 * the one argument (an operand after a command is never taken for it). */
	if (argc == 2 && !strcmp(argv[1], "--options-json"))
		return -dump_options(cmd, usage, opts);
	if (flags & CLI_PARSE_STOP_AT_OPERAND)
		shortopts[ns++] = '+';
	for (i = 0; opts[i].type != CLI_OPTION_END; i++) {
		const struct cli_option *o = &opts[i];
		/* A flag, set-int or callback row without an argname takes no value. */
		bool has_arg = o->argname || o->type == CLI_OPTION_STRING ||
			o->type == CLI_OPTION_UINT || o->type == CLI_OPTION_CHOICE ||
			o->type == CLI_OPTION_LIST || o->type == CLI_OPTION_JOIN;
		if (o->type == CLI_OPTION_TEXT)
			continue;
		if (i >= CLI_OPTIONS_MAX) {
			cli_error("'pmon %s' has more options than the parser holds", cmd);
			return -CLI_FAIL;
		}
		if (o->long_name)
			longopts[nl++] = (struct option){
				o->long_name,
				!has_arg			? no_argument
					: o->flags & CLI_OPTARG ? optional_argument
								: required_argument,
				NULL, o->short_name ? o->short_name : CLI_LONG_ONLY + i
			};
		if (o->short_name) {
			shortopts[ns++] = (char)o->short_name;
			if (has_arg)
				shortopts[ns++] = ':';
			if (has_arg && o->flags & CLI_OPTARG)
				shortopts[ns++] = ':';
		}
	}
	longopts[nl++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[nl] = (struct option){ NULL, 0, NULL, 0 };
	shortopts[ns++] = 'h';
	shortopts[ns] = '\0';

	/* getopt's own messages are two lines; cli_bad_option() says one.
	 * optind 0 starts getopt afresh, with this table's '+' or not. */
	opterr = 0;
	optind = 0;
	for (;;) {
		int li = -1, rc;
		char name[80];
		const struct cli_option *o = NULL;

		c = getopt_long(argc, argv, shortopts, longopts, &li);
		if (c == -1)
			break;
		if (c == 'h') {
			cli_usage(stdout, usage, opts);
			return -CLI_OK;
		}
		if (c == '?' || c == ':')
			return -cli_bad_option(cmd, argv, shortopts, longopts);
		for (i = 0; opts[i].type != CLI_OPTION_END && !o; i++)
			if (opts[i].type != CLI_OPTION_TEXT &&
			    (c >= CLI_LONG_ONLY ? c - CLI_LONG_ONLY == i : opts[i].short_name == c))
				o = &opts[i];
		if (!o)
			return -CLI_FAIL;
		/* Errors name the option as it was given. */
		if (li >= 0)
			snprintf(name, sizeof(name), "--%s", longopts[li].name);
		else
			snprintf(name, sizeof(name), "-%c", c);
		rc = apply(o, name, optarg);
		if (rc != CLI_OK)
			return -rc;
	}
	if ((flags & CLI_PARSE_NO_OPERANDS) && !cli_no_operands_at(cmd, optind, argc, argv))
		return -CLI_USAGE;
	return optind;
}
