// SPDX-License-Identifier: MIT
/*
 * pmon top's view state without a terminal or counters: a row's rate, its
 * min and max and the oscilloscope's history (the seeds' P5MON/PTACH
 * trace), the columns a width allows, numbers made short, what each key
 * changes, and the processes' shares. screen.c draws these, live.c feeds
 * them; tests/unit/test-top.c drives them directly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "top/view.h"

const char *top_ring__modifier(enum top_ring r)
{
	return r == TOP_RING_USER ? ":u" : r == TOP_RING_KERNEL ? ":k" : "";
}

const char *top_ring__name(enum top_ring r)
{
	return r == TOP_RING_USER ? "user" : r == TOP_RING_KERNEL ? "kernel" : "user+kernel";
}

/* New counters: a new baseline, no history carried over. */
void top_row__reset(struct top_row *r, bool ok, const char *why)
{
	r->ok = ok;
	snprintf(r->why, sizeof(r->why), "%s", why ? why : "");
	r->nhist = 0;
	r->min = INFINITY;
	r->max = 0;
	r->rate = 0;
}

void top_row__push(struct top_row *r, double rate)
{
	r->rate = rate;
	if (!r->ok)
		return;
	r->min = fmin(r->min, rate);
	r->max = fmax(r->max, rate);
	if (r->nhist == TOP_HIST) {
		memmove(r->hist, r->hist + 1, (TOP_HIST - 1) * sizeof(double));
		r->nhist--;
	}
	r->hist[r->nhist++] = rate;
}

/*
 * The last @width values of the history as a trace, scaled to the largest
 * of them: eighths of a block in UTF-8, else ASCII by density. Returns how
 * many columns it wrote into @buf (at most TOP_HIST).
 */
size_t top_row__trace(const struct top_row *r, int width, bool utf8, char *buf, size_t len)
{
	static const char *const blocks[] = { " ",	"\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[] = " .:-=+*#%@";
	unsigned n = width < 0 ? 0 : r->nhist < (unsigned)width ? r->nhist : (unsigned)width;
	double top = 0;
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned k = r->nhist - n; k < r->nhist; k++)
		top = fmax(top, r->hist[k]);
	for (unsigned k = r->nhist - n; k < r->nhist; k++) {
		int level = top > 0 ? (int)lround(r->hist[k] / top * 8) : 0;
		const char *s = utf8 ? blocks[level < 0 ? 0 : level > 8 ? 8 : level] : NULL;
		char one[2] = { ascii[level < 0 ? 0 : level > 9 ? 9 : level], '\0' };
		int w = snprintf(buf + at, len - at, "%s", s ? s : one);
		if (w < 0 || (size_t)w >= len - at)
			return k - (r->nhist - n);
		at += (size_t)w;
	}
	return n;
}

struct top_cols top_fit_columns(int cols)
{
	struct top_cols c = { .name = 26, .min = true, .max = true, .trace = true };

	if (cols < 26 + 3 * 13 + 2 + 10)
		c.trace = false;
	if (cols < 26 + 3 * 13)
		c.max = false;
	if (cols < 26 + 2 * 13)
		c.min = false;
	if (cols < 26 + 13)
		c.name = cols - 13 > 8 ? cols - 13 : 8;
	return c;
}

void top_human(double v, char *buf, size_t len)
{
	const char *u[] = { "", "K", "M", "G", "T" };
	int i = 0;

	while (fabs(v) >= 1000 && i < 4)
		v /= 1000, i++;
	snprintf(buf, len, "%.2f%s", v, u[i]);
}

/* What key @ch changes in @s; what the counters must do about it is the
 * caller's (the returned action). 'q' is the loop's. */
enum top_key top_state__key(struct top_state *s, int ch)
{
	switch (ch) {
	case 'a':
		return TOP_KEY_ADD;
	case 'd':
		if (s->nev <= 1) {
			snprintf(s->status, sizeof(s->status), "the last event stays");
			return TOP_KEY_NONE;
		}
		memmove(&s->ev[s->sel], &s->ev[s->sel + 1],
			(s->nev - s->sel - 1) * sizeof(s->ev[0]));
		s->nev--;
		if (s->sel >= s->nev)
			s->sel = s->nev - 1;
		return TOP_KEY_REOPEN;
	case 'u':
	case 'k':
	case 'b':
		s->ring = ch == 'u' ? TOP_RING_USER : ch == 'k' ? TOP_RING_KERNEL : TOP_RING_BOTH;
		return TOP_KEY_RING;
	case '+':
		s->interval_ms = s->interval_ms * 2 > 60000 ? 60000 : s->interval_ms * 2;
		break;
	case '-':
		s->interval_ms = s->interval_ms / 2 < 100 ? 100 : s->interval_ms / 2;
		break;
	case ' ':
	case 'p':
		s->paused = !s->paused;
		break;
	case 'c':
		s->per_cpu = !s->per_cpu;
		break;
	case 't':
		s->per_proc = !s->per_proc;
		break;
	case 's':
		s->sort_rate = !s->sort_rate;
		break;
	case 'h':
	case '?':
		s->help = !s->help;
		break;
	case KEY_UP:
		if (s->sel)
			s->sel--;
		break;
	case KEY_DOWN:
		if (s->sel + 1 < s->nev)
			s->sel++;
		break;
	default:
		break;
	}
	return TOP_KEY_NONE;
}

/* A sample's period added to its process; false when the table is full
 * (the sample is left out). */
bool top_procs__add(struct top_proc *acc, size_t *nacc, pid_t pid, double period)
{
	size_t i = 0;

	while (i < *nacc && acc[i].pid != pid)
		i++;
	if (i == *nacc) {
		if (*nacc == TOP_MAXPROC)
			return false;
		acc[(*nacc)++] = (struct top_proc){ .pid = pid };
	}
	acc[i].period += period;
	return true;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct top_proc *x = a, *y = b;

	return (x->period < y->period) - (x->period > y->period);
}

/* Largest share first. */
void top_procs__sort(struct top_proc *acc, size_t nacc)
{
	if (nacc > 1)
		qsort(acc, nacc, sizeof(*acc), cmp_proc);
}
