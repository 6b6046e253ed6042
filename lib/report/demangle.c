// SPDX-License-Identifier: MIT
/*
 * C++ symbol names demangled, as perf report prints them by default
 * (tools/perf/util/symbol-elf.c, demangle_sym() with DMGL_NO_OPTS: no
 * parameter list, no return type): "_ZN3foo3barEi" is "foo::bar". The
 * demangler is the C++ runtime's
 * own, __cxa_demangle() of libstdc++ (the Itanium C++ ABI's), loaded on
 * first use as Capstone is: libpmon-report links no C++ runtime, and where
 * none is installed the names stay as the symbol table has them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "report/ctx.h"

typedef char *(*cxa_demangle_fn)(const char *name, char *buf, size_t *len, int *status);

static cxa_demangle_fn demangler;
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);

	if (h)
		demangler = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
}

/*
 * Cut a demangled name to what perf prints: the last top-level parameter
 * list and the qualifiers after it go ("foo::bar(int) const" -> "foo::bar",
 * "operator()(int)" -> "operator()"), and a template function's return
 * type before its name ("int foo<int>(int)" -> "foo<int>"). Only the
 * parameter list is taken where the name is not that plain.
 */
void pmon__demangle_short(char *d)
{
	size_t n = strlen(d);
	int depth = 0;

	if (!n || !strchr(d, ')'))
		return;
	size_t close = n; /* the last ')' at the top level */
	while (close > 0 && d[close - 1] != ')')
		close--;
	if (!close)
		return;
	size_t open = close - 1;
	for (size_t i = close; i-- > 0;) {
		depth += d[i] == ')' ? 1 : d[i] == '(' ? -1 : 0;
		if (!depth) {
			open = i;
			break;
		}
	}
	if (depth || !open)
		return;
	d[open] = '\0';
	/* a template function's return type: "TYPE name<...>" */
	if (d[open - 1] != '>' || strstr(d, "operator"))
		return;
	int angle = 0;
	size_t space = 0;
	for (size_t i = 0; i < open; i++) {
		angle += d[i] == '<' ? 1 : d[i] == '>' ? -1 : 0;
		if (!angle && d[i] == ' ')
			space = i + 1;
	}
	if (space)
		memmove(d, d + space, strlen(d + space) + 1);
}

char *pmon__demangle(const char *name)
{
	int status = -1;

	if (!name || name[0] != '_' || name[1] != 'Z') /* only mangled names */
		return NULL;
	pthread_once(&demangler_once, load);
	if (!demangler)
		return NULL;
	char *d = demangler(name, NULL, NULL, &status);
	if (status) {
		free(d);
		return NULL;
	}
	pmon__demangle_short(d);
	/* @d is the demangler's malloc()ed buffer, not @status (cppcheck
	 * cannot see through the loaded function's pointer) */
	return d; // cppcheck-suppress returnDanglingLifetime
}
