// SPDX-License-Identifier: MIT
/*
 * pmon_mux_error (pmon/stats.h): the uncertainty of a count the kernel
 * scaled because the event was counted only part of the time it was
 * enabled (multiplexed). perf prints only the running percentage; this
 * says how far the scaled value can be off. Pure arithmetic on readings.
 *
 * Each reading i has the count v_i seen in running time R_i of enabled
 * time E_i; the scaled value is v_i x E_i / R_i, which assumes that the
 * rate in the unseen time U_i = E_i - R_i was the rate seen. Two terms:
 *  - counting noise: were events a Poisson stream at the rate seen, the
 *    unseen count and its estimate differ by a variance of
 *    rate x U_i x (1 + U_i / R_i) = v_i U_i E_i / R_i^2;
 *  - rate drift: with two readings or more (-I, -r), the rates v_i / R_i
 *    vary across readings with a variance s^2 (weighted by R_i); the
 *    unseen time of reading i may have run at any of them: U_i^2 s^2.
 * The estimate is the square root of the sum of both over readings (they
 * are independent). A fully running event has U = 0: no error.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include <pmon/stats.h>

void pmon_mux_error__add(struct pmon_mux_error *m, double scaled, uint64_t enabled,
			 uint64_t running)
{
	if (!running || running > enabled)
		return; /* nothing seen (nothing to scale from), or a bad reading */
	double r = (double)running, e = (double)enabled, u = e - r;
	double seen = scaled * r / e; /* the count as it was read */
	double rate = seen / r;

	m->n++;
	m->poisson += fabs(seen) * u * e / (r * r);
	m->unseen2 += u * u;
	/* West's weighted running mean and variance of the rates. */
	double w = m->w + r, d = rate - m->mean;
	m->mean += d * r / w;
	m->m2 += r * d * (rate - m->mean);
	m->w = w;
}

double pmon_mux_error__rate_var(const struct pmon_mux_error *m)
{
	return m->n > 1 && m->w > 0 ? m->m2 / m->w * (double)m->n / (double)(m->n - 1) : 0;
}

double pmon_mux_error__estimate(const struct pmon_mux_error *m)
{
	return sqrt(m->poisson + m->unseen2 * pmon_mux_error__rate_var(m));
}
