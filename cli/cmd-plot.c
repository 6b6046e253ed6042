// SPDX-License-Identifier: MIT
/*
 * pmon plot: an interval log (pmon stat -I, pmon rdt) as a picture, one
 * panel per series, SVG or PNG by the output's extension.
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include <pmon/pmon.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmon plot LOG -o OUT.svg|OUT.png [--width W] [--height H] [--title T]\n\n"
		"LOG: the output of 'pmon stat -I MS -x, -o LOG' or --json, or of 'pmon rdt -x,'\n"
		"or --json. Counts per interval are drawn as rates per second.\n");
}

int plot_log(const char *log, const char *out, unsigned w, unsigned h, const char *title)
{
	struct pmon_plot_data d;
	char host[64] = "";

	if (pmon_plot_read_log(log, &d)) {
		cli_error("%s", pmon_errdetail());
		return CLI_USAGE;
	}
	gethostname(host, sizeof(host) - 1);
	snprintf(d.title, sizeof(d.title), "%s -- %s", title ? title : log, host);
	if (!h)
		h = (unsigned)(60 + 150 * d.n);
	int err = pmon_plot_render(&d, out, w, h);
	pmon_plot_data_release(&d);
	if (err) {
		cli_error("%s", pmon_errdetail());
		return err == -EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	return CLI_OK;
}

int cmd_plot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "width", required_argument, NULL, 'W' },
		{ "height", required_argument, NULL, 'H' },
		{ "title", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *title = NULL;
	unsigned long w = 900, h = 0;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'W':
			if (!cli_parse_uint(optarg, 20000, "--width", &w))
				return CLI_USAGE;
			break;
		case 'H':
			if (!cli_parse_uint(optarg, 20000, "--height", &h))
				return CLI_USAGE;
			break;
		case 't':
			title = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind + 1 != argc || !out) {
		cli_error("give one LOG and -o OUT.svg|OUT.png (see 'pmon plot --help')");
		return CLI_USAGE;
	}
	return plot_log(argv[optind], out, (unsigned)w, (unsigned)h, title);
}
