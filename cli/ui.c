// SPDX-License-Identifier: MIT
/*
 * The pmon front end's side of its UI modules: the commands that draw,
 * symbolize or run a full-screen UI (report, annotate, plot, top; the --plot
 * of stat and rdt, trace report's svg and png) live in modules with the libraries they need. `pmon stat`
 * and the other counting commands load none, so they start with libc, libm,
 * zlib and jansson mapped and nothing else (issue #11; measured in
 * bench/stat-overhead.sh). One module per set of libraries, so that a
 * command maps only its own: `pmon report` maps elfutils and protobuf-c but
 * no Capstone, cairo (X11, fontconfig, freetype...) or ncurses, whose
 * relocated tables and start-up were most of its resident memory (5 of
 * 10 MB, issue #16). A symbol the table below does not name is in
 * pmon-ui.so.
 *
 * A module is looked for beside the executable (the build tree) and then
 * where `cmake --install` puts it relative to the installed binary
 * (PMON_UI_RELDIR, computed at configure time), never through an environment
 * variable: pmon often runs as root.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef PMON_UI_RELDIR
#define PMON_UI_RELDIR "../lib/pmon"
#endif

static char ui_error[PATH_MAX * 2 + 128];

/* dlopen() of a module already loaded returns its handle again: no cache. */
static void *ui_open(const char *module)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	const char *subdirs[] = { "", "/" PMON_UI_RELDIR };
	void *h;

	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(ui_error, sizeof(ui_error), "cannot find pmon's own path: %s",
			 strerror(errno));
		return NULL;
	}
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	ui_error[0] = '\0';
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s/%s", exe, subdirs[i], module);
		if (access(path, F_OK))
			continue;
		if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
		snprintf(ui_error, sizeof(ui_error), "%.*s", PATH_MAX, dlerror());
		return NULL;
	}
	snprintf(ui_error, sizeof(ui_error), "%s is not installed beside pmon (%s) or in %s/%s",
		 module, exe, exe, PMON_UI_RELDIR);
	return NULL;
}

void *cli_module_symbol(const char *module, const char *name, const char *what)
{
	void *h = ui_open(module);
	void *sym = h ? dlsym(h, name) : NULL;

	if (!sym)
		cli_error("%s needs pmon's UI module: %s", what,
			  h ? "it lacks that command (a module of another version?)" : ui_error);
	return sym;
}

int plot_log(const char *log, const char *out, unsigned w, unsigned h, const char *title)
{
	int (*fn)(const char *, const char *, unsigned, unsigned, const char *) =
		(int (*)(const char *, const char *, unsigned, unsigned, const char *))
			cli_module_symbol(CLI_MODULE_UI, "plot_log", "drawing a picture");
	return fn ? fn(log, out, w, h, title) : CLI_UNSUPPORTED;
}

int trace_draw(const char *in, const char *outpath, bool png, uint64_t from, uint64_t to,
	       unsigned width)
{
	int (*fn)(const char *, const char *, bool, uint64_t, uint64_t, unsigned) =
		(int (*)(const char *, const char *, bool, uint64_t, uint64_t, unsigned))
			cli_module_symbol(CLI_MODULE_UI, "trace_draw", "drawing a timeline");
	return fn ? fn(in, outpath, png, from, to, width) : CLI_UNSUPPORTED;
}
