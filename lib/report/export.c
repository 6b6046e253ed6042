// SPDX-License-Identifier: MIT
/*
 * Exports of a report's call stacks: Brendan Gregg's folded lines, a
 * self-contained flame graph SVG and the call graph as text or JSON
 * (speedscope's and pprof's formats have files of their own).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include "internal.h"
#include "report/report.h"
#include <pmon/sample.h>

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
	return h;
}

/* A simulated recording (pmon simulate: attr_type "sim", docs/simulate.md). */
static bool simulated(const struct pmon_report *r)
{
	return r->header.attr_type == 0x6d6973;
}

/* The event the stacks are of (pmon_report_opts.event, default the first):
 * each export is of that one event, named as it was recorded. */
const char *pmon__export_event(const struct pmon_report *r)
{
	if (!r->nevents)
		return r->header.event;
	return r->events[r->stack_event < r->nevents ? r->stack_event : 0].name;
}

const char *report_cpus(const struct pmon_report *r, char *buf, size_t len)
{
	const char *c = r->header.cpus;

	if (!c[0])
		return "all CPUs"; /* or a file older than the list (issue #29) */
	snprintf(buf, len, "%s %s", strpbrk(c, ",-") ? "CPUs" : "CPU", c);
	return buf;
}

/* A clock event's period is in nanoseconds; any other counts events. The
 * header's attr describes the first event only: the others are known by
 * name (with their modifiers, "cpu-clock:u", left off). */
bool pmon__export_ns(const struct pmon_report *r)
{
	const char *n = pmon__export_event(r);
	size_t len = strcspn(n, ":/");

	if (simulated(r))
		return false;
	if ((len == 9 && !strncmp(n, "cpu-clock", 9)) ||
	    (len == 10 && !strncmp(n, "task-clock", 10)))
		return true;
	return r->nevents <= 1 && r->header.attr_type == 1 /* PERF_TYPE_SOFTWARE */ &&
		(r->header.attr_config == 0 || r->header.attr_config == 1);
}

/* A stack's weight: the events its samples stand for (their periods), as
 * the flat report and perf report -g weigh them. Counting samples instead
 * made the call graph disagree with the flat report wherever periods
 * differ (frequency sampling, a simulated recording's one sample per
 * instruction). */
static uint64_t weight(const struct pmon_report *r, const struct pmon_report_stack *s)
{
	(void)r;
	return s->period;
}

/* What weight() counts, for the headers. */
static const char *weighs(const struct pmon_report *r)
{
	return simulated(r) ? "simulated events" : pmon__export_ns(r) ? "ns" : "events";
}

int pmon_report_write_folded(const struct pmon_report *r, FILE *out)
{
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct pmon_report_stack *s = &r->stacks[i];
		for (uint32_t k = 0; k < s->depth; k++)
			fprintf(out, "%s%s", k ? ";" : "", r->frames[s->frame[k]].symbol);
		fprintf(out, " %llu\n", (unsigned long long)weight(r, s));
	}
	return ferror(out) ? -EIO : 0;
}

/* ---- flame graph -------------------------------------------------------- */

struct node {
	uint32_t frame; /* UINT32_MAX: the root */
	uint32_t run; /* flame graph: the longest run of [unknown] frames drawn as this one */
	uint64_t value; /* the weight (period) through this path */
	uint64_t count; /* the samples through this path */
	uint64_t self; /* the weight that ended here */
	uint64_t base; /* differential: the baseline's samples through this path */
	struct node **child;
	size_t nchild, capchild;
};

static struct node *node_child(struct node *n, uint32_t frame)
{
	for (size_t i = 0; i < n->nchild; i++)
		if (n->child[i]->frame == frame)
			return n->child[i];
	if (PMON_GROW(&n->child, &n->capchild, n->nchild + 1))
		return NULL;
	struct node **c = n->child;
	if (!(c[n->nchild] = calloc(1, sizeof(struct node))))
		return NULL;
	c[n->nchild]->frame = frame;
	return c[n->nchild++];
}

static void node_free(struct node *n)
{
	for (size_t i = 0; i < n->nchild; i++)
		node_free(n->child[i]);
	free(n->child);
	free(n);
}

/* Siblings in alphabetical order, as flamegraph.pl draws them. */
static int cmp_node(const void *a, const void *b, void *arg)
{
	const struct pmon_report_frame *frames = arg;
	const struct node *x = *(struct node *const *)a, *y = *(struct node *const *)b;

	return strcmp(frames[x->frame].symbol, frames[y->frame].symbol);
}

static void xml_text(FILE *out, const char *s, size_t max)
{
	pmon__fputs_xml(out, s, max);
}

/* flamegraph.pl's interaction, inline (no network): a click zooms into a
 * frame (its callers stay, faded), "Reset Zoom" goes back, "Search" (or
 * Ctrl-F) paints the frames matching a regular expression and says what
 * share they hold. */
static const char fg_script[] =
	"(function () {\n"
	"	var doc = document, NS = \"http://www.w3.org/2000/svg\", fr = [], W = 0;\n"
	"	var gs = doc.querySelectorAll(\"g.f\");\n"
	"	for (var i = 0; i < gs.length; i++) {\n"
	"		var r = gs[i].querySelector(\"rect\"), t = "
	"gs[i].querySelector(\"title\").textContent;\n"
	"		fr.push({ g: gs[i], r: r, x: +r.getAttribute(\"x\"), w: "
	"+r.getAttribute(\"width\"),\n"
	"			  y: +r.getAttribute(\"y\"), fill: r.getAttribute(\"fill\"),\n"
	"			  name: t.replace(/ (x\\d+ )?\\(.*$/, \"\").replace(/: .*$/, \"\") "
	"});\n"
	"		gs[i].onclick = zoom.bind(null, fr[fr.length - 1]);\n"
	"	}\n"
	"	W = fr.length ? fr[0].w : 1; /* the root, \"all\" */\n"
	"	function place(f, x, w) {\n"
	"		f.r.setAttribute(\"x\", x.toFixed(1));\n"
	"		f.r.setAttribute(\"width\", w.toFixed(1));\n"
	"		var t = f.g.querySelector(\"text\"), fit = w > 10 ? Math.floor((w - 6) / "
	"7) : 0;\n"
	"		if (!t && fit >= 3) {\n"
	"			t = doc.createElementNS(NS, \"text\");\n"
	"			t.setAttribute(\"y\", (f.y + 11).toFixed(1));\n"
	"			f.g.appendChild(t);\n"
	"		}\n"
	"		if (t) {\n"
	"			t.setAttribute(\"x\", (x + 3).toFixed(1));\n"
	"			t.textContent = fit < 3 ? \"\" : f.name.length <= fit ? f.name\n"
	"						    : f.name.substr(0, fit - 2) + \"..\";\n"
	"		}\n"
	"	}\n"
	"	function zoom(z, e) {\n"
	"		if (e) e.stopPropagation();\n"
	"		for (var i = 0; i < fr.length; i++) {\n"
	"			var f = fr[i], inside = f.x >= z.x - 0.05 && f.x + f.w <= z.x + "
	"z.w + 0.05;\n"
	"			f.g.style.display = \"\";\n"
	"			f.g.style.opacity = \"\";\n"
	"			if (f.y <= z.y && inside) {\n"
	"				place(f, (f.x - z.x) * W / z.w, f.w * W / z.w);\n"
	"			} else if (f.y > z.y && f.x <= z.x + 0.05 && f.x + f.w >= z.x + "
	"z.w - 0.05) {\n"
	"				place(f, 0, W); /* a caller of the zoomed frame */\n"
	"				f.g.style.opacity = \"0.5\";\n"
	"			} else {\n"
	"				f.g.style.display = \"none\";\n"
	"			}\n"
	"		}\n"
	"		doc.getElementById(\"unzoom\").style.display = z === fr[0] ? \"none\" : "
	"\"\";\n"
	"	}\n"
	"	function search() {\n"
	"		var re = prompt(\"Search for (a regular expression):\", \"\");\n"
	"		var m = doc.getElementById(\"matched\"), hit = [], sum = 0, end = -1;\n"
	"		for (var i = 0; i < fr.length; i++) fr[i].r.setAttribute(\"fill\", "
	"fr[i].fill);\n"
	"		if (!re) { m.textContent = \"\"; return; }\n"
	"		re = new RegExp(re);\n"
	"		for (var i = 0; i < fr.length; i++)\n"
	"			if (i && re.test(fr[i].name)) {\n"
	"				fr[i].r.setAttribute(\"fill\", \"rgb(230,0,230)\");\n"
	"				hit.push(fr[i]);\n"
	"			}\n"
	"		hit.sort(function (a, b) { return a.x - b.x || b.w - a.w; });\n"
	"		for (var i = 0; i < hit.length; i++) /* nested matches counted once */\n"
	"			if (hit[i].x >= end) { sum += hit[i].w; end = hit[i].x + hit[i].w; "
	"}\n"
	"		m.textContent = \"Matched: \" + (100 * sum / W).toFixed(1) + \"%\";\n"
	"	}\n"
	"	doc.getElementById(\"unzoom\").onclick = function () { zoom(fr[0]); };\n"
	"	doc.getElementById(\"search\").onclick = search;\n"
	"	doc.addEventListener(\"keydown\", function (e) {\n"
	"		if ((e.ctrlKey || e.metaKey) && e.key === \"f\") { e.preventDefault(); "
	"search(); }\n"
	"	});\n"
	"})();\n";

#define FG_MIN_WIDTH 0.1 /* px: flamegraph.pl's default --minwidth */

struct fg;
static void diff_color(const struct fg *g, const struct node *n, unsigned *r, unsigned *gr,
		       unsigned *b);

struct fg {
	const struct pmon_report_frame *frames;
	const char *weighs; /* what a box's value counts */
	FILE *out;
	/* Differential (flamegraph.pl on difffolded output): the baseline's
	 * samples times @norm are compared with the new ones, red grew, blue
	 * shrank, as deep as the change over the largest (@maxdelta). */
	bool diff;
	double norm, maxdelta;
	double scale; /* px per sample */
	unsigned height, row;
	uint64_t total;
};

static void fg_draw(struct fg *g, struct node *n, double x, unsigned depth)
{
	double w = (double)n->value * g->scale;
	const char *name = "all", *dso = "";
	uint32_t h;

	if (w < FG_MIN_WIDTH)
		return;
	if (n->frame != UINT32_MAX) {
		name = g->frames[n->frame].symbol;
		dso = g->frames[n->frame].dso;
	}
	h = (uint32_t)(fnv1a(name) >> 7);
	/* flamegraph.pl's "hot" palette; kernel frames orange, JIT code green. */
	unsigned red = 205 + h % 50, green = (h >> 8) % 230, blue = (h >> 16) % 55;
	if (g->diff)
		diff_color(g, n, &red, &green, &blue);
	else if (!strcmp(dso, "[kernel]"))
		red = 230, green = 120 + (h >> 8) % 40, blue = 20;
	else if (!strcmp(dso, "[jit]"))
		red = 60 + h % 40, green = 180 + (h >> 8) % 50, blue = 60;
	double y = g->height - 20.0 - (depth + 1) * g->row;
	fprintf(g->out, "<g class=\"f\"><title>");
	xml_text(g->out, name, 1000);
	if (n->run > 1)
		fprintf(g->out, " x%u (a run of %u unknown frames drawn as one)", n->run, n->run);
	if (dso[0]) {
		fputs(" (", g->out);
		xml_text(g->out, dso, 1000);
		fputc(')', g->out);
	}
	if (g->diff)
		fprintf(g->out, ": %llu %s in the baseline, %+.2f%% of the new",
			(unsigned long long)n->base, g->weighs,
			100.0 * ((double)n->value - (double)n->base * g->norm) / (double)g->total);
	if (g->diff || !strcmp(g->weighs, "simulated events"))
		fprintf(g->out, ": %llu %s, %.2f%%", (unsigned long long)n->value, g->weighs,
			100.0 * (double)n->value / (double)g->total);
	else /* flamegraph.pl's "(N samples, P%)", with what they weigh */
		fprintf(g->out, ": %llu samples (%llu %s), %.2f%%", (unsigned long long)n->count,
			(unsigned long long)n->value, g->weighs,
			100.0 * (double)n->value / (double)g->total);
	fprintf(g->out,
		"</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		"height=\"%u\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
		x, y, w, g->row - 1, red, green, blue);
	size_t fit = w > 10 ? (size_t)((w - 6) / 7) : 0; /* 12px monospace: ~7px a glyph */
	if (fit >= 3) {
		fprintf(g->out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + g->row - 5);
		if (strlen(name) <= fit) {
			xml_text(g->out, name, fit);
		} else {
			xml_text(g->out, name, fit - 2);
			fputs("..", g->out);
		}
		fputs("</text>", g->out);
	}
	fputs("</g>\n", g->out);
	if (n->nchild > 1)
		qsort_r(n->child, n->nchild, sizeof(*n->child), cmp_node, (void *)g->frames);
	for (size_t i = 0; i < n->nchild; i++) {
		fg_draw(g, n->child[i], x, depth + 1);
		x += (double)n->child[i]->value * g->scale;
	}
}

/* The depth fg_draw() draws: frames narrower than its minimum width (as
 * flamegraph.pl's --minwidth) are not drawn and do not make the picture
 * taller (#14.15: one sample's garbage chain made it 2,100 px tall). */
static unsigned drawn_depth(const struct node *n, double scale)
{
	unsigned d = 0;

	if ((double)n->value * scale < FG_MIN_WIDTH)
		return 0;
	for (size_t i = 0; i < n->nchild; i++) {
		unsigned c = drawn_depth(n->child[i], scale);
		if (c > d)
			d = c;
	}
	return d + 1;
}

/* A frame pmon could not name: a frame-pointer chain that ran into garbage
 * yields runs of them. */
static bool unknown_frame(const struct pmon_report *r, uint32_t f)
{
	return !strncmp(r->frames[f].symbol, "[unknown]", 9);
}

/*
 * The stacks as a tree: from the outermost callers down (@callee false), or
 * from the sampled functions up through their callers (@callee true).
 * NULL without memory.
 */
static struct node *build_tree(const struct pmon_report *r, bool callee, bool collapse)
{
	struct node *root = calloc(1, sizeof(*root));

	if (!root)
		return NULL;
	root->frame = UINT32_MAX;
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct pmon_report_stack *st = &r->stacks[i];
		struct node *n = root;
		uint32_t run = 0;
		uint64_t w = weight(r, st);
		root->value += w;
		root->count += st->samples;
		for (uint32_t k = 0; n && k < st->depth; k++) {
			uint32_t f = st->frame[callee ? st->depth - 1 - k : k];
			/* A run of [unknown] frames is one box (flame graph). */
			if (collapse && unknown_frame(r, f) && n != root &&
			    unknown_frame(r, n->frame)) {
				if (++run > n->run)
					n->run = run;
				if (k + 1 == st->depth)
					n->self += w;
				continue;
			}
			run = 1;
			if ((n = node_child(n, f))) {
				if (collapse && unknown_frame(r, f) && !n->run)
					n->run = 1;
				n->value += w;
				n->count += st->samples;
				if (callee ? k == 0 : k + 1 == st->depth)
					n->self += w;
			}
		}
		if (!n) {
			node_free(root);
			return NULL;
		}
	}
	return root;
}

static int cmp_value(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a, *y = *(struct node *const *)b;

	return (x->value < y->value) - (x->value > y->value);
}

struct graph {
	const struct pmon_report *r;
	FILE *out;
	double min; /* samples below which a node is left out */
	uint64_t total;
	bool callee;
	unsigned shown; /* roots printed */
};

static void graph_text(struct graph *g, struct node *n, unsigned depth)
{
	if (n->nchild > 1)
		qsort(n->child, n->nchild, sizeof(*n->child), cmp_value);
	for (size_t i = 0; i < n->nchild; i++) {
		const struct node *c = n->child[i];
		if ((double)c->value < g->min)
			continue; /* sorted: the rest are smaller */
		const struct pmon_report_frame *f = &g->r->frames[c->frame];
		char self[16] = ""; /* a caller's "self" in the callee view means nothing */
		if (!g->callee || depth == 0)
			snprintf(self, sizeof(self), "%7.2f%%",
				 100.0 * (double)c->self / (double)g->total);
		fprintf(g->out, "  %7.2f%% %8s  %*s%s  %s\n",
			100.0 * (double)c->value / (double)g->total, self,
			(int)(2 * (depth < 40 ? depth : 40)), "", f->symbol, f->dso);
		graph_text(g, n->child[i], depth + 1);
	}
}

static json_t *graph_json(struct graph *g, struct node *n)
{
	json_t *a = json_array();

	if (n->nchild > 1)
		qsort(n->child, n->nchild, sizeof(*n->child), cmp_value);
	for (size_t i = 0; a && i < n->nchild; i++) {
		const struct node *c = n->child[i];
		if ((double)c->value < g->min)
			continue;
		const struct pmon_report_frame *f = &g->r->frames[c->frame];
		json_array_append_new(
			a,
			json_pack("{s:s, s:s, s:I, s:I, s:f, s:o}", "symbol", f->symbol, "dso",
				  f->dso, "samples", (json_int_t)c->value, "self",
				  (json_int_t)c->self, "percent",
				  100.0 * (double)c->value / (double)g->total,
				  g->callee ? "callers" : "callees", graph_json(g, n->child[i])));
	}
	return a;
}

/* The samples whose stacks ran into frames pmon could not name, and those
 * the kernel cut at its limit (kernel.perf_event_max_stack, 127 by
 * default), of @samples: damage is counted in samples, whatever they
 * weigh; a simulated recording's in simulated events (its "samples" are
 * distinct instructions). */
static void stack_damage(const struct pmon_report *r, uint64_t *unknown, uint64_t *cut,
			 uint64_t *samples)
{
	*unknown = *cut = *samples = 0;
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct pmon_report_stack *st = &r->stacks[i];
		uint64_t n = simulated(r) ? st->period : st->samples;
		*samples += n;
		for (uint32_t k = 0; k < st->depth; k++)
			if (unknown_frame(r, st->frame[k])) {
				*unknown += n;
				break;
			}
		if (st->depth >= 127)
			*cut += n;
	}
}

/* What stack_damage() counts, in the headers. */
static const char *damage_unit(const struct pmon_report *r)
{
	return simulated(r) ? "simulated events' stacks" : "samples' stacks";
}

/* Whose stacks: " in 'CMD'", or for a system-wide recording (record -a),
 * whose command only said for how long, ", system-wide (all CPUs) while
 * 'CMD' ran" ("CPUs 0,2-3" for record -C), as the flat report's header says. */
static void subject(const struct pmon_report *r, FILE *out, bool xml)
{
	const char *c = r->header.command;
	bool all = r->header.flags & PMON_DATA_SYSTEM_WIDE;
	char cpus[300];

	if (!c[0] && !all)
		return;
	if (all)
		fprintf(out, ", system-wide (%s)", report_cpus(r, cpus, sizeof(cpus)));
	else
		fputs(" in '", out);
	if (all && c[0])
		fputs(" while '", out);
	if (c[0] && xml)
		xml_text(out, c, 200);
	else if (c[0])
		fputs(c, out);
	if (c[0])
		fputs(all ? "' ran" : "'", out);
}

int pmon_report_write_callgraph(const struct pmon_report *r, FILE *out, bool callee,
				double min_percent, bool json)
{
	struct node *root = build_tree(r, callee, false);
	int err = 0;

	if (!root)
		return -ENOMEM;
	struct graph g = {
		.r = r, .out = out, .total = root->value ? root->value : 1, .callee = callee
	};
	g.min = min_percent / 100.0 * (double)g.total;
	uint64_t unknown, cut, nsamples;
	stack_damage(r, &unknown, &cut, &nsamples);
	if (json) {
		json_t *j = json_pack("{s:s, s:s, s:I, s:s, s:s, s:f, s:I, s:I, s:o}", "event",
				      pmon__export_event(r), "command", r->header.command,
				      "samples", (json_int_t)root->value, "unit", weighs(r),
				      "graph", callee ? "callee" : "caller", "min_percent",
				      min_percent, "samples_unknown_frames", (json_int_t)unknown,
				      "samples_cut_short", (json_int_t)cut, "roots",
				      graph_json(&g, root));
		if (!j || json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
		    fputc('\n', out) == EOF)
			err = j ? -EIO : -ENOMEM;
		json_decref(j);
	} else {
		locale_t prev = pmon__c_locale_enter(); /* "12.50%", as every pmon number */
		fprintf(out, "# pmon report: %llu %s of %s", (unsigned long long)root->value,
			weighs(r), pmon__export_event(r));
		subject(r, out, false);
		fprintf(out, ", call graph %s (nodes under %.1f%% left out)\n",
			callee ? "from each sampled function up through its callers"
			       : "from the outermost callers down",
			min_percent);
		if (unknown || cut)
			fprintf(out,
				"# %llu of %llu %s ran into frames pmon could not "
				"name; %llu were cut short at the kernel's limit (127 frames)\n",
				(unsigned long long)unknown, (unsigned long long)nsamples,
				damage_unit(r), (unsigned long long)cut);
		fprintf(out, "#\n# %8s %8s  %s\n", "total", "self",
			callee ? "function, then its callers" : "function");
		graph_text(&g, root, 0);
		pmon__c_locale_leave(prev);
		err = ferror(out) ? -EIO : 0;
	}
	node_free(root);
	return err;
}

int pmon_report_write_flamegraph(const struct pmon_report *r, FILE *out, unsigned width)
{
	struct node *root = build_tree(r, false, true);
	int err = 0;

	if (!root)
		return -ENOMEM;
	locale_t prev = pmon__c_locale_enter(); /* x="1.5", never "1,5", in the XML */
	if (!err) {
		struct fg g = { .frames = r->frames,
				.weighs = weighs(r),
				.out = out,
				.row = 16,
				.total = root->value ? root->value : 1 };
		if (width < 200)
			width = 200;
		g.scale = (double)(width - 20) / (double)g.total;
		g.height = 60 + drawn_depth(root, g.scale) * g.row;
		uint64_t unknown, cut, nsamples;
		stack_damage(r, &unknown, &cut, &nsamples);
		if (unknown || cut)
			g.height += g.row;
		fprintf(out,
			"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
			"viewBox=\"0 0 %u %u\" font-family=\"monospace\" font-size=\"12\">\n"
			"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
			"<text x=\"%u\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">",
			width, g.height, width, g.height, width / 2);
		fputs("pmon flame graph: ", out);
		xml_text(out, pmon__export_event(r), 200);
		subject(r, out, true);
		fprintf(out, ", %llu %s</text>\n", (unsigned long long)root->value, weighs(r));
		if (unknown || cut)
			fprintf(out,
				"<text class=\"damage\" x=\"%u\" y=\"42\" text-anchor=\"middle\">"
				"%llu of %llu %s ran into frames pmon could not name "
				"(runs of them drawn as one box); %llu were cut short at the "
				"kernel's limit (127 frames)</text>\n",
				width / 2, (unsigned long long)unknown,
				(unsigned long long)nsamples, damage_unit(r),
				(unsigned long long)cut);
		fprintf(out,
			"<text id=\"unzoom\" x=\"10\" y=\"24\" "
			"style=\"display:none;cursor:pointer\">"
			"Reset Zoom</text>\n<text id=\"search\" x=\"%u\" y=\"24\" "
			"text-anchor=\"end\" style=\"cursor:pointer\">Search</text>\n"
			"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text>\n"
			"<g transform=\"translate(10,0)\" style=\"cursor:pointer\">\n",
			width - 10, width - 10, g.height - 5);
		fg_draw(&g, root, 0, 0);
		fprintf(out,
			"</g>\n<script "
			"type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
			fg_script);
	}
	pmon__c_locale_leave(prev);
	node_free(root);
	return err ? err : ferror(out) ? -EIO : 0;
}

/* ---- differential flame graph -------------------------------------------- */

/* flamegraph.pl's colours for a difference: red where the frame grew,
 * blue where it shrank, white where it did not, paler the smaller. */
static void diff_color(const struct fg *g, const struct node *n, unsigned *r, unsigned *gr,
		       unsigned *b)
{
	double d = (double)n->value - (double)n->base * g->norm;
	unsigned pale =
		g->maxdelta > 0 ? (unsigned)(210 * (g->maxdelta - fabs(d)) / g->maxdelta) : 210;

	if (d > 0)
		*r = 255, *gr = pale, *b = pale;
	else if (d < 0)
		*r = pale, *gr = pale, *b = 255;
	else
		*r = 255, *gr = 255, *b = 255;
}

static double max_delta(const struct node *n, double norm)
{
	double m = fabs((double)n->value - (double)n->base * norm);

	for (size_t i = 0; i < n->nchild; i++) {
		double c = max_delta(n->child[i], norm);
		if (c > m)
			m = c;
	}
	return m;
}

/* The stacks of @d as a tree: value the new samples, base the baseline's. */
static struct node *diff_tree(const struct pmon_report_diff *d)
{
	struct node *root = calloc(1, sizeof(*root));

	if (!root)
		return NULL;
	root->frame = UINT32_MAX;
	for (size_t i = 0; i < d->nstacks; i++) {
		const struct pmon_report_diff_stack *st = &d->stacks[i];
		struct node *n = root;
		root->value += st->new_samples;
		root->base += st->base_samples;
		for (uint32_t k = 0; n && k < st->depth; k++) {
			if ((n = node_child(n, st->frame[k]))) {
				n->value += st->new_samples;
				n->base += st->base_samples;
			}
		}
		if (!n) {
			node_free(root);
			return NULL;
		}
	}
	return root;
}

int pmon_report_diff_write_flamegraph(const struct pmon_report_diff *d, FILE *out, unsigned width)
{
	struct node *root = diff_tree(d);

	if (!root)
		return -ENOMEM;
	locale_t prev = pmon__c_locale_enter();
	struct fg g = { .frames = d->frames,
			.weighs = "samples",
			.out = out,
			.row = 16,
			.diff = true,
			.total = root->value ? root->value : 1 };
	g.norm = root->base ? (double)root->value / (double)root->base : 1.0;
	g.maxdelta = max_delta(root, g.norm);
	if (width < 200)
		width = 200;
	g.scale = (double)(width - 20) / (double)g.total;
	g.height = 60 + drawn_depth(root, g.scale) * g.row;
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" font-family=\"monospace\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%u\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">",
		width, g.height, width, g.height, width / 2);
	fputs("pmon differential flame graph: ", out);
	xml_text(out, d->event, 200);
	fprintf(out,
		", %llu samples (baseline %llu, normalised): red grew, blue shrank</text>\n"
		"<g transform=\"translate(10,0)\">\n",
		(unsigned long long)root->value, (unsigned long long)root->base);
	fg_draw(&g, root, 0, 0);
	fprintf(out, "</g>\n</svg>\n");
	pmon__c_locale_leave(prev);
	node_free(root);
	return ferror(out) ? -EIO : 0;
}
