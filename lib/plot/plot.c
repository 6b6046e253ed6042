// SPDX-License-Identifier: MIT
/*
 * pmon/plot.h: interval logs to series, series to SVG or PNG with cairo.
 * The seeds' P5MON and PTACH drew an "oscilloscope" of event rates; this is
 * the same picture, for a file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <strings.h>

#include <cairo.h>
#include <jansson.h>

#include <pmon/output.h>

#include "internal.h"
#include "plot/text.h"
#include <pmon/plot.h>

void pmon_plot_data_release(struct pmon_plot_data *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->s[i].t);
		free(d->s[i].v);
	}
	free(d->s);
	memset(d, 0, sizeof(*d));
}

/* Find or add a series; NULL with errno ENOMEM, or E2BIG past the panels a
 * picture can hold. */
static struct pmon_series *series(struct pmon_plot_data *d, const char *name, const char *unit)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->s[i].name, name))
			return &d->s[i];
	if (d->n == PMON_PLOT_MAX_SERIES) {
		errno = E2BIG;
		return NULL;
	}
	struct pmon_series *s = realloc(d->s, (d->n + 1) * sizeof(*s));
	if (!s)
		return NULL;
	d->s = s;
	s = &d->s[d->n++];
	memset(s, 0, sizeof(*s));
	pmon__strlcpy(s->name, name, sizeof(s->name));
	pmon__strlcpy(s->unit, unit, sizeof(s->unit));
	return s;
}

/* Add a point; NAN is a gap. */
static int point(struct pmon_series *s, double t, double v)
{
	/* Two arrays of one length, grown from the same capacity. */
	size_t ct = s->cap, cv = s->cap;
	if (PMON_GROW(&s->t, &ct, s->n + 1) || PMON_GROW(&s->v, &cv, s->n + 1))
		return -ENOMEM;
	s->cap = ct < cv ? ct : cv;
	s->t[s->n] = t;
	s->v[s->n++] = v;
	return 0;
}

static bool number(const char *s, double *v)
{
	char *end;

	if (!s || !*s)
		return false;
	*v = pmon__strtod_c(s, &end);
	return end != s && *end == '\0' && isfinite(*v);
}

/* Previous interval end per series, to turn counts into rates. */
static double prev_t(const struct pmon_series *s)
{
	return s->n ? s->t[s->n - 1] : 0;
}

static int add_count(struct pmon_plot_data *d, const char *event, const char *unit, double t,
		     const char *value)
{
	char u[48];
	double v;

	pmon__fmt(u, sizeof(u), "%s%s/s", unit, *unit ? "" : "events");
	struct pmon_series *s = series(d, event, u);
	if (!s)
		return -errno;
	double dt = t - prev_t(s), rate = number(value, &v) && dt > 0 ? v / dt : NAN;
	return point(s, t, isfinite(rate) ? rate : NAN); /* an overflowing rate is a gap */
}

static int add_value(struct pmon_plot_data *d, const char *domain, const char *metric,
		     const char *unit, double t, const char *value)
{
	char name[160];
	double v;

	pmon__fmt(name, sizeof(name), "%s %s", domain, metric);
	struct pmon_series *s = series(d, name, unit);
	if (!s)
		return -errno;
	return point(s, t, number(value, &v) ? v : NAN);
}

/* A value already per second (pmon rdt's -e columns). */
static int add_rate(struct pmon_plot_data *d, const char *event, const char *unit, double t,
		    const char *value)
{
	double v;
	struct pmon_series *s = series(d, event, unit);

	if (!s)
		return -errno;
	return point(s, t, number(value, &v) ? v : NAN);
}

/* Split @line at @sep into at most @max fields, in place. A field that
 * starts with '"' is quoted as RFC 4180 says (a doubled quote is a quote):
 * pmon rdt quotes an event name holding the separator. Return: the number
 * of fields; more than @max come back as @max + 1 (the rest unsplit). */
static int split(char *line, char sep, char **f, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		if (n == max)
			return max + 1;
		f[n++] = p;
		if (*p == '"') {
			char *w = p;
			for (p++; *p; p++) {
				if (*p == '"' && p[1] != '"')
					break;
				*w++ = *p;
				if (*p == '"')
					p++;
			}
			if (*p == '"')
				p++;
			*w = '\0';
			if (*p != sep)
				return n; /* text after the closing quote: ends here */
		} else {
			p = strchr(p, sep);
			if (!p)
				return n;
		}
		*p++ = '\0';
	}
}

/* pmon rdt's CSV header: time, domain, the three RDT columns, then one
 * column per -e event, "NAME UNIT/s" (docs/rdt.md). */
struct rdt_cols {
	int n; /* fields per row: 5 + events */
	char name[PMON_PLOT_MAX_SERIES][160];
	char unit[PMON_PLOT_MAX_SERIES][48];
};

static int rdt_header(char *line, char sep, struct rdt_cols *c, const char *path, unsigned ln)
{
	char *fld[5 + PMON_PLOT_MAX_SERIES];
	int nf = split(line, sep, fld, 5 + PMON_PLOT_MAX_SERIES);

	if (nf < 5 || strcmp(fld[1], "domain"))
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s:%u: a header that is not an RDT log's (time, domain, ...)",
				 path, ln);
	if (nf > 5 + PMON_PLOT_MAX_SERIES)
		return -E2BIG;
	c->n = nf;
	for (int i = 5; i < nf; i++) {
		char *col = fld[i], *sp = strrchr(col, ' ');
		size_t len = strlen(col);
		if (!*col || !sp || sp == col || len < 2 || strcmp(col + len - 2, "/s"))
			return pmon__err(-PMON_ERRNO__PARSE,
					 "%s:%u: column %d '%.40s' is not 'EVENT UNIT/s'", path, ln,
					 i + 1, col);
		*sp = '\0';
		pmon__strlcpy(c->name[i - 5], col, sizeof(c->name[0]));
		pmon__strlcpy(c->unit[i - 5], sp + 1, sizeof(c->unit[0]));
	}
	return 0;
}

/*
 * A log is outside input (pmon plot reads files anyone may have written), so
 * every field read from a JSON record is type-checked before use: jansson's
 * accessors return NULL or 0 for a value of another type, and a NULL event
 * name used to reach strcmp(). Fields pmon does not read are ignored.
 */
static int json_time(json_t *j, const char *key, double *t, const char *file, unsigned ln)
{
	json_t *x = json_object_get(j, key);

	if (!json_is_number(x) || !isfinite(json_number_value(x)) || json_number_value(x) < 0)
		return pmon__err(-PMON_ERRNO__PARSE,
				 "%s:%u: \"%s\" must be a number of seconds (0 or more)", file, ln,
				 key);
	*t = json_number_value(x);
	return 0;
}

static int json_name(json_t *j, const char *key, const char **s, const char *file, unsigned ln)
{
	json_t *x = json_object_get(j, key);

	if (!json_is_string(x) || !*json_string_value(x))
		return pmon__err(-PMON_ERRNO__PARSE, "%s:%u: \"%s\" must be a non-empty string",
				 file, ln, key);
	*s = json_string_value(x);
	return 0;
}

/* An optional number: absent or null is a gap (val stays ""). */
static int json_value(json_t *j, const char *key, char *val, size_t len, const char *file,
		      unsigned ln)
{
	json_t *x = json_object_get(j, key);

	val[0] = '\0';
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_number(x))
		return pmon__err(-PMON_ERRNO__PARSE, "%s:%u: \"%s\" must be a number or absent",
				 file, ln, key);
	pmon__fmt(val, len, "%.17g", json_number_value(x));
	return 0;
}

static int json_line(struct pmon_plot_data *d, const char *line, const char *file, unsigned ln)
{
	json_error_t e;
	json_t *j = json_loads(line, JSON_REJECT_DUPLICATES, &e);
	int err = 0;
	double t;

	if (!j || !json_is_object(j)) {
		json_decref(j);
		return pmon__err(-PMON_ERRNO__PARSE, "%s:%u: not a JSON object: %s", file, ln,
				 j ? "another JSON value" : e.text);
	}
	if (json_object_get(j, "type") || json_object_get(j, "schema")) {
		json_decref(j); /* a summary or region record: not an interval */
		return 0;
	}
	if (json_object_get(j, "interval") && json_object_get(j, "event")) {
		const char *event, *unit = "";
		char val[64];
		json_t *u = json_object_get(j, "unit");
		if (u && !json_is_string(u))
			err = pmon__err(-PMON_ERRNO__PARSE, "%s:%u: \"unit\" must be a string",
					file, ln);
		else if (u)
			unit = json_string_value(u);
		if (!err)
			err = json_time(j, "interval", &t, file, ln);
		if (!err)
			err = json_name(j, "event", &event, file, ln);
		if (!err)
			err = json_value(j, "value", val, sizeof(val), file, ln);
		if (!err)
			err = add_count(d, event, unit, t, val);
	} else if (json_object_get(j, "time") && json_object_get(j, "domain")) {
		static const struct {
			const char *key, *metric, *unit;
		} keys[] = { { "llc_occupancy_bytes", "llc_occupancy", "bytes" },
			     { "mbm_total_bytes_per_s", "mbm_total", "bytes/s" },
			     { "mbm_local_bytes_per_s", "mbm_local", "bytes/s" } };
		const char *domain;
		err = json_time(j, "time", &t, file, ln);
		if (!err)
			err = json_name(j, "domain", &domain, file, ln);
		for (size_t k = 0; k < PMON_ARRAY_SIZE(keys) && !err; k++) {
			char val[64];
			err = json_value(j, keys[k].key, val, sizeof(val), file, ln);
			if (!err)
				err = add_value(d, domain, keys[k].metric, keys[k].unit, t, val);
		}
	} else {
		err = pmon__err(-PMON_ERRNO__PARSE,
				"%s:%u: a JSON record without \"interval\"+\"event\" or "
				"\"time\"+\"domain\": not a pmon interval log",
				file, ln);
	}
	json_decref(j);
	return err;
}

/* @path opened for reading through the one safe input open: a FIFO or
 * device never blocks, and what is not a file is named as what it is.
 * Return: the stream, or NULL with the detail set and *@err. */
static FILE *open_log(const char *path, int *err)
{
	struct stat st;
	int fd = pmon__open_regular(path, false);
	FILE *f;

	if (fd == -EINVAL) {
		bool dir = !stat(path, &st) && S_ISDIR(st.st_mode);
		*err = pmon__err(-EINVAL, "%s: %s, not an interval log", path,
				 dir ? "a directory" : "not a regular file");
		return NULL;
	}
	if (fd < 0) {
		*err = pmon__err(fd, "%s: %s", path, strerror(-fd));
		return NULL;
	}
	if (!(f = fdopen(fd, "r"))) {
		*err = pmon__err(-errno, "%s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

/* The last line of @path, cut short (no newline), is left out: say so. */
static int torn_line(struct pmon_plot_data *d, const char *path, unsigned ln, const char *what)
{
	(void)pmon__fmt(d->warning, sizeof(d->warning),
			"%s:%u: the last line has no newline (%s cut short: a write that stopped, "
			"e.g. on a full disk): skipped",
			path, ln, what);
	return 0;
}

/* A log's longest line: pmon's records are a few hundred bytes (a JSON
 * one with every series, some KiB); a megabyte of anything without a
 * newline (/dev/zero's bytes copied to a file) is no log, and reading it
 * whole held the file in memory. */
#define LOG_LINE_MAX (1u << 20)

/* The next line of @f into *@buf (NUL-terminated, its newline kept).
 * Return: its length, 0 at the end, -EMSGSIZE past LOG_LINE_MAX, -ENOMEM. */
static ssize_t log_line(FILE *f, char **buf, size_t *cap)
{
	size_t len = 0;
	int c;

	while ((c = getc_unlocked(f)) != EOF) {
		if (len >= LOG_LINE_MAX)
			return -EMSGSIZE;
		if (PMON_GROW(buf, cap, len + 2))
			return -ENOMEM;
		(*buf)[len++] = (char)c;
		if (c == '\n')
			break;
	}
	if (len)
		(*buf)[len] = '\0';
	return (ssize_t)len;
}

int pmon_plot_read_log(const char *path, struct pmon_plot_data *d)
{
	int oerr = 0;
	FILE *f = open_log(path, &oerr);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned ln = 0;
	int err = 0;
	bool rdt = false;
	struct rdt_cols *rc = calloc(1, sizeof(*rc));

	memset(d, 0, sizeof(*d));
	if (!rc) {
		if (f)
			fclose(f);
		return -ENOMEM;
	}
	if (!f) {
		free(rc);
		return oerr;
	}
	while (!err && (len = log_line(f, &line, &cap)) > 0) {
		char *fld[5 + PMON_PLOT_MAX_SERIES];
		char sep;
		int nf;
		double t;

		ln++;
		/* Only the last line can lack its newline: log_line() hands it
		 * over at the end of the file. */
		bool torn = len && line[len - 1] != '\n';
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len || line[0] == '#')
			continue;
		if (line[0] == '{') {
			err = json_line(d, line, path, ln);
			if (err && torn)
				err = torn_line(d, path, ln, "not a whole JSON record");
			continue;
		}
		if (torn) { /* a CSV field may be cut anywhere: never trusted */
			err = torn_line(d, path, ln, "a CSV record");
			continue;
		}
		sep = strchr(line, ',') ? ',' : strchr(line, ';') ? ';' : '\t';
		if (!strncmp(line, "time", 4)) { /* pmon rdt's CSV header */
			rdt = true;
			err = rdt_header(line, sep, rc, path, ln);
			continue;
		}
		nf = split(line, sep, fld, rdt ? rc->n : 8);
		if (!number(fld[0], &t) || t < 0) {
			err = pmon__err(
				-PMON_ERRNO__PARSE,
				"%s:%u: '%.40s' is not a time: not a pmon interval log (CSV of "
				"counts or of RDT domains, time first)",
				path, ln, fld[0]);
		} else if ((rdt && nf == rc->n && !*fld[1]) || (!rdt && nf == 8 && !*fld[3])) {
			err = pmon__err(-PMON_ERRNO__PARSE, "%s:%u: the %s name is empty", path, ln,
					rdt ? "domain" : "event");
		} else if (rdt && nf == rc->n) {
			err = add_value(d, fld[1], "llc_occupancy", "bytes", t, fld[2]);
			if (!err)
				err = add_value(d, fld[1], "mbm_total", "bytes/s", t, fld[3]);
			if (!err)
				err = add_value(d, fld[1], "mbm_local", "bytes/s", t, fld[4]);
			/* -e events, per second already: on an interval's first
			 * row only, empty on the others (no point there). */
			for (int i = 5; i < nf && !err; i++)
				if (*fld[i])
					err = add_rate(d, rc->name[i - 5], rc->unit[i - 5], t,
						       fld[i]);
		} else if (!rdt && nf == 8) {
			/* time,value,unit,event,runtime,pct,metric,metric unit */
			err = add_count(d, fld[3], fld[2], t, fld[1]);
		} else {
			err = pmon__err(
				-PMON_ERRNO__PARSE,
				"%s:%u: %s%d fields: a record of counts has 8, one of RDT domains "
				"%d (5, and one per event in its header)",
				path, ln, nf > (rdt ? rc->n : 8) ? "more than " : "",
				nf > (rdt ? rc->n : 8) ? nf - 1 : nf, rdt ? rc->n : 5);
		}
	}
	if (!err && len == -EMSGSIZE)
		err = pmon__err(-PMON_ERRNO__PARSE,
				"%s:%u: a line longer than %u MiB, not a pmon interval log (its "
				"records are lines of a few KiB at most): not read further",
				path, ln + 1, LOG_LINE_MAX >> 20);
	else if (!err && len < 0)
		err = (int)len;
	free(rc);
	free(line);
	fclose(f);
	if (err == -E2BIG)
		err = pmon__err(-PMON_ERRNO__PARSE,
				"%s:%u: more than %d series: one picture holds %d panels", path, ln,
				PMON_PLOT_MAX_SERIES, PMON_PLOT_MAX_SERIES);
	if (!err && !d->n)
		err = pmon__err(-PMON_ERRNO__PARSE, "%s:%u: no interval records in the log", path,
				ln ? ln : 1);
	if (err)
		pmon_plot_data_release(d);
	return err;
}

/* ---- drawing --------------------------------------------------------- */

/*
 * One drawing, two back ends: cairo for PNG, and SVG written directly so
 * that points carry <title> tooltips and text stays text (cairo's SVG
 * surface has neither). Colours are 0..1 RGB; text is anchored at its start,
 * middle or end so that layout needs no measuring.
 */
enum anchor { A_START, A_MIDDLE, A_END };

struct rgb {
	double r, g, b;
};

static const struct rgb C_TEXT = { 0.10, 0.10, 0.10 }, C_MUTED = { 0.40, 0.40, 0.40 },
			C_FRAME = { 0.55, 0.55, 0.55 }, C_GRID = { 0.90, 0.90, 0.90 },
			C_TRACE = { 0.12, 0.38, 0.75 }, C_GAP = { 1.00, 0.90, 0.88 },
			C_GAPTXT = { 0.70, 0.25, 0.20 }, C_WHITE = { 1, 1, 1 };

struct canvas {
	cairo_t *cr; /* PNG */
	FILE *svg; /* SVG */
};

static void svg_escaped(FILE *f, const char *text)
{
	char t[1024];

	pmon__plot_clean_text(text, t, sizeof(t));
	pmon__xml_text(f, t);
}

static void svg_color(FILE *f, const char *attr, struct rgb c)
{
	fprintf(f, " %s=\"#%02x%02x%02x\"", attr, (unsigned)lround(c.r * 255),
		(unsigned)lround(c.g * 255), (unsigned)lround(c.b * 255));
}

static void set_color(struct canvas *cv, struct rgb c)
{
	cairo_set_source_rgb(cv->cr, c.r, c.g, c.b);
}

static void c_rect(struct canvas *cv, double x, double y, double w, double h, struct rgb fill,
		   const char *title)
{
	if (cv->svg) {
		fprintf(cv->svg, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", x, y,
			w, h);
		svg_color(cv->svg, "fill", fill);
		if (title) {
			fputs("><title>", cv->svg);
			svg_escaped(cv->svg, title);
			fputs("</title></rect>\n", cv->svg);
		} else {
			fputs("/>\n", cv->svg);
		}
		return;
	}
	set_color(cv, fill);
	cairo_rectangle(cv->cr, x, y, w, h);
	cairo_fill(cv->cr);
}

static void c_frame(struct canvas *cv, double x, double y, double w, double h, struct rgb c)
{
	if (cv->svg) {
		fprintf(cv->svg,
			"<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" "
			"fill=\"none\"",
			x, y, w, h);
		svg_color(cv->svg, "stroke", c);
		fputs("/>\n", cv->svg);
		return;
	}
	set_color(cv, c);
	cairo_set_line_width(cv->cr, 1);
	cairo_rectangle(cv->cr, x, y, w, h);
	cairo_stroke(cv->cr);
}

static void c_line(struct canvas *cv, const char *cls, double x1, double y1, double x2, double y2,
		   struct rgb c, double width)
{
	if (cv->svg) {
		fprintf(cv->svg,
			"<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke-width=\"%.1f\"",
			cls, x1, y1, x2, y2, width);
		svg_color(cv->svg, "stroke", c);
		fputs("/>\n", cv->svg);
		return;
	}
	set_color(cv, c);
	cairo_set_line_width(cv->cr, width);
	cairo_move_to(cv->cr, x1, y1);
	cairo_line_to(cv->cr, x2, y2);
	cairo_stroke(cv->cr);
}

/* A polyline of @n points (the trace between two gaps). */
static void c_path(struct canvas *cv, const double *x, const double *y, size_t n, struct rgb c,
		   double width)
{
	if (!n)
		return;
	if (cv->svg) {
		fputs("<polyline class=\"trace\" fill=\"none\" stroke-linejoin=\"round\" points=\"",
		      cv->svg);
		for (size_t i = 0; i < n; i++)
			fprintf(cv->svg, "%s%.1f,%.1f", i ? " " : "", x[i], y[i]);
		fprintf(cv->svg, "\" stroke-width=\"%.1f\"", width);
		svg_color(cv->svg, "stroke", c);
		fputs("/>\n", cv->svg);
		return;
	}
	set_color(cv, c);
	cairo_set_line_width(cv->cr, width);
	cairo_set_line_join(cv->cr, CAIRO_LINE_JOIN_ROUND);
	cairo_move_to(cv->cr, x[0], y[0]);
	for (size_t i = 1; i < n; i++)
		cairo_line_to(cv->cr, x[i], y[i]);
	cairo_stroke(cv->cr);
}

static void c_dot(struct canvas *cv, double x, double y, double r, struct rgb c, const char *title)
{
	if (cv->svg) {
		fprintf(cv->svg, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"", x, y,
			r);
		svg_color(cv->svg, "fill", c);
		fputs("><title>", cv->svg);
		svg_escaped(cv->svg, title);
		fputs("</title></circle>\n", cv->svg);
		return;
	}
	set_color(cv, c);
	cairo_arc(cv->cr, x, y, r, 0, 2 * M_PI);
	cairo_fill(cv->cr);
}

static void c_text(struct canvas *cv, double x, double y, const char *text, double size, bool bold,
		   enum anchor a, struct rgb c)
{
	char t[512];

	pmon__plot_clean_text(text, t, sizeof(t));
	if (cv->svg) {
		static const char *const anchors[] = { "start", "middle", "end" };
		fprintf(cv->svg,
			"<text x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" font-size=\"%.0f\" "
			"text-anchor=\"%s\"%s",
			x, y, size, anchors[a], bold ? " font-weight=\"bold\"" : "");
		svg_color(cv->svg, "fill", c);
		fputc('>', cv->svg);
		svg_escaped(cv->svg, t);
		fputs("</text>\n", cv->svg);
		return;
	}
	cairo_text_extents_t e;
	cairo_select_font_face(cv->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cv->cr, size);
	cairo_text_extents(cv->cr, t, &e);
	set_color(cv, c);
	cairo_move_to(cv->cr,
		      x -
			      (a == A_START	       ? 0
				       : a == A_MIDDLE ? e.x_advance / 2
						       : e.x_advance),
		      y);
	cairo_show_text(cv->cr, t);
}

/* ---- axes -------------------------------------------------------------- */

/* Heckbert's "nice numbers" (Graphics Gems, 1990): 1, 2, 5 x 10^k. */
static double nice_step(double x, bool round_it)
{
	double e = floor(log10(x)), f = x / pow(10, e), nf;

	if (round_it)
		nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
	else
		nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
	return nf * pow(10, e);
}

struct axis {
	double lo, hi, step; /* ticks at lo, lo + step, ... hi */
};

/* An axis over [lo, hi] with about @want ticks, widened to whole steps. */
static struct axis make_axis(double lo, double hi, int want)
{
	struct axis a;

	if (!(hi > lo)) { /* one value, or none */
		double m = fabs(hi) > 0 ? fabs(hi) : 1;
		lo = lo < 0 ? lo - m * 0.25 : 0;
		hi = hi > 0 ? hi + m * 0.25 : hi < 0 ? 0 : 1;
	}
	a.step = nice_step((hi - lo) / (want - 1), true);
	/* 80 / 0.1 is 800.0000000000001: not a reason for another tick */
	a.lo = floor(lo / a.step + 1e-9) * a.step;
	a.hi = ceil(hi / a.step - 1e-9) * a.step;
	/* At the ends of double's range (a log may say 1e308) the arithmetic
	 * overflows: plain quarters of what is representable. */
	if (!isfinite(a.step) || !isfinite(a.lo) || !isfinite(a.hi) || !(a.hi > a.lo) ||
	    !isfinite(a.hi - a.lo)) {
		a.lo = isfinite(lo) ? lo : -DBL_MAX / 2;
		a.hi = isfinite(hi) ? hi : DBL_MAX / 2;
		a.lo /= 2, a.hi /= 2; /* so that hi - lo stays finite */
		a.step = (a.hi - a.lo) / 4;
		a.lo *= 2, a.hi *= 2, a.step *= 2;
		if (!isfinite(a.hi - a.lo) || !(a.step > 0))
			a = (struct axis){ 0, 1, 0.25 };
	}
	return a;
}

/* How many steps the axis spans (at most 100). */
static int ticks(const struct axis *a)
{
	double n = round(a->hi / a->step - a->lo / a->step);

	return n >= 0 && n <= 100 ? (int)n : 0;
}

/* A tick label: SI suffix chosen by the axis's extent, decimals by the step. */
static void tick_label(double v, const struct axis *a, const char *unit, char *buf, size_t len)
{
	static const struct {
		double f;
		const char *s;
	} si[] = { { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" }, { 1, "" } };
	size_t i = 0;

	/* by the step: 0, 200, 400 .. 1000, not 0.2k; 0, 2k, 4k .. 10k */
	while (i + 1 < PMON_ARRAY_SIZE(si) && a->step < si[i].f)
		i++;
	double step = a->step / si[i].f;
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	if (dec > 6)
		dec = 6;
	if (fabs(v) < a->step * 1e-9) { /* "0", never "-0" or "0.0k" */
		pmon__fmt(buf, len, "0%s%s", unit && *unit ? " " : "", unit ? unit : "");
		return;
	}
	pmon__fmt(buf, len, "%.*f%s%s%s", dec, v / si[i].f, si[i].s, unit && *unit ? " " : "",
		  unit ? unit : "");
}

/* ---- the picture ------------------------------------------------------- */

/* Margins: y tick labels left of the frame, the panel's name above it, the
 * time axis's labels below the last one; nothing is drawn over the data. */
#define M_LEFT 78.0
#define M_RIGHT 28.0
#define M_TOP 44.0
#define M_BOTTOM 44.0
#define PANEL_HEAD 22.0 /* the name and unit above each panel */
#define PANEL_MIN 24.0 /* smallest drawable panel */

static void point_title(char *buf, size_t len, const struct pmon_series *s, double t0, double t,
			double v)
{
	char num[64];

	if (fabs(v) >= 1e4 || (v != 0 && fabs(v) < 1e-2))
		pmon__fmt(num, sizeof(num), "%.4g", v);
	else
		pmon__fmt(num, sizeof(num), "%.2f", v);
	pmon__fmt(buf, len, "%s: %s %s over %.3f-%.3f s", s->name, num, s->unit, t0, t);
}

static void draw_panel(struct canvas *cv, const struct pmon_series *s, const struct axis *ax,
		       double x0, double y0, double pw, double ph, bool last)
{
	char buf[512], label[64];
	double vmin = INFINITY, vmax = -INFINITY;
	size_t counted = 0, gaps = 0;

	for (size_t k = 0; k < s->n; k++)
		if (!isnan(s->v[k])) {
			vmin = fmin(vmin, s->v[k]);
			vmax = fmax(vmax, s->v[k]);
			counted++;
		} else {
			gaps++;
		}
	/* rates and sizes read best from zero */
	struct axis ay = counted ? make_axis(fmin(0, vmin), fmax(0, vmax), 5) : make_axis(0, 1, 5);
	double sx = pw / (ax->hi - ax->lo), sy = ph / (ay.hi - ay.lo);
#define X(t) (x0 + ((t)-ax->lo) * sx)
#define Y(v) (y0 + ph - ((v)-ay.lo) * sy)

	/* header: name at the frame's left, the y unit over the tick labels */
	c_text(cv, x0, y0 - 7, s->name, 12, true, A_START, C_TEXT);
	c_text(cv, x0 - 6, y0 - 7, s->unit, 10, false, A_END, C_MUTED);
	if (gaps) {
		pmon__fmt(buf, sizeof(buf), "shaded: %zu interval%s not counted", gaps,
			  gaps == 1 ? "" : "s");
		c_text(cv, x0 + pw, y0 - 7, buf, 10, false, A_END, C_GAPTXT);
	}
	/* intervals that were not counted: a band over (previous end, end] */
	for (size_t k = 0; k < s->n; k++)
		if (isnan(s->v[k])) {
			double t0 = k ? s->t[k - 1] : 0;
			pmon__fmt(buf, sizeof(buf), "%s: not counted over %.3f-%.3f s", s->name, t0,
				  s->t[k]);
			c_rect(cv, X(t0), y0, fmax(X(s->t[k]) - X(t0), 1.5), ph, C_GAP, buf);
		}
	/* grid and ticks: counted, not accumulated (a step below the values'
	 * resolution would never advance a sum) */
	int nyt = ticks(&ay), nxt = ticks(ax);
	for (int i = 0; i <= nyt; i++) {
		double v = ay.lo + i * ay.step;
		c_line(cv, "grid", x0, Y(v), x0 + pw, Y(v), C_GRID, 1);
		tick_label(v, &ay, NULL, label, sizeof(label));
		c_text(cv, x0 - 6, Y(v) + 4, label, 10, false, A_END, C_TEXT);
	}
	for (int i = 0; i <= nxt; i++) {
		double t = ax->lo + i * ax->step;
		c_line(cv, "grid", X(t), y0, X(t), y0 + ph, C_GRID, 1);
		c_line(cv, "tick", X(t), y0 + ph, X(t), y0 + ph + 4, C_FRAME, 1);
		if (last) {
			tick_label(t, ax, "s", label, sizeof(label));
			c_text(cv, X(t), y0 + ph + 17, label, 10, false, A_MIDDLE, C_TEXT);
		}
	}
	c_frame(cv, x0, y0, pw, ph, C_FRAME);
	if (!counted)
		c_text(cv, x0 + pw / 2, y0 + ph / 2 + 4, "no interval was counted", 11, false,
		       A_MIDDLE, C_GAPTXT);

	/* The trace: each interval's rate is flat over the interval it was
	 * measured in (previous end .. end), so a step line, broken at gaps. A
	 * single interval is a segment from its start, not a lone dot. */
	double *px = malloc(2 * s->n * sizeof(*px) + 1), *py = malloc(2 * s->n * sizeof(*py) + 1);
	size_t m = 0;
	if (px && py) {
		for (size_t k = 0; k <= s->n; k++) {
			if (k == s->n || isnan(s->v[k])) {
				c_path(cv, px, py, m, C_TRACE, 1.6);
				m = 0;
				continue;
			}
			double t0 = k ? s->t[k - 1] : 0;
			px[m] = X(t0), py[m++] = Y(s->v[k]);
			px[m] = X(s->t[k]), py[m++] = Y(s->v[k]);
		}
	}
	free(px);
	free(py);
	/* a dot at each interval's end, with its value as the tooltip */
	double r = s->n <= pw / 6 ? 2.4 : 1.2;
	for (size_t k = 0; k < s->n; k++) {
		if (isnan(s->v[k]))
			continue;
		point_title(buf, sizeof(buf), s, k ? s->t[k - 1] : 0, s->t[k], s->v[k]);
		c_dot(cv, X(s->t[k]), Y(s->v[k]), r, C_TRACE, buf);
	}
	if (last)
		c_text(cv, x0 + pw / 2, y0 + ph + 34, "time since start (s)", 11, false, A_MIDDLE,
		       C_MUTED);
#undef X
#undef Y
}

static void draw(struct canvas *cv, const struct pmon_plot_data *d, double W, double H)
{
	double tmax = 0;
	double slot = (H - M_TOP - M_BOTTOM) / (double)d->n, ph = slot - PANEL_HEAD - 8;
	double pw = W - M_LEFT - M_RIGHT;

	for (size_t i = 0; i < d->n; i++)
		for (size_t k = 0; k < d->s[i].n; k++)
			tmax = fmax(tmax, d->s[i].t[k]);
	struct axis ax = make_axis(0, tmax, 8);

	c_rect(cv, 0, 0, W, H, C_WHITE, NULL);
	c_text(cv, M_LEFT, 24, d->title, 14, true, A_START, C_TEXT);
	for (size_t i = 0; i < d->n; i++)
		draw_panel(cv, &d->s[i], &ax, M_LEFT, M_TOP + PANEL_HEAD + (double)i * slot, pw, ph,
			   i + 1 == d->n);
}

static int render_svg(const struct pmon_plot_data *d, const char *path, unsigned width,
		      unsigned height)
{
	/* The one way to open an output (pmon/output.h): a file is replaced
	 * whole when the picture is done, a device or FIFO is a stream. */
	struct pmon_output_opts oo = { .sz = sizeof(oo), .flags = PMON_OUTPUT_STREAM };
	struct pmon_output *out = pmon_output__open(path, &oo);
	FILE *f = pmon_output__file(out);
	struct canvas cv = { .svg = f };

	if (!f)
		return -errno;
	locale_t prev = pmon__c_locale_enter(); /* "1.5", never "1,5", in the XML */
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\">\n<title>",
		width, height, width, height);
	char t[512];
	pmon__plot_clean_text(d->title, t, sizeof(t));
	svg_escaped(f, t);
	fputs("</title>\n", f);
	draw(&cv, d, width, height);
	fputs("</svg>\n", f);
	pmon__c_locale_leave(prev);
	/* The buffered writes' failure: flushing again gives its reason
	 * (ENOSPC, EDQUOT) where the error flag alone says only that one
	 * failed; commit flushes and says it the same way. */
	if (ferror(f)) {
		errno = 0;
		int e = fflush(f) && errno ? errno : EIO;
		pmon_output__abandon(out);
		return pmon__err(-e, "cannot write '%s': %s", path, strerror(e));
	}
	return pmon_output__commit(out);
}

static cairo_status_t png_out(void *closure, const unsigned char *data, unsigned int len)
{
	return fwrite(data, 1, len, closure) == len ? CAIRO_STATUS_SUCCESS
						    : CAIRO_STATUS_WRITE_ERROR;
}

int pmon_plot_render(const struct pmon_plot_data *d, const char *path, unsigned width,
		     unsigned height)
{
	const char *ext = strrchr(path, '.');
	cairo_surface_t *sf;
	cairo_t *cr;

	if (!d->n)
		return pmon__err(-EINVAL, "nothing to plot");
	if (!ext || (strcasecmp(ext, ".svg") && strcasecmp(ext, ".png")))
		return pmon__err(-EINVAL, "'%s': the picture's name must end in .svg or .png",
				 path);
	if (width < 200 || width > 20000 || height < 100 || height > 20000)
		return pmon__err(-EINVAL, "size %ux%u: 200x100 .. 20000x20000", width, height);
	double need = M_TOP + M_BOTTOM + (double)d->n * (PANEL_HEAD + 8 + PANEL_MIN);
	if (height < need)
		return pmon__err(-EINVAL, "height %u is too small for %zu panels: at least %.0f",
				 height, d->n, ceil(need));
	if (!strcasecmp(ext, ".svg"))
		return render_svg(d, path, width, height);
	sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)width, (int)height);
	if (cairo_surface_status(sf)) {
		int e = pmon__err(-EIO, "%s: %s", path,
				  cairo_status_to_string(cairo_surface_status(sf)));
		cairo_surface_destroy(sf);
		return e;
	}
	cr = cairo_create(sf);
	draw(&(struct canvas){ .cr = cr }, d, width, height);
	cairo_status_t st = cairo_status(cr);
	cairo_destroy(cr);
	struct pmon_output_opts oo = { .sz = sizeof(oo), .flags = PMON_OUTPUT_STREAM };
	struct pmon_output *out = NULL;
	if (st == CAIRO_STATUS_SUCCESS && !(out = pmon_output__open(path, &oo))) {
		int e = -errno; /* before cairo's own calls touch errno */
		cairo_surface_destroy(sf);
		return e;
	}
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_write_to_png_stream(sf, png_out, pmon_output__file(out));
	cairo_surface_destroy(sf);
	if (st != CAIRO_STATUS_SUCCESS) {
		int e = EIO;
		errno = 0;
		if (out && st == CAIRO_STATUS_WRITE_ERROR && fflush(pmon_output__file(out)) &&
		    errno)
			e = errno; /* the reason of the write that failed */
		pmon_output__abandon(out);
		return pmon__err(-e, "cannot write '%s': %s", path,
				 e != EIO ? strerror(e) : cairo_status_to_string(st));
	}
	return pmon_output__commit(out);
}
