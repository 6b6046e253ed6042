// SPDX-License-Identifier: MIT
/*
 * Numbers in the C locale, whatever locale the program that links libpmon
 * chose: a library that formats or parses numbers inside a user's process
 * (regions, event scales from sysfs, interval logs) must not follow the
 * user's LC_NUMERIC, or a German locale writes "1,5" into a CSV field and
 * reads a sysfs ".scale" of "2.328e-10" as 2. git and glibc's own advice:
 * a process-wide C locale object used with the *_l functions, or installed
 * for the calling thread with uselocale() around printf-family calls.
 */
#define _GNU_SOURCE
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include <pmon/output.h>

static locale_t c_locale;

static locale_t get_c_locale(void)
{
	locale_t l = __atomic_load_n(&c_locale, __ATOMIC_ACQUIRE);
	if (l)
		return l;
	l = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (!l)
		return LC_GLOBAL_LOCALE; /* ENOMEM: nothing better to offer */
	locale_t expected = (locale_t)0;
	if (!__atomic_compare_exchange_n(&c_locale, &expected, l, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		freelocale(l); /* another thread won */
		l = expected;
	}
	return l;
}

double pmon__strtod_c(const char *s, char **end)
{
	return strtod_l(s, end, get_c_locale());
}

locale_t pmon__c_locale_enter(void)
{
	return uselocale(get_c_locale());
}

void pmon__c_locale_leave(locale_t prev)
{
	if (prev)
		uselocale(prev);
}

int pmon_format_grouped(char *buf, size_t len, double v, int decimals)
{
	/* The user's numeric locale for this one call, on this thread only:
	 * the process keeps the locale it chose. */
	locale_t user = newlocale(LC_NUMERIC_MASK, "", (locale_t)0);
	locale_t old;
	int n;

	if (!user)
		return snprintf(buf, len, "%.*f", decimals, v); /* an unknown locale: C's */
	old = uselocale(user);
	n = snprintf(buf, len, "%'.*f", decimals, v);
	uselocale(old);
	freelocale(user);
	return n;
}
