/* SPDX-License-Identifier: MIT */
/*
 * Private to `pmon serve` (pmon-serve.so): the request-facing text helpers
 * of the HTTP side (cli/cmd-serve.c). The collector it serves is the
 * library's (include/pmon/collect.h).
 */
#ifndef PMON_CLI_SERVE_H
#define PMON_CLI_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- text (cli/serve-text.c: libc only, linked alone by the fuzz harness) ---- */

/*
 * serve_accept_openmetrics() - HTTP content negotiation on @accept: true when
 * it prefers application/openmetrics-text (by q value, ties going to
 * OpenMetrics as Prometheus asks for it first) over text/plain; NULL: false.
 */
bool serve_accept_openmetrics(const char *accept);
/*
 * serve_query_uint() - a query parameter's value @v (NULL: absent) as a
 * whole number in [1, @max]: digits only, no sign or space.
 * Return: true with *@out set (@def when absent), false when it is not one.
 */
bool serve_query_uint(const char *v, unsigned long def, unsigned long max, unsigned long *out);

#endif
