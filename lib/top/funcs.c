// SPDX-License-Identifier: MIT
/*
 * pmon top's functions view, perf top's: the selected event sampled on the
 * target (about 1000 samples a second per CPU), each interval's samples
 * named by libpmon-report's live profile (pmon_report_live: symbol, DSO
 * and the process with most of them) and shown by share; keys zoom into
 * the selected function's process or DSO and annotate it (its
 * instructions with the samples on each since the view opened). The
 * rates (screen.c) are one key away. Sampling is libpmon's
 * (pmon_sampler), naming libpmon-report's; this file holds the view.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "top/view.h"

#define FN_FREQ 1000 /* samples a second per CPU, as perf top's -F 1000 */

void top_funcs__close(struct top_view *v)
{
	struct top_funcs *f = &v->fn;

	pmon_sampler__close(f->smp);
	pmon_report_live__free(f->live);
	pmon_annotation_release(&f->ann);
	free(f->fn);
	f->smp = NULL;
	f->live = NULL;
	f->fn = NULL;
	f->n = f->sel = 0;
	f->text[0] = '\0';
}

/* The live profile's view: by function, within the zoom. */
static int set_view(struct top_funcs *f)
{
	char pid[16];
	struct pmon_report_opts o = { .sz = sizeof(o),
				      .sort_keys = "symbol,dso",
				      .event = f->text,
				      .pids = NULL,
				      .dsos = f->zoom_dso[0] ? f->zoom_dso : NULL };

	if (f->zoom_pid) {
		snprintf(pid, sizeof(pid), "%u", f->zoom_pid);
		o.pids = pid;
	}
	f->n = 0; /* the next interval is the zoom's */
	return f->live ? pmon_report_live__view(f->live, &o) : 0;
}

/*
 * (Re)open the sampler and the profile when the view is on and the
 * selected event or the ring changed. Opened before a command runs
 * (top_view__start()) it starts at the exec, as the per-process view's.
 */
void top_funcs__open(struct top_view *v)
{
	struct top_funcs *f = &v->fn;
	struct top_state *s = &v->s;

	if (!f->on) {
		if (f->smp)
			top_funcs__close(v);
		return;
	}
	if ((f->smp || f->why[0]) && !strcmp(f->text, s->ev[s->sel].text) && f->ring == s->ring)
		return;
	top_funcs__close(v);
	snprintf(f->text, sizeof(f->text), "%s", s->ev[s->sel].text);
	f->ring = s->ring;
	f->why[0] = '\0';
	char spec[160];
	snprintf(spec, sizeof(spec), "%s%s", f->text, top_ring__modifier(s->ring));
	struct pmon_evlist *l = pmon_evlist__new(NULL);
	struct pmon_sample_opts so = {
		.sz = sizeof(so), .freq = FN_FREQ, .pages = 64, .open = v->o.how
	};
	struct pmon_report_opts ro = { .sz = sizeof(ro), .sort_keys = "symbol,dso" };
	if (!(f->fn = calloc(TOP_MAXFN, sizeof(*f->fn))) || !l || pmon_evlist__add(l, spec) ||
	    !(f->smp = pmon_sampler__open(l, v->o.target, &so)) ||
	    !(f->live = pmon_report_live__new(pmon_sampler__sample_type(f->smp),
					      pmon_sampler__regs_user(f->smp), &ro)) ||
	    set_view(f) || (!v->o.how->enable_on_exec && pmon_sampler__enable(f->smp))) {
		snprintf(f->why, sizeof(f->why), "cannot sample %s: %s", spec, pmon_errdetail());
		char keep[sizeof(f->why)];
		memcpy(keep, f->why, sizeof(keep));
		top_funcs__close(v);
		memcpy(f->why, keep, sizeof(keep));
	}
	pmon_evlist__free(l);
}

static int add_record(void *ctx, const void *rec, size_t len)
{
	return pmon_report_live__add(ctx, rec, len);
}

/* The annotation of the selected function, from the samples so far. */
static void annotate(struct top_funcs *f)
{
	pmon_annotation_release(&f->ann);
	f->ann_why[0] = '\0';
	if (!f->n) {
		snprintf(f->ann_why, sizeof(f->ann_why), "no function selected");
		return;
	}
	if (pmon_report_live__annotate(f->live, f->fn[f->sel].symbol, f->fn[f->sel].dso, &f->ann))
		snprintf(f->ann_why, sizeof(f->ann_why), "cannot annotate '%.100s': %.170s",
			 f->fn[f->sel].symbol, pmon_errdetail());
}

/* --batch: the interval's hottest functions, a line each. */
static void batch_lines(struct top_view *v, double ts)
{
	struct top_funcs *f = &v->fn;

	if (f->why[0])
		fprintf(v->o.out, "%10.3f   %s\n", ts, f->why);
	for (size_t i = 0; i < f->n && i < TOP_SHOWPROC; i++)
		fprintf(v->o.out, "%10.3f fn %6.2f%% %8llu %-32s %-20s %s %u\n", ts, f->fn[i].share,
			(unsigned long long)f->fn[i].samples, f->fn[i].symbol, f->fn[i].dso,
			f->fn[i].comm, f->fn[i].pid);
}

/* One interval: the samples drained into the profile, its table taken
 * (per-interval counts, not decayed), the selection kept on its function. */
void top_funcs__interval(struct top_view *v, double ts)
{
	struct top_funcs *f = &v->fn;
	struct pmon_report r;

	if (f->smp && f->live) {
		pmon_sampler__drain(f->smp, add_record, f->live);
		if (!pmon_report_live__take(f->live, &r)) {
			f->n = 0;
			f->samples = r.samples;
			for (size_t i = 0; i < r.n && f->n < TOP_MAXFN; i++) {
				struct top_fn *e = &f->fn[f->n++];
				snprintf(e->symbol, sizeof(e->symbol), "%s", r.e[i].symbol);
				snprintf(e->dso, sizeof(e->dso), "%s", r.e[i].dso);
				snprintf(e->comm, sizeof(e->comm), "%s", r.e[i].comm);
				e->pid = r.e[i].pid;
				e->samples = r.e[i].samples;
				e->share = r.period
					? 100.0 * (double)r.e[i].period / (double)r.period
					: 0;
			}
			pmon_report_release(&r);
		}
		f->sel = 0;
		for (size_t i = 0; i < f->n; i++)
			if (!strcmp(f->fn[i].symbol, f->sel_symbol) &&
			    !strcmp(f->fn[i].dso, f->sel_dso))
				f->sel = i;
		if (f->annotate)
			annotate(f);
	}
	if (v->o.batch && f->on)
		batch_lines(v, ts);
}

static void select_fn(struct top_funcs *f, size_t i)
{
	if (i >= f->n)
		return;
	f->sel = i;
	snprintf(f->sel_symbol, sizeof(f->sel_symbol), "%s", f->fn[i].symbol);
	snprintf(f->sel_dso, sizeof(f->sel_dso), "%s", f->fn[i].dso);
}

bool top_funcs__key(struct top_view *v, int ch)
{
	struct top_funcs *f = &v->fn;

	if (ch == 'f') {
		f->on = !f->on;
		f->annotate = false;
		return true; /* the caller reopens (top_funcs__open()) */
	}
	if (!f->on)
		return false;
	switch (ch) {
	case KEY_UP:
		if (f->sel)
			select_fn(f, f->sel - 1);
		return true;
	case KEY_DOWN:
		select_fn(f, f->sel + 1);
		return true;
	case 't': /* perf top's zoom into a thread: here its process */
		if (!f->zoom_pid && f->n && f->fn[f->sel].pid) {
			f->zoom_pid = f->fn[f->sel].pid;
			snprintf(f->zoom_comm, sizeof(f->zoom_comm), "%s", f->fn[f->sel].comm);
		} else {
			f->zoom_pid = 0;
		}
		set_view(f);
		return true;
	case 'd': /* perf top's zoom into a DSO */
		if (!f->zoom_dso[0] && f->n)
			snprintf(f->zoom_dso, sizeof(f->zoom_dso), "%s", f->fn[f->sel].dso);
		else
			f->zoom_dso[0] = '\0';
		set_view(f);
		return true;
	case 'a':
	case '\n':
	case KEY_ENTER:
		f->annotate = !f->annotate;
		if (f->annotate && f->live) {
			select_fn(f, f->sel);
			annotate(f);
		}
		return true;
	case 27: /* Esc, and left: back out of the annotation, then the zooms */
	case KEY_LEFT:
		if (f->annotate)
			f->annotate = false;
		else if (f->zoom_pid || f->zoom_dso[0]) {
			f->zoom_pid = 0;
			f->zoom_dso[0] = '\0';
			set_view(f);
		}
		return true;
	case 'c': /* the rates' keys that mean nothing here */
	case 's':
	case 'p':
		return true;
	default:
		return false; /* + - space u k b h q: as in the rates */
	}
}

/* The selected function's instructions, the hottest in the middle. */
static void draw_annotation(struct top_funcs *f, int y, int rows, int cols)
{
	const struct pmon_annotation *a = &f->ann;
	char src[64];

	if (f->ann_why[0]) {
		mvaddnstr(y, 2, f->ann_why, cols - 2);
		return;
	}
	char head[256];
	snprintf(head, sizeof(head),
		 "annotate %.60s -- %.100s -- %llu of %llu samples since the view opened",
		 a->symbol, a->dso, (unsigned long long)a->samples, (unsigned long long)a->total);
	mvaddnstr(y++, 0, head, cols);
	mvaddnstr(y++, 0, "  SHARE  ADDRESS   INSTRUCTION                              SOURCE",
		  cols);
	size_t hot = 0, room = rows - 2 > y ? (size_t)(rows - 2 - y) : 0;
	for (size_t k = 0; k < a->n; k++)
		if (a->insn[k].period > a->insn[hot].period)
			hot = k;
	size_t from = hot > room / 2 ? hot - room / 2 : 0;
	if (from + room > a->n)
		from = a->n > room ? a->n - room : 0;
	for (size_t k = from; k < a->n && y < rows - 2; k++, y++) {
		const struct pmon_annotate_insn *in = &a->insn[k];
		char line[256];
		const char *base = in->src ? strrchr(in->src, '/') : NULL;
		snprintf(src, sizeof(src), "%s:%u",
			 base		   ? base + 1
				 : in->src ? in->src
					   : "",
			 in->line);
		snprintf(line, sizeof(line), "%s%6.2f%%  %8llx:  %-40.40s %s", k == hot ? ">" : " ",
			 a->period ? 100.0 * (double)in->period / (double)a->period : 0,
			 (unsigned long long)in->addr, in->text, in->src ? src : "");
		mvaddnstr(y, 0, line, cols);
	}
}

void top_funcs__draw(struct top_view *v, int y, int rows, int cols)
{
	struct top_funcs *f = &v->fn;
	char line[512];

	snprintf(line, sizeof(line), "functions of %s (%s), %llu samples in the last interval",
		 f->text, top_ring__name(f->ring), (unsigned long long)f->samples);
	mvaddnstr(y++, 0, line, cols);
	if (f->zoom_pid || f->zoom_dso[0]) {
		char pid[64] = "";
		if (f->zoom_pid)
			snprintf(pid, sizeof(pid), "process %u (%s)", f->zoom_pid, f->zoom_comm);
		snprintf(line, sizeof(line), "zoomed into %s%s%s%s (Esc: out)", pid,
			 f->zoom_pid && f->zoom_dso[0] ? ", " : "", f->zoom_dso[0] ? "dso " : "",
			 f->zoom_dso);
		mvaddnstr(y++, 0, line, cols);
	}
	if (f->why[0]) {
		mvaddnstr(y + 1, 2, f->why, cols - 2);
		return;
	}
	if (f->annotate) {
		draw_annotation(f, y + 1, rows, cols);
		return;
	}
	y++;
	attron(A_BOLD);
	mvaddnstr(y++, 0,
		  "  SHARE  SAMPLES  SYMBOL                                   DSO                  "
		  "PROCESS",
		  cols);
	attroff(A_BOLD);
	for (size_t i = 0; i < f->n && y < rows - 2; i++, y++) {
		const struct top_fn *e = &f->fn[i];
		snprintf(line, sizeof(line), "%s%6.2f%% %8llu  %-40.40s %-20.20s %s %u",
			 i == f->sel ? ">" : " ", e->share, (unsigned long long)e->samples,
			 e->symbol, e->dso, e->comm, e->pid);
		mvaddnstr(y, 0, line, cols);
	}
}
