// SPDX-License-Identifier: MIT
/*
 * A trace as a timeline picture, drawn with cairo (pmon/plot.h,
 * pmon_plot_trace(); `pmon trace report --format svg|png`): the Soft Logic
 * Analyzer's display. A title line, a time axis with units across the top,
 * then one lane per thread in order of first appearance: the hooks' instants
 * and counter values as ticks on a row of their own, their spans stacked by
 * nesting depth below it, then the kernel's events the same way. A legend of
 * the channels closes the picture. The same drawing goes onto a cairo SVG
 * surface or an image surface written as PNG.
 *
 * The events come from the core's trace reader (pmon/trace.h); the core
 * links no graphics library, so the drawing lives here (issue #11).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>
#include <cairo-svg.h>

#include "internal.h"
#include "plot/text.h"
#include <pmon/plot.h>
#include <pmon/trace.h>

#define LEFT ((double)PMON_PLOT_TRACE_LEFT) /* the label column */
#define RIGHT ((double)PMON_PLOT_TRACE_RIGHT)
#define TOP ((double)PMON_PLOT_TRACE_TOP) /* title and axis above the first lane */
#define ROW ((double)PMON_PLOT_TRACE_ROW)
#define BAR ((double)PMON_PLOT_TRACE_BAR) /* a span's height in its row */
#define PAD ((double)PMON_PLOT_TRACE_PAD) /* above and below a lane's rows */
#define MAX_PIXELS (64.0 * 1024 * 1024) /* a PNG's memory: 256 MiB */
#define MAX_HEIGHT 32000.0 /* cairo's image surfaces stop at 32767 */
#define MAX_LEGEND 256 /* channels named in the legend */
#define NAME_MAX_BYTES 160 /* of a channel's name, as drawn */

struct rgb {
	double r, g, b;
};

static const struct rgb C_BG = { 1, 1, 1 }, C_LANE_ALT = { 0.955, 0.963, 0.975 },
			C_TEXT = { 0.10, 0.10, 0.12 }, C_MUTED = { 0.42, 0.44, 0.48 },
			C_GRID = { 0.86, 0.88, 0.91 }, C_AXIS = { 0.30, 0.32, 0.36 },
			C_SEP = { 0.78, 0.80, 0.84 }, C_WARN = { 0.70, 0.25, 0.20 };

/* HSL (h in degrees) to RGB, CSS Color 3's algorithm. */
static struct rgb hsl(double h, double s, double l)
{
	double c = (1 - fabs(2 * l - 1)) * s, hp = fmod(h, 360) / 60;
	double x = c * (1 - fabs(fmod(hp, 2) - 1)), m = l - c / 2;
	struct rgb o = { 0, 0, 0 };

	if (hp < 1)
		o = (struct rgb){ c, x, 0 };
	else if (hp < 2)
		o = (struct rgb){ x, c, 0 };
	else if (hp < 3)
		o = (struct rgb){ 0, c, x };
	else if (hp < 4)
		o = (struct rgb){ 0, x, c };
	else if (hp < 5)
		o = (struct rgb){ x, 0, c };
	else
		o = (struct rgb){ c, 0, x };
	return (struct rgb){ o.r + m, o.g + m, o.b + m };
}

/* A channel's hue, stable across runs and pictures: FNV-1a of its name. */
static double hue(const char *s)
{
	unsigned h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 16777619u;
	return (double)(h % 360);
}

struct chan {
	char name[NAME_MAX_BYTES]; /* cleaned for cairo */
	double name_w; /* its width at the bars' font size */
	struct rgb fill, mark; /* a span's fill; an instant's or counter's tick */
	bool kernel, spans, marks, counters;
};

struct open_b {
	uint32_t channel;
	uint64_t ns;
};

struct lane {
	int32_t tid;
	unsigned depth_max[2]; /* of the hooks' [0] and the kernel's [1] spans */
	bool ticks[2], has[2]; /* instants or counters; any event */
	unsigned rows[2];
	size_t first, n; /* its events: order[first .. first + n) */
	double y, h;
	struct open_b *open[2];
	size_t nopen[2], capopen[2];
	/* The pixel column of the last tick and of the last span narrower than
	 * a pixel (per depth), and their channels: another one there would
	 * cover the same pixels, so it is not drawn again (200,000 instants
	 * made a 65 MB SVG; at most a few per column are drawn now). */
	double tick_px[2];
	uint32_t tick_ch[2];
	double thin_px[2][16];
	uint32_t thin_ch[2][16];
};

struct pic {
	cairo_t *cr;
	const struct pmon_trace_reader *r;
	struct chan *ch; /* 1..nch */
	size_t nch;
	uint64_t from, to;
	double W, H, x1, px_per_ns;
	size_t nl, drawn, hint; /* lanes; lanes that fit; the last one looked up */
	struct lane *lanes;
	size_t *order;
	double legend_y;
};

static void set(cairo_t *cr, struct rgb c)
{
	cairo_set_source_rgb(cr, c.r, c.g, c.b);
}

static void font(cairo_t *cr, double size, bool bold)
{
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
}

static double text_w(cairo_t *cr, const char *s)
{
	cairo_text_extents_t e;
	cairo_text_extents(cr, s, &e);
	return e.x_advance;
}

enum anchor { A_START, A_MIDDLE, A_END };

/* @s must be clean already (pmon__plot_clean_text) or pmon's own text. */
static double text(cairo_t *cr, double x, double y, const char *s, enum anchor a, struct rgb c)
{
	double w = text_w(cr, s);
	set(cr, c);
	cairo_move_to(cr, a == A_START ? x : a == A_MIDDLE ? x - w / 2 : x - w, y);
	cairo_show_text(cr, s);
	return w;
}

/* A duration with a unit, three significant figures (the C locale). */
static void fmt_dur(char *buf, size_t len, double ns)
{
	if (ns < 1e3)
		pmon__fmt(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		pmon__fmt(buf, len, "%.3g us", ns / 1e3);
	else if (ns < 1e9)
		pmon__fmt(buf, len, "%.3g ms", ns / 1e6);
	else
		pmon__fmt(buf, len, "%.3g s", ns / 1e9);
}

static double x_of(const struct pic *p, uint64_t ns)
{
	if (ns <= p->from)
		return LEFT;
	if (ns >= p->to)
		return p->x1;
	return LEFT + (double)(ns - p->from) * p->px_per_ns;
}

/* The top of row @row of section @k (0 the hooks, 1 the kernel). */
static double row_y(const struct lane *l, int k, unsigned row)
{
	return l->y + PAD + (double)((k ? l->rows[0] : 0) + row) * ROW;
}

static struct lane *lane_of(struct pic *p, int32_t tid)
{
	/* the last one found first: a thread's events come in runs */
	if (p->hint < p->nl && p->lanes[p->hint].tid == tid)
		return &p->lanes[p->hint];
	for (size_t i = 0; i < p->nl; i++)
		if (p->lanes[i].tid == tid)
			return &p->lanes[p->hint = i];
	if (p->nl % 16 == 0) {
		struct lane *l = realloc(p->lanes, (p->nl + 16) * sizeof(*l));
		if (!l)
			return NULL;
		p->lanes = l;
	}
	p->lanes[p->nl] = (struct lane){ .tid = tid };
	p->hint = p->nl;
	return &p->lanes[p->nl++];
}

static int push_open(struct lane *l, int k, uint32_t ch, uint64_t ns)
{
	if (PMON_GROW(&l->open[k], &l->capopen[k], l->nopen[k] + 1))
		return -ENOMEM;
	l->open[k][l->nopen[k]++] = (struct open_b){ ch, ns };
	return 0;
}

/* The end of a span of @ch in section @k: the innermost open span of the
 * channel leaves the stack. Return: its depth + 1, its begin in *@ns; 0
 * for an end without its begin (left alone). */
static size_t pop_open(struct lane *l, int k, uint32_t ch, uint64_t *ns)
{
	size_t d = l->nopen[k];
	while (d > 0 && l->open[k][d - 1].channel != ch)
		d--;
	if (!d)
		return 0;
	*ns = l->open[k][d - 1].ns;
	memmove(&l->open[k][d - 1], &l->open[k][d], (l->nopen[k] - d) * sizeof(l->open[k][0]));
	l->nopen[k]--;
	return d;
}

/* ---- the time axis ------------------------------------------------------ */

/* 1, 2 or 5 times a power of ten, at least @x (>= 1). */
static uint64_t nice_step(double x)
{
	uint64_t p = 1;
	while ((double)p * 10 <= x && p <= UINT64_MAX / 100)
		p *= 10;
	return x <= (double)p	       ? p
		: x <= 2.0 * (double)p ? 2 * p
		: x <= 5.0 * (double)p ? 5 * p
				       : 10 * p;
}

struct axis_fmt {
	uint64_t unit; /* ns per unit */
	const char *name;
	int decimals; /* enough for the step */
};

/* Every label in one unit, the window end's, with the decimals the step
 * needs: 1.2345678 s for a 100 ns step at second 1. */
static struct axis_fmt axis_fmt(uint64_t to, uint64_t step)
{
	struct axis_fmt f = { 1, "ns", 0 };
	uint64_t pow10 = 1;

	if (to >= 1000000000u)
		f = (struct axis_fmt){ 1000000000u, "s", 0 };
	else if (to >= 1000000u)
		f = (struct axis_fmt){ 1000000u, "ms", 0 };
	else if (to >= 1000u)
		f = (struct axis_fmt){ 1000u, "us", 0 };
	/* step < unit here keeps step * 10^d below 10^18 */
	while (f.decimals < 9 && step < f.unit && (step * pow10) % f.unit) {
		f.decimals++;
		pow10 *= 10;
	}
	return f;
}

static void axis_label(char *buf, size_t len, uint64_t t, const struct axis_fmt *f)
{
	uint64_t whole = t / f->unit, frac = t % f->unit, div = f->unit;

	for (int d = 0; d < f->decimals; d++)
		div /= 10;
	if (f->decimals)
		pmon__fmt(buf, len, "%llu.%0*llu %s", (unsigned long long)whole, f->decimals,
			  (unsigned long long)(frac / (div ? div : 1)), f->name);
	else
		pmon__fmt(buf, len, "%llu %s", (unsigned long long)whole, f->name);
}

/* A step whose labels do not touch: about one label per 100 px, wider
 * when the labels need it. */
static uint64_t axis_step(struct pic *p, struct axis_fmt *f)
{
	double span = (double)(p->to - p->from), pw = p->x1 - LEFT;
	uint64_t step = nice_step(span / fmax(2, floor(pw / 100)));
	char a[64], b[64];

	font(p->cr, 10, false);
	for (int tries = 0; tries < 8; tries++) {
		*f = axis_fmt(p->to, step);
		axis_label(a, sizeof(a), p->to / step * step, f);
		axis_label(b, sizeof(b), p->from / step * step, f);
		double need = fmax(text_w(p->cr, a), text_w(p->cr, b)) + 16;
		if ((double)step * p->px_per_ns >= need || step > UINT64_MAX / 10)
			break;
		step = nice_step((double)step * 1.5);
	}
	return step;
}

static void draw_axis(struct pic *p, double y_axis, bool labels_below)
{
	struct axis_fmt f;
	uint64_t step = axis_step(p, &f);
	char lab[64];
	cairo_t *cr = p->cr;

	set(cr, C_AXIS);
	cairo_set_line_width(cr, 1);
	cairo_move_to(cr, LEFT, y_axis + 0.5);
	cairo_line_to(cr, p->x1, y_axis + 0.5);
	cairo_stroke(cr);
	font(cr, 10, false);
	for (uint64_t t = (p->from + step - 1) / step * step; t <= p->to; t += step) {
		double x = floor(x_of(p, t)) + 0.5;
		set(cr, C_AXIS);
		cairo_move_to(cr, x, labels_below ? y_axis : y_axis - 4);
		cairo_line_to(cr, x, labels_below ? y_axis + 5 : y_axis + 1);
		cairo_stroke(cr);
		axis_label(lab, sizeof(lab), t, &f);
		if (x + text_w(cr, lab) / 2 <= p->W - 2)
			text(cr, x, labels_below ? y_axis + 16 : y_axis - 7, lab, A_MIDDLE, C_TEXT);
		if (t > UINT64_MAX - step)
			break;
	}
}

static void draw_grid(struct pic *p, double y0, double y1)
{
	struct axis_fmt f;
	uint64_t step = axis_step(p, &f);

	set(p->cr, C_GRID);
	cairo_set_line_width(p->cr, 1);
	for (uint64_t t = (p->from + step - 1) / step * step; t <= p->to; t += step) {
		double x = floor(x_of(p, t)) + 0.5;
		cairo_move_to(p->cr, x, y0);
		cairo_line_to(p->cr, x, y1);
		if (t > UINT64_MAX - step)
			break;
	}
	cairo_stroke(p->cr);
}

/* ---- events ------------------------------------------------------------- */

static void span(struct pic *p, struct lane *l, int k, unsigned depth, uint32_t ch, uint64_t b,
		 uint64_t e, bool open)
{
	if (e < p->from || b >= p->to || e < b)
		return;
	const struct chan *c = &p->ch[ch];
	cairo_t *cr = p->cr;
	double x = x_of(p, b), w = x_of(p, e) - x;
	double y = row_y(l, k, (l->ticks[k] ? 1 : 0) + depth) + (ROW - BAR) / 2;

	if (w < 1) { /* a span shorter than a pixel stays visible */
		if (depth < 16) {
			if (l->thin_px[k][depth] == floor(x) && l->thin_ch[k][depth] == ch && !open)
				return;
			l->thin_px[k][depth] = floor(x);
			l->thin_ch[k][depth] = ch;
		}
		w = 1;
	}
	if (open)
		cairo_set_source_rgb(cr, (c->fill.r + 1) / 2, (c->fill.g + 1) / 2,
				     (c->fill.b + 1) / 2);
	else
		set(cr, c->fill);
	cairo_rectangle(cr, x, y, w, BAR);
	cairo_fill(cr);
	if (w >= 4) { /* a darker edge, where there is room for one */
		cairo_set_source_rgb(cr, c->fill.r * 0.6, c->fill.g * 0.6, c->fill.b * 0.6);
		cairo_set_line_width(cr, 1);
		if (open) {
			static const double dash[] = { 3, 2 };
			cairo_set_dash(cr, dash, 2, 0);
		}
		cairo_rectangle(cr, x + 0.5, y + 0.5, w - 1, BAR - 1);
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
	}
	/* the name inside the bar where it fits */
	if (w > c->name_w + 8) {
		font(cr, 10, false);
		text(cr, x + 4, y + BAR - 3.5, c->name, A_START, C_TEXT);
	}
}

/* An instant or a counter value: a line the row's height in the channel's
 * colour, headed by a triangle (an instant) or a dot (a counter); its name
 * (and value) beside it where it ends before @next_x, the next tick's. */
static void tick(struct pic *p, struct lane *l, int k, const struct pmon_trace_event *e,
		 double next_x)
{
	const struct chan *c = &p->ch[e->channel];
	bool counter = e->kind == PMON_TRACE_COUNTER_EV;
	cairo_t *cr = p->cr;
	double x = floor(x_of(p, e->ns)) + 0.5, y = row_y(l, k, 0);

	if (l->tick_px[k] == x && l->tick_ch[k] == e->channel)
		return;
	l->tick_px[k] = x;
	l->tick_ch[k] = e->channel;
	set(cr, c->mark);
	cairo_set_line_width(cr, 1);
	cairo_move_to(cr, x, y + 4);
	cairo_line_to(cr, x, y + ROW - 1);
	cairo_stroke(cr);
	if (counter) {
		cairo_arc(cr, x, y + 5, 2.6, 0, 2 * M_PI);
	} else {
		cairo_move_to(cr, x - 3.5, y + 1);
		cairo_line_to(cr, x + 3.5, y + 1);
		cairo_line_to(cr, x, y + 7);
		cairo_close_path(cr);
	}
	cairo_fill(cr);
	if (x + 40 < next_x) {
		char lab[NAME_MAX_BYTES + 32];
		if (counter || (e->flags & PMON_TRACE_EV_KERNEL))
			pmon__fmt(lab, sizeof(lab), "%s=%lld", c->name, (long long)e->value);
		else
			pmon__fmt(lab, sizeof(lab), "%s", c->name);
		font(cr, 9, false);
		double w = text_w(cr, lab);
		if (x + 4 + w + 6 <= next_x)
			text(cr, x + 4, y + ROW - 4, lab, A_START, C_MUTED);
	}
}

/* Where the tick after event @j of section @k of @l is drawn: the window's
 * end if none; @j's own x (no room for a label) when it lies behind more
 * than 64 spans. */
static double next_tick_x(const struct pic *p, const struct lane *l, int k, size_t j)
{
	const struct pmon_trace_event *e = pmon_trace_reader__event(p->r, p->order[l->first + j]);
	for (size_t q = j + 1, seen = 0; q < l->n; q++) {
		const struct pmon_trace_event *n =
			pmon_trace_reader__event(p->r, p->order[l->first + q]);
		if (n->ns >= p->to)
			break;
		if (!!(n->flags & PMON_TRACE_EV_KERNEL) != k)
			continue;
		if (n->kind == PMON_TRACE_MARK_EV || n->kind == PMON_TRACE_COUNTER_EV)
			return x_of(p, n->ns) - 4;
		if (++seen == 64)
			return x_of(p, e->ns);
	}
	return p->x1;
}

/* A lane over its background (laid by draw(), under the grid). */
static int draw_lane(struct pic *p, struct lane *l)
{
	cairo_t *cr = p->cr;
	char lab[64];

	set(cr, C_SEP);
	cairo_set_line_width(cr, 1);
	cairo_move_to(cr, 0, l->y + l->h - 0.5);
	cairo_line_to(cr, p->W, l->y + l->h - 0.5);
	cairo_stroke(cr);
	/* the label column: the thread, and which rows are the kernel's */
	font(cr, 11, true);
	pmon__fmt(lab, sizeof(lab), "tid %d", (int)l->tid);
	text(cr, 8, l->y + PAD + 13, lab, A_START, C_TEXT);
	if (l->tid == pmon_trace_reader__info(p->r)->pid) {
		font(cr, 9, false);
		text(cr, 8, l->y + PAD + 25, "main thread", A_START, C_MUTED);
	}
	if (l->has[0] && l->has[1]) {
		double y = row_y(l, 1, 0);
		set(cr, C_SEP);
		static const double dash[] = { 2, 3 };
		cairo_set_dash(cr, dash, 2, 0);
		cairo_move_to(cr, LEFT - 60, floor(y) + 0.5);
		cairo_line_to(cr, p->x1, floor(y) + 0.5);
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
	}
	font(cr, 10, false);
	for (int k = 0; k < 2; k++)
		if (l->has[k])
			text(cr, LEFT - 8, row_y(l, k, 0) + 13, k ? "kernel" : "hooks", A_END,
			     C_MUTED);

	/* the events, clipped to the time area */
	cairo_save(cr);
	cairo_rectangle(cr, LEFT, l->y, p->x1 - LEFT, l->h);
	cairo_clip(cr);
	for (int k = 0; k < 2; k++) {
		l->nopen[k] = 0;
		l->tick_px[k] = -1;
		for (int d = 0; d < 16; d++)
			l->thin_px[k][d] = -1;
		for (size_t j = 0; j < l->n; j++) {
			const struct pmon_trace_event *e =
				pmon_trace_reader__event(p->r, p->order[l->first + j]);
			if (!!(e->flags & PMON_TRACE_EV_KERNEL) != k || !e->channel ||
			    e->channel > p->nch)
				continue;
			if (e->kind == PMON_TRACE_BEGIN_EV) {
				if (push_open(l, k, e->channel, e->ns)) {
					cairo_restore(cr);
					return -ENOMEM;
				}
			} else if (e->kind == PMON_TRACE_END_EV) {
				uint64_t b;
				size_t d = pop_open(l, k, e->channel, &b);
				if (d)
					span(p, l, k, (unsigned)(d - 1), e->channel, b, e->ns,
					     false);
			} else if (e->ns >= p->from && e->ns < p->to) {
				tick(p, l, k, e, next_tick_x(p, l, k, j));
			}
		}
		/* spans never ended run to the window's end */
		for (size_t d = 0; d < l->nopen[k]; d++)
			span(p, l, k, (unsigned)d, l->open[k][d].channel, l->open[k][d].ns, p->to,
			     true);
	}
	cairo_restore(cr);
	return 0;
}

/* ---- the legend --------------------------------------------------------- */

/* One swatch per channel with an event: a bar for a span channel, a
 * triangle for instants, a dot for counters; the hooks' first. Lays out
 * only (@draw false) to learn the height. Return: the legend's bottom. */
static double legend(struct pic *p, double y0, bool draw)
{
	cairo_t *cr = p->cr;
	double x = 8, y = y0 + 30;
	size_t shown = 0, more = 0;

	if (draw) {
		font(cr, 11, true);
		text(cr, 8, y0 + 14, "channels", A_START, C_TEXT);
		font(cr, 10, false);
		text(cr, 80, y0 + 14,
		     "bar: a span (begin .. end; dashed: never ended), triangle: an instant, "
		     "dot: a counter value",
		     A_START, C_MUTED);
	}
	for (int k = 0; k < 2; k++) {
		for (size_t i = 1; i <= p->nch; i++) {
			const struct chan *c = &p->ch[i];
			if (c->kernel != k || !(c->spans || c->marks || c->counters))
				continue;
			if (shown == MAX_LEGEND) {
				more++;
				continue;
			}
			font(cr, 10, false);
			char lab[NAME_MAX_BYTES + 16];
			pmon__fmt(lab, sizeof(lab), "%s%s", c->name, k ? " (kernel)" : "");
			double w = 16 + text_w(cr, lab) + 18;
			if (x > 8 && x + w > p->W - 8) {
				x = 8;
				y += 18;
			}
			if (draw) {
				if (c->spans) {
					set(cr, c->fill);
					cairo_rectangle(cr, x, y - 9, 12, 10);
					cairo_fill(cr);
				} else if (c->counters) {
					set(cr, c->mark);
					cairo_arc(cr, x + 6, y - 4, 3.5, 0, 2 * M_PI);
					cairo_fill(cr);
				} else {
					set(cr, c->mark);
					cairo_move_to(cr, x + 1, y - 9);
					cairo_line_to(cr, x + 11, y - 9);
					cairo_line_to(cr, x + 6, y);
					cairo_close_path(cr);
					cairo_fill(cr);
				}
				text(cr, x + 16, y, lab, A_START, C_TEXT);
			}
			x += w;
			shown++;
		}
	}
	if (more) {
		char lab[64];
		pmon__fmt(lab, sizeof(lab), "and %zu more", more);
		if (draw) {
			font(cr, 10, false);
			text(cr, x, y, lab, A_START, C_MUTED);
		}
	}
	return y + 12;
}

/* ---- the picture -------------------------------------------------------- */

static void title(struct pic *p)
{
	const struct pmon_trace_info *in = pmon_trace_reader__info(p->r);
	char cmd[300], a[64], b[64], len[32], align[160], line[640];
	cairo_t *cr = p->cr;

	pmon__plot_clean_text(in->command, cmd, 120);
	pmon__fmt(line, sizeof(line), "pmon trace: %s (pid %d)", cmd[0] ? cmd : "?", (int)in->pid);
	font(cr, 13, true);
	text(cr, 8, 18, line, A_START, C_TEXT);
	/* the window's ends to a thousandth of its length */
	struct axis_fmt f = axis_fmt(p->to, nice_step((double)(p->to - p->from) / 1000));
	axis_label(a, sizeof(a), p->from, &f);
	axis_label(b, sizeof(b), p->to, &f);
	fmt_dur(len, sizeof(len), (double)(p->to - p->from));
	/* The alignment the table's header states: measured on a kernel event
	 * where the trace has them (TCLK), else the TSC/clock bracket. */
	if (in->kernel_align_ns != UINT32_MAX)
		pmon__fmt(align, sizeof(align),
			  "kernel events aligned with the hooks to %u ns (%s)", in->kernel_align_ns,
			  in->align_measured_with);
	else
		pmon__fmt(align, sizeof(align),
			  "hooks aligned with CLOCK_MONOTONIC to \xc2\xb1%u ns", in->align_err_ns);
	pmon__fmt(line, sizeof(line), "window %s .. %s from the trace's start (%s); %zu events; %s",
		  a, b, len, pmon_trace_reader__nevents(p->r), align);
	font(cr, 10, false);
	text(cr, 8, 34, line, A_START, C_MUTED);
}

static int draw(struct pic *p)
{
	cairo_t *cr = p->cr;
	double lanes_end = p->drawn ? p->lanes[p->drawn - 1].y + p->lanes[p->drawn - 1].h : TOP;

	set(cr, C_BG);
	cairo_paint(cr);
	title(p);
	for (size_t i = 0; i < p->drawn; i++)
		if (i % 2) {
			set(cr, C_LANE_ALT);
			cairo_rectangle(cr, 0, p->lanes[i].y, p->W, p->lanes[i].h);
			cairo_fill(cr);
		}
	draw_grid(p, TOP, lanes_end);
	draw_axis(p, TOP - 1, false);
	if (lanes_end - TOP > 600) /* a tall picture: the axis below the lanes too */
		draw_axis(p, lanes_end, true);
	set(cr, C_SEP);
	cairo_set_line_width(cr, 1);
	cairo_move_to(cr, LEFT - 0.5, TOP);
	cairo_line_to(cr, LEFT - 0.5, lanes_end);
	cairo_stroke(cr);
	for (size_t i = 0; i < p->drawn; i++)
		if (draw_lane(p, &p->lanes[i]) < 0)
			return -ENOMEM;
	font(cr, 11, false);
	if (!p->nl)
		text(cr, (LEFT + p->x1) / 2, TOP + 24, "no events in the trace", A_MIDDLE, C_WARN);
	if (p->drawn < p->nl) {
		char lab[160];
		pmon__fmt(lab, sizeof(lab),
			  "%zu more threads not drawn: a picture is at most %.0f px high",
			  p->nl - p->drawn, MAX_HEIGHT);
		text(cr, 8, lanes_end + 14, lab, A_START, C_WARN);
	}
	legend(p, p->legend_y, true);
	return 0;
}

/* Cairo's writes into the caller's stream, keeping the first failure's
 * reason: cairo says only CAIRO_STATUS_WRITE_ERROR, and a full disk
 * should be called one. */
struct sink {
	FILE *f;
	int err;
};

static cairo_status_t write_out(void *closure, const unsigned char *data, unsigned int len)
{
	struct sink *s = closure;

	errno = 0;
	if (fwrite(data, 1, len, s->f) == len)
		return CAIRO_STATUS_SUCCESS;
	if (!s->err)
		s->err = errno ? errno : EIO;
	return CAIRO_STATUS_WRITE_ERROR;
}

/* Metrics that do not depend on the surface: hinting off, so that a name
 * measured for the layout is the same width on SVG and PNG. */
static void font_options(cairo_t *cr)
{
	cairo_font_options_t *fo = cairo_font_options_create();
	cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
	cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
	cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
	cairo_set_font_options(cr, fo);
	cairo_font_options_destroy(fo);
}

/* Lanes, their rows, the channels' kinds, each lane's events in time order. */
static int layout(struct pic *p)
{
	size_t nev = pmon_trace_reader__nevents(p->r);
	size_t *lane_ix = malloc((nev ? nev : 1) * sizeof(*lane_ix));

	p->order = malloc((nev ? nev : 1) * sizeof(*p->order));
	if (!lane_ix || !p->order) {
		free(lane_ix);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nev; i++) {
		const struct pmon_trace_event *e = pmon_trace_reader__event(p->r, i);
		struct lane *l = lane_of(p, e->tid);
		if (!l) {
			free(lane_ix);
			return -ENOMEM;
		}
		lane_ix[i] = (size_t)(l - p->lanes);
		l->n++;
		int k = !!(e->flags & PMON_TRACE_EV_KERNEL);
		l->has[k] = true;
		if (!e->channel || e->channel > p->nch)
			continue; /* not drawn */
		struct chan *c = &p->ch[e->channel];
		uint64_t b;
		/* the depths as drawing will find them (ends that match no
		 * begin, ends out of order) */
		if (e->kind == PMON_TRACE_BEGIN_EV) {
			if (push_open(l, k, e->channel, e->ns)) {
				free(lane_ix);
				return -ENOMEM;
			}
			if (l->nopen[k] > l->depth_max[k])
				l->depth_max[k] = (unsigned)l->nopen[k];
			c->spans = true;
		} else if (e->kind == PMON_TRACE_END_EV) {
			(void)pop_open(l, k, e->channel, &b);
		} else {
			l->ticks[k] = true;
			if (e->kind == PMON_TRACE_COUNTER_EV)
				c->counters = true;
			else
				c->marks = true;
		}
	}
	/* each lane's events together, in time order (a counting sort) */
	for (size_t i = 0, at = 0; i < p->nl; i++) {
		p->lanes[i].first = at;
		at += p->lanes[i].n;
		p->lanes[i].n = 0;
	}
	for (size_t i = 0; i < nev; i++) {
		struct lane *l = &p->lanes[lane_ix[i]];
		p->order[l->first + l->n++] = i;
	}
	free(lane_ix);
	/* rows: a tick row where there are instants or counters, then one
	 * per nesting depth; a lane keeps its height when the window moves */
	double y = TOP, max_h = fmin(MAX_HEIGHT, floor(MAX_PIXELS / p->W));
	for (size_t i = 0; i < p->nl; i++) {
		struct lane *l = &p->lanes[i];
		for (int k = 0; k < 2; k++) {
			l->rows[k] = (l->ticks[k] ? 1 : 0) + l->depth_max[k];
			if (l->has[k] && !l->rows[k])
				l->rows[k] = 1; /* ends without begins only */
		}
		l->y = y;
		l->h = 2 * PAD + fmax(2, (double)(l->rows[0] + l->rows[1])) * ROW;
		y += l->h;
	}
	/* as many lanes as leave room for the legend under the height limit */
	p->drawn = p->nl;
	for (;;) {
		double end = p->drawn ? p->lanes[p->drawn - 1].y + p->lanes[p->drawn - 1].h : TOP;
		p->legend_y = end + (p->drawn < p->nl ? 24 : 8) + (p->nl ? 0 : 40);
		p->H = ceil(legend(p, p->legend_y, false) + 10);
		if (p->H <= max_h || !p->drawn)
			break;
		p->drawn--;
	}
	if (p->H > max_h)
		p->H = max_h;
	return 0;
}

static int channels(struct pic *p)
{
	p->nch = pmon_trace_reader__nchannels(p->r);
	p->ch = calloc(p->nch + 1, sizeof(*p->ch));
	if (!p->ch)
		return -ENOMEM;
	font(p->cr, 10, false);
	for (size_t i = 1; i <= p->nch; i++) {
		struct chan *c = &p->ch[i];
		const char *name = pmon_trace_reader__channel(p->r, (uint32_t)i);
		pmon__plot_clean_text(name ? name : "?", c->name, sizeof(c->name));
		c->kernel = pmon_trace_reader__channel_kernel(p->r, (uint32_t)i);
		double h = hue(c->name);
		/* the kernel's greyer, so that a lane's two sections differ */
		c->fill = c->kernel ? hsl(h, 0.28, 0.66) : hsl(h, 0.62, 0.66);
		c->mark = hsl(h, 0.70, 0.34);
		c->name_w = text_w(p->cr, c->name);
	}
	return 0;
}

int pmon_plot_trace(const struct pmon_trace_reader *r, FILE *out,
		    const struct pmon_plot_trace_opts *o)
{
	struct pic p = { .r = r };
	struct sink sink = { .f = out };
	cairo_surface_t *scratch = NULL, *sf = NULL;
	cairo_status_t st = CAIRO_STATUS_SUCCESS;
	size_t nev = pmon_trace_reader__nevents(r);
	int err = 0;

	if (!o)
		return pmon__err(-EINVAL, "pmon_plot_trace: no options");
	if ((err = PMON_OPTS_CHECK(o, struct pmon_plot_trace_opts, width)))
		return err;
	if (o->format != PMON_PLOT_SVG && o->format != PMON_PLOT_PNG)
		return pmon__err(-EINVAL, "pmon_plot_trace: format %d is neither SVG nor PNG",
				 (int)o->format);
	p.from = o->from_ns;
	p.to = o->to_ns ? o->to_ns : nev ? pmon_trace_reader__event(r, nev - 1)->ns + 1 : 1;
	if (p.to <= p.from)
		return pmon__err(-EINVAL, "the window is empty: it ends at or before its start");
	p.W = o->width ? o->width : 1200;
	if (p.W < LEFT + RIGHT + 200 || p.W > 20000)
		return pmon__err(-EINVAL, "width %u: %d .. 20000 px", o->width,
				 PMON_PLOT_TRACE_LEFT + PMON_PLOT_TRACE_RIGHT + 200);
	p.x1 = p.W - RIGHT;
	p.px_per_ns = (p.x1 - LEFT) / (double)(p.to - p.from);

	locale_t prev = pmon__c_locale_enter(); /* "1.5 ms", never "1,5 ms" */
	/* measure on a scratch surface, then draw the picture at its size */
	scratch = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
	p.cr = cairo_create(scratch);
	font_options(p.cr);
	err = channels(&p);
	if (!err)
		err = layout(&p);
	cairo_destroy(p.cr);
	p.cr = NULL;
	if (err)
		goto out;
	if (o->format == PMON_PLOT_SVG) {
		sf = cairo_svg_surface_create_for_stream(write_out, &sink, p.W, p.H);
		/* pixels, as the PNG: cairo 1.16 says pt by default */
		cairo_svg_surface_set_document_unit(sf, CAIRO_SVG_UNIT_PX);
	} else {
		sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)p.W, (int)p.H);
	}
	p.cr = cairo_create(sf);
	font_options(p.cr);
	err = draw(&p);
	st = cairo_status(p.cr);
	cairo_destroy(p.cr);
	if (st == CAIRO_STATUS_SUCCESS && o->format == PMON_PLOT_PNG)
		st = cairo_surface_write_to_png_stream(sf, write_out, &sink);
	cairo_surface_finish(sf);
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_status(sf);
	errno = 0;
	if (st == CAIRO_STATUS_SUCCESS && fflush(out)) {
		sink.err = errno ? errno : EIO;
		st = CAIRO_STATUS_WRITE_ERROR;
	}
	if (err)
		;
	else if (st == CAIRO_STATUS_NO_MEMORY)
		err = -ENOMEM;
	else if (st == CAIRO_STATUS_WRITE_ERROR && sink.err)
		err = pmon__err(-sink.err, "cannot write the timeline: %s", strerror(sink.err));
	else if (st != CAIRO_STATUS_SUCCESS)
		err = pmon__err(-EIO, "cannot draw the timeline: %s", cairo_status_to_string(st));
out:
	pmon__c_locale_leave(prev);
	cairo_surface_destroy(sf);
	cairo_surface_destroy(scratch);
	for (size_t i = 0; i < p.nl; i++) {
		free(p.lanes[i].open[0]);
		free(p.lanes[i].open[1]);
	}
	free(p.lanes);
	free(p.order);
	free(p.ch);
	if (err == -ENOMEM)
		pmon__err(err, "out of memory drawing %zu events", nev);
	return err;
}
