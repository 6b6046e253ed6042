// SPDX-License-Identifier: MIT
/*
 * pmon/plot.h: interval logs to series, series to SVG or PNG with cairo.
 * The seeds' P5MON and PTACH drew an "oscilloscope" of event rates; this is
 * the same picture, for a file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cairo-svg.h>
#include <cairo.h>
#include <jansson.h>

#include "internal.h"
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

static struct pmon_series *series(struct pmon_plot_data *d, const char *name, const char *unit)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->s[i].name, name))
			return &d->s[i];
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
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		double *nt = realloc(s->t, cap * sizeof(*nt)), *nv;
		if (!nt)
			return -ENOMEM;
		s->t = nt;
		nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	s->t[s->n] = t;
	s->v[s->n++] = v;
	return 0;
}

static bool number(const char *s, double *v)
{
	char *end;

	if (!s || !*s)
		return false;
	*v = strtod(s, &end);
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
		return -ENOMEM;
	double dt = t - prev_t(s);
	return point(s, t, number(value, &v) && dt > 0 ? v / dt : NAN);
}

static int add_value(struct pmon_plot_data *d, const char *domain, const char *metric,
		     const char *unit, double t, const char *value)
{
	char name[160];
	double v;

	pmon__fmt(name, sizeof(name), "%s %s", domain, metric);
	struct pmon_series *s = series(d, name, unit);
	if (!s)
		return -ENOMEM;
	return point(s, t, number(value, &v) ? v : NAN);
}

static int split(char *line, char sep, char **f, int max)
{
	int n = 0;

	for (char *p = line; n < max;) {
		f[n++] = p;
		p = strchr(p, sep);
		if (!p)
			break;
		*p++ = '\0';
	}
	return n;
}

static int json_line(struct pmon_plot_data *d, const char *line, const char *file, unsigned ln)
{
	json_error_t e;
	json_t *j = json_loads(line, 0, &e), *x;
	int err = 0;

	if (!j || !json_is_object(j)) {
		json_decref(j);
		return pmon__err(-PMON_ERRNO__PARSE, "%s:%u: not JSON: %s", file, ln, e.text);
	}
	if (json_object_get(j, "type") || json_object_get(j, "schema")) {
		json_decref(j); /* a summary or region record: not an interval */
		return 0;
	}
	if ((x = json_object_get(j, "interval")) && json_object_get(j, "event")) {
		char val[64] = "";
		json_t *v = json_object_get(j, "value");
		if (json_is_number(v))
			pmon__fmt(val, sizeof(val), "%.17g", json_number_value(v));
		const char *unit = json_string_value(json_object_get(j, "unit"));
		err = add_count(d, json_string_value(json_object_get(j, "event")), unit ? unit : "",
				json_number_value(x), val);
	} else if ((x = json_object_get(j, "time")) && json_object_get(j, "domain")) {
		static const struct {
			const char *key, *metric, *unit;
		} keys[] = { { "llc_occupancy_bytes", "llc_occupancy", "bytes" },
			     { "mbm_total_bytes_per_s", "mbm_total", "bytes/s" },
			     { "mbm_local_bytes_per_s", "mbm_local", "bytes/s" } };
		for (size_t k = 0; k < PMON_ARRAY_SIZE(keys) && !err; k++) {
			json_t *v = json_object_get(j, keys[k].key);
			char val[64] = "";
			if (json_is_number(v))
				pmon__fmt(val, sizeof(val), "%.17g", json_number_value(v));
			err = add_value(d, json_string_value(json_object_get(j, "domain")),
					keys[k].metric, keys[k].unit, json_number_value(x), val);
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

int pmon_plot_read_log(const char *path, struct pmon_plot_data *d)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned ln = 0;
	int err = 0;
	bool rdt = false;

	memset(d, 0, sizeof(*d));
	if (!f)
		return pmon__err(-errno, "%s: %s", path, strerror(errno));
	while (!err && (len = getline(&line, &cap, f)) >= 0) {
		char *fld[10];
		char sep;
		int nf;
		double t;

		ln++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len || line[0] == '#')
			continue;
		if (line[0] == '{') {
			err = json_line(d, line, path, ln);
			continue;
		}
		if (!strncmp(line, "time", 4)) { /* pmon rdt's CSV header */
			rdt = true;
			continue;
		}
		sep = strchr(line, ',') ? ',' : strchr(line, ';') ? ';' : '\t';
		nf = split(line, sep, fld, 10);
		if (!number(fld[0], &t)) {
			err = pmon__err(
				-PMON_ERRNO__PARSE,
				"%s:%u: '%.40s' is not a time: not a pmon interval log (pmon stat "
				"-I -x, or pmon rdt -x,)",
				path, ln, fld[0]);
		} else if (rdt && nf == 5) {
			err = add_value(d, fld[1], "llc_occupancy", "bytes", t, fld[2]);
			if (!err)
				err = add_value(d, fld[1], "mbm_total", "bytes/s", t, fld[3]);
			if (!err)
				err = add_value(d, fld[1], "mbm_local", "bytes/s", t, fld[4]);
		} else if (!rdt && nf == 8) {
			/* time,value,unit,event,runtime,pct,metric,metric unit */
			err = add_count(d, fld[3], fld[2], t, fld[1]);
		} else {
			err = pmon__err(-PMON_ERRNO__PARSE,
					"%s:%u: %d fields: a pmon stat -I record has 8, a pmon rdt "
					"record 5",
					path, ln, nf);
		}
	}
	free(line);
	fclose(f);
	if (!err && !d->n)
		err = pmon__err(-PMON_ERRNO__PARSE, "%s:%u: no interval records in the log", path,
				ln ? ln : 1);
	if (err)
		pmon_plot_data_release(d);
	return err;
}

/* ---- drawing --------------------------------------------------------- */

static void human(double v, char *buf, size_t len)
{
	const char *suffix = "";
	double a = fabs(v);

	if (a >= 1e12)
		v /= 1e12, suffix = "T";
	else if (a >= 1e9)
		v /= 1e9, suffix = "G";
	else if (a >= 1e6)
		v /= 1e6, suffix = "M";
	else if (a >= 1e3)
		v /= 1e3, suffix = "k";
	snprintf(buf, len, "%.3g%s", v, suffix);
}

static void draw(cairo_t *cr, const struct pmon_plot_data *d, double W, double H)
{
	const double top = 40, left = 70, right = 20, gap = 18;
	double ph = (H - top - 10) / (double)d->n - gap;
	double tmax = 0;
	char buf[64];

	for (size_t i = 0; i < d->n; i++)
		for (size_t k = 0; k < d->s[i].n; k++)
			tmax = fmax(tmax, d->s[i].t[k]);
	if (tmax <= 0)
		tmax = 1;
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
	cairo_set_font_size(cr, 14);
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_move_to(cr, left, 24);
	cairo_show_text(cr, d->title);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);

	for (size_t i = 0; i < d->n; i++) {
		const struct pmon_series *s = &d->s[i];
		double y0 = top + (double)i * (ph + gap), vmax = 0, vmin = 0;
		double pw = W - left - right;

		for (size_t k = 0; k < s->n; k++)
			if (!isnan(s->v[k]))
				vmax = fmax(vmax, s->v[k]), vmin = fmin(vmin, s->v[k]);
		if (vmax <= vmin)
			vmax = vmin + 1;
		/* frame and labels */
		cairo_set_line_width(cr, 1);
		cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
		cairo_rectangle(cr, left, y0, pw, ph);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
		cairo_set_font_size(cr, 11);
		cairo_move_to(cr, left + 6, y0 + 13);
		snprintf(buf, sizeof(buf), "%s", s->unit);
		cairo_show_text(cr, s->name);
		cairo_show_text(cr, "  [");
		cairo_show_text(cr, buf);
		cairo_show_text(cr, "]");
		human(vmax, buf, sizeof(buf));
		cairo_move_to(cr, 6, y0 + 10);
		cairo_show_text(cr, buf);
		human(vmin, buf, sizeof(buf));
		cairo_move_to(cr, 6, y0 + ph);
		cairo_show_text(cr, buf);
		if (i + 1 == d->n) {
			cairo_move_to(cr, left, y0 + ph + 13);
			cairo_show_text(cr, "0 s");
			snprintf(buf, sizeof(buf), "%.3g s", tmax);
			cairo_move_to(cr, left + pw - 40, y0 + ph + 13);
			cairo_show_text(cr, buf);
		}
		/* the trace; NAN breaks it */
		cairo_set_source_rgb(cr, 0.12, 0.38, 0.75);
		cairo_set_line_width(cr, 1.6);
		bool pen = false;
		for (size_t k = 0; k < s->n; k++) {
			if (isnan(s->v[k])) {
				pen = false;
				continue;
			}
			double x = left + pw * s->t[k] / tmax;
			double y = y0 + ph - (ph - 4) * (s->v[k] - vmin) / (vmax - vmin);
			if (pen)
				cairo_line_to(cr, x, y);
			else
				cairo_move_to(cr, x, y);
			pen = true;
		}
		cairo_stroke(cr);
		/* dots, so that a single point shows */
		for (size_t k = 0; k < s->n; k++) {
			if (isnan(s->v[k]))
				continue;
			double x = left + pw * s->t[k] / tmax;
			double y = y0 + ph - (ph - 4) * (s->v[k] - vmin) / (vmax - vmin);
			cairo_arc(cr, x, y, 2, 0, 2 * M_PI);
			cairo_fill(cr);
		}
	}
}

int pmon_plot_render(const struct pmon_plot_data *d, const char *path, unsigned width,
		     unsigned height)
{
	const char *ext = strrchr(path, '.');
	cairo_surface_t *sf;
	cairo_t *cr;
	bool svg;

	if (!d->n)
		return pmon__err(-EINVAL, "nothing to plot");
	if (!ext || (strcasecmp(ext, ".svg") && strcasecmp(ext, ".png")))
		return pmon__err(-EINVAL, "'%s': the picture's name must end in .svg or .png",
				 path);
	if (width < 200 || width > 20000 || height < 100 || height > 20000)
		return pmon__err(-EINVAL, "size %ux%u: 200x100 .. 20000x20000", width, height);
	svg = !strcasecmp(ext, ".svg");
	sf = svg ? cairo_svg_surface_create(path, width, height)
		 : cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)width, (int)height);
	if (cairo_surface_status(sf)) {
		int e = pmon__err(-EIO, "%s: %s", path,
				  cairo_status_to_string(cairo_surface_status(sf)));
		cairo_surface_destroy(sf);
		return e;
	}
	cr = cairo_create(sf);
	draw(cr, d, width, height);
	cairo_destroy(cr);
	cairo_status_t st = svg ? CAIRO_STATUS_SUCCESS : cairo_surface_write_to_png(sf, path);
	cairo_surface_finish(sf);
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_status(sf);
	cairo_surface_destroy(sf);
	if (st != CAIRO_STATUS_SUCCESS)
		return pmon__err(-EIO, "%s: %s", path, cairo_status_to_string(st));
	return 0;
}
