// SPDX-License-Identifier: MIT
/*
 * pmon plot: an interval log (pmon stat -I, pmon rdt) as a picture, one
 * panel per series, SVG or PNG by the output's extension. Also what the
 * counting commands draw through this module (cli/ui.c): stat's and rdt's
 * --plot (plot_log) and trace report's timeline (trace_draw).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include <pmon/pmon.h>

int plot_log(const char *log, const char *out, unsigned w, unsigned h, const char *title)
{
	struct pmon_plot_data d;
	char host[64] = "";

	if (pmon_plot_read_log(log, &d)) {
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
	if (d.warning[0])
		cli_warn("%s", d.warning);
	gethostname(host, sizeof(host) - 1);
	snprintf(d.title, sizeof(d.title), "%s -- %s", title ? title : log, host);
	if (!h)
		h = (unsigned)(60 + 150 * d.n);
	int err = pmon_plot_render(&d, out, w, h);
	pmon_plot_data_release(&d);
	if (err) {
		cli_error("%s", pmon_errdetail());
		/* a picture's name or size, or an output refused (a directory, a
		 * FIFO nobody reads, another user's link): bad input, 2 */
		return err == -EINVAL || err == -EISDIR || err == -ENXIO || err == -EPERM ||
				err == -ENOENT || err == -EEXIST || err == -EROFS || err == -EACCES
			? CLI_USAGE
			: CLI_FAIL;
	}
	return CLI_OK;
}

int trace_draw(const char *in, const char *outpath, bool png, uint64_t from, uint64_t to,
	       unsigned width)
{
	struct pmon_trace_reader *r = pmon_trace_reader__open(in);
	FILE *out = NULL;
	int rc = CLI_OK;

	if (!r) {
		cli_error("%s", pmon_errdetail()[0] ? pmon_errdetail() : strerror(errno));
		return CLI_USAGE; /* missing or malformed: bad input (exit-codes.md) */
	}
	const struct pmon_trace_info *info = pmon_trace_reader__info(r);
	size_t nev = pmon_trace_reader__nevents(r);
	if (info->torn_chunks)
		cli_warn("'%s': %llu damaged chunks (%llu bytes) skipped; the rest is reported", in,
			 (unsigned long long)info->torn_chunks,
			 (unsigned long long)info->torn_bytes);
	if (to == UINT64_MAX)
		to = nev ? pmon_trace_reader__event(r, nev - 1)->ns + 1 : 1;
	/* Every event is drawn: an SVG viewer slows down past ~100000 paths. */
	if (nev > 200000)
		cli_warn("%zu events make a large picture; zoom with --from/--to, or use --format "
			 "perfetto",
			 nev);
	if (to <= from) {
		cli_error("the window is empty: the trace ends before --from");
		rc = CLI_USAGE;
	} else if (png && !outpath && isatty(STDOUT_FILENO)) {
		cli_error("the PNG is binary: give -o FILE");
		rc = CLI_USAGE;
	} else if (!(out = cli_open_output(outpath))) {
		rc = CLI_USAGE;
	} else {
		struct pmon_plot_trace_opts o = { .sz = sizeof(o),
						  .format = png ? PMON_PLOT_PNG : PMON_PLOT_SVG,
						  .from_ns = from,
						  .to_ns = to,
						  .width = width };
		int err = pmon_plot_trace(r, out, &o);
		bool io = err == -EIO || err == -ENOSPC || err == -EDQUOT || err == -EFBIG ||
			err == -EPIPE;
		if (err && io && !cli_reader_gone(fileno(out)) && err != -EPIPE)
			cli_error("cannot write '%s': %s", outpath ? outpath : "standard output",
				  strerror(-err));
		else if (err && !io)
			cli_error("%s", pmon_errdetail());
		if (err) {
			rc = err == -EINVAL ? CLI_USAGE : CLI_FAIL;
			/* said once here; a half picture never replaces the file */
			if (out == stdout)
				clearerr(stdout);
			else
				cli_abandon_output(out);
		} else if (out != stdout && cli_close_output(out, outpath) != CLI_OK) {
			rc = CLI_FAIL;
		}
	}
	pmon_trace_reader__free(r);
	return rc;
}

int cmd_plot(int argc, char **argv)
{
	const char *out = NULL, *title = NULL;
	unsigned long w = 900, h = 0;
	const struct cli_option options[] = {
		CLI_OPT_TEXT("LOG: the output of 'pmon stat -I MS -x, -o LOG' or --json, or of "
			     "'pmon rdt -x,'\n"
			     "or --json. Counts per interval are drawn as rates per second."),
		CLI_OPT_OUTPUT(&out, "OUT", "the picture: OUT.svg or OUT.png"),
		CLI_OPT_UINT(0, "width", &w, "W", 20000, "its width in pixels (default 900)"),
		CLI_OPT_UINT(0, "height", &h, "H", 20000,
			     "its height in pixels (default 60 + 150 per series)"),
		CLI_OPT_STRING(0, "title", &title, "T", "the title (default: the LOG's name)"),
		CLI_OPT_END(),
	};
	int argi = cli_parse_options(
		"plot",
		"usage: pmon plot LOG -o OUT.svg|OUT.png [--width W] [--height H] [--title T]",
		options, 0, argc, argv);

	if (argi <= 0)
		return -argi;
	if (argi + 1 != argc || !out) {
		cli_error("give one LOG and -o OUT.svg|OUT.png (see 'pmon plot --help')");
		return CLI_USAGE;
	}
	if (!cli_check_output_path(out, "-o") || cli_output_is_input(out, argv[argi], "-o"))
		return CLI_USAGE;
	return plot_log(argv[argi], out, (unsigned)w, (unsigned)h, title);
}
