// SPDX-License-Identifier: MIT
/*
 * Unit tests of libpmon-plot's trace timeline (lib/plot/trace.c): traces
 * built by hand with known span times are drawn as PNG, read back with
 * cairo, and the pixels checked where the geometry of pmon/plot.h puts each
 * span (its colour inside, the background outside), in the whole trace and
 * in a zoomed window; the kernel's rows below the hooks'; names that are
 * not UTF-8; the text cleaner cairo's strings go through.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>

#include <cairo.h>

#include "plot/text.h"
#include "trace/tracefile.h"
#include "trace-synth.h"
#include <pmon/plot.h>
#include <pmon/trace.h>

/* ---- traces built by hand ---------------------------------------------- */

static void events(struct fbuf *f, int32_t tid, const struct pmon__trec *rec, size_t n)
{
	struct pmon_trace_chunk_events ce = { .tid = tid, .nrec = (uint32_t)n };
	chunk(f, "TEVT", &ce, sizeof(ce), rec, n * sizeof(*rec));
}

/* Thread 7: "outer" over ns 1000..7000 holding "inner" 3000..5000, a "tick"
 * instant at 9000; thread 8: "other" 2000..4000. */
static struct pmon_trace_reader *nested(const char *outer)
{
	static struct fbuf f;
	f.n = 0;
	header_ns(&f);
	channel(&f, 1, outer);
	channel(&f, 2, "inner");
	channel(&f, 3, "tick");
	channel(&f, 4, "other");
	const struct pmon__trec t7[] = {
		{ 2000, PMON__TR_WORD(PMON__TR_BEGIN, 1), 0 },
		{ 4000, PMON__TR_WORD(PMON__TR_BEGIN, 2), 0 },
		{ 6000, PMON__TR_WORD(PMON__TR_END, 2), 0 },
		{ 8000, PMON__TR_WORD(PMON__TR_END, 1), 0 },
		{ 10000, PMON__TR_WORD(PMON__TR_MARK, 3), 0 },
	};
	const struct pmon__trec t8[] = {
		{ 3000, PMON__TR_WORD(PMON__TR_BEGIN, 4), 0 },
		{ 5000, PMON__TR_WORD(PMON__TR_END, 4), 0 },
	};
	events(&f, 7, t7, sizeof(t7) / sizeof(t7[0]));
	events(&f, 8, t8, sizeof(t8) / sizeof(t8[0]));
	struct pmon_trace_reader *r = pmon_trace_reader__open_mem(f.b, f.n, "t");
	assert_non_null(r);
	/* the times the pixels are computed from, as the reader gives them */
	assert_int_equal(pmon_trace_reader__nevents(r), 7);
	assert_int_equal(pmon_trace_reader__event(r, 0)->ns, 1000);
	assert_int_equal(pmon_trace_reader__event(r, 6)->ns, 9000);
	return r;
}

/* ---- pictures read back ------------------------------------------------- */

struct png {
	cairo_surface_t *s;
	const unsigned char *data;
	int w, h, stride;
};

struct membuf {
	const unsigned char *p;
	size_t n, at;
};

static cairo_status_t read_mem(void *closure, unsigned char *data, unsigned int len)
{
	struct membuf *m = closure;
	if (m->n - m->at < len)
		return CAIRO_STATUS_READ_ERROR;
	memcpy(data, m->p + m->at, len);
	m->at += len;
	return CAIRO_STATUS_SUCCESS;
}

/* Draw @r as @format; a PNG is decoded into @png (may be NULL). Return:
 * pmon_plot_trace()'s value; the bytes in *@out (the caller frees). */
static int draw(const struct pmon_trace_reader *r, enum pmon_plot_format format, uint64_t from,
		uint64_t to, unsigned width, struct png *png, char **out, size_t *len)
{
	FILE *m = open_memstream(out, len);
	assert_non_null(m);
	struct pmon_plot_trace_opts o = {
		.sz = sizeof(o), .format = format, .from_ns = from, .to_ns = to, .width = width
	};
	int err = pmon_plot_trace(r, m, &o);
	assert_int_equal(fclose(m), 0);
	if (!err && png) {
		struct membuf mb = { (const unsigned char *)*out, *len, 0 };
		png->s = cairo_image_surface_create_from_png_stream(read_mem, &mb);
		assert_int_equal(cairo_surface_status(png->s), CAIRO_STATUS_SUCCESS);
		cairo_surface_flush(png->s);
		png->data = cairo_image_surface_get_data(png->s);
		png->w = cairo_image_surface_get_width(png->s);
		png->h = cairo_image_surface_get_height(png->s);
		png->stride = cairo_image_surface_get_stride(png->s);
	}
	return err;
}

/* The pixel at (@x, @y) as 0xRRGGBB. */
static uint32_t px(const struct png *p, double x, double y)
{
	int ix = (int)x, iy = (int)y;
	assert_true(ix >= 0 && ix < p->w && iy >= 0 && iy < p->h);
	uint32_t v;
	memcpy(&v, p->data + (size_t)iy * (size_t)p->stride + (size_t)ix * 4, 4);
	return v & 0xffffff;
}

/* A background: white or the alternate lanes' light grey, or a grid line. */
static bool light(uint32_t c)
{
	return ((c >> 16) & 255) > 200 && ((c >> 8) & 255) > 200 && (c & 255) > 200;
}

/* x of @ns in a picture @width px wide over [from, to) (pmon/plot.h). */
static double x_at(uint64_t ns, uint64_t from, uint64_t to, unsigned width)
{
	double x0 = PMON_PLOT_TRACE_LEFT, x1 = width - PMON_PLOT_TRACE_RIGHT;
	return x0 + (double)(ns - from) * (x1 - x0) / (double)(to - from);
}

/* The first pixel row inside the bar of row @row of a lane at @lane_y:
 * below its 1 px edge, above any name written in it. */
static double bar_y(double lane_y, unsigned row)
{
	return lane_y + PMON_PLOT_TRACE_PAD + row * PMON_PLOT_TRACE_ROW +
		(PMON_PLOT_TRACE_ROW - PMON_PLOT_TRACE_BAR) / 2.0 + 1;
}

/* A span drawn over [@b, @e) on row @y: its colour 3 px inside each end
 * (the same at both), a background 3 px outside. Return: the colour. */
static uint32_t span_at(const struct png *p, double y, double xb, double xe, int line)
{
	uint32_t in_b = px(p, xb + 3, y), in_e = px(p, xe - 3, y);
	uint32_t out_b = px(p, xb - 3, y), out_e = px(p, xe + 3, y);
	if (light(in_b) || in_b != in_e || !light(out_b) || !light(out_e))
		fail_msg("line %d: span %.1f..%.1f at y %.0f: inside %06x %06x, outside %06x %06x",
			 line, xb, xe, y, in_b, in_e, out_b, out_e);
	return in_b;
}

static void test_plot__trace_spans_where_their_times_say(void **state)
{
	(void)state;
	struct pmon_trace_reader *r = nested("outer");
	struct png p;
	char *buf = NULL;
	size_t len = 0;
	const unsigned W = 1180; /* 1000 px for 10000 ns: 10 ns a pixel */

	assert_int_equal(draw(r, PMON_PLOT_PNG, 0, 10000, W, &p, &buf, &len), 0);
	assert_int_equal(p.w, W);
	/* lane 7: the tick row (its instant), then outer, then inner; lane 8
	 * below it, with "other" on its first row (no ticks) */
	double lane7 = PMON_PLOT_TRACE_TOP;
	double lane8 = lane7 + 2 * PMON_PLOT_TRACE_PAD + 3 * PMON_PLOT_TRACE_ROW;
	uint32_t outer = span_at(&p, bar_y(lane7, 1), x_at(1000, 0, 10000, W),
				 x_at(7000, 0, 10000, W), __LINE__);
	uint32_t inner = span_at(&p, bar_y(lane7, 2), x_at(3000, 0, 10000, W),
				 x_at(5000, 0, 10000, W), __LINE__);
	uint32_t other = span_at(&p, bar_y(lane8, 0), x_at(2000, 0, 10000, W),
				 x_at(4000, 0, 10000, W), __LINE__);
	assert_true(outer != inner && inner != other);
	/* the instant's row is empty where nothing happens, and the inner row
	 * too, before inner begins */
	assert_true(light(px(&p, x_at(5000, 0, 10000, W), bar_y(lane7, 0) + 4)));
	assert_true(light(px(&p, x_at(2000, 0, 10000, W), bar_y(lane7, 2))));
	/* the instant: a dark tick in its row at 9000 ns */
	assert_false(light(px(&p, x_at(9000, 0, 10000, W), bar_y(lane7, 0) + 6)));
	cairo_surface_destroy(p.s);
	free(buf);

	/* Zoomed to 2000..6000 ns (0.25 px a ns): outer fills the window,
	 * inner moves to 3000..5000 of it, the instant is out. */
	buf = NULL;
	assert_int_equal(draw(r, PMON_PLOT_PNG, 2000, 6000, W, &p, &buf, &len), 0);
	span_at(&p, bar_y(lane7, 2), x_at(3000, 2000, 6000, W), x_at(5000, 2000, 6000, W),
		__LINE__);
	assert_int_equal(px(&p, PMON_PLOT_TRACE_LEFT + 3, bar_y(lane7, 1)), outer);
	assert_int_equal(px(&p, W - PMON_PLOT_TRACE_RIGHT - 3, bar_y(lane7, 1)), outer);
	assert_int_equal(px(&p, x_at(3000, 2000, 6000, W) + 3, bar_y(lane7, 2)), inner);
	/* other (2000..4000) starts at the window's left edge */
	assert_int_equal(px(&p, PMON_PLOT_TRACE_LEFT + 3, bar_y(lane8, 0)), other);
	assert_true(light(px(&p, x_at(4000, 2000, 6000, W) + 3, bar_y(lane8, 0))));
	cairo_surface_destroy(p.s);
	free(buf);

	/* The SVG: cairo's, in pixels, as large as the PNG. */
	buf = NULL;
	assert_int_equal(draw(r, PMON_PLOT_PNG, 0, 0, 0, &p, &buf, &len), 0);
	int h = p.h;
	assert_int_equal(p.w, 1200);
	cairo_surface_destroy(p.s);
	free(buf);
	buf = NULL;
	assert_int_equal(draw(r, PMON_PLOT_SVG, 0, 0, 0, NULL, &buf, &len), 0);
	char want[64];
	snprintf(want, sizeof(want), "width=\"1200px\" height=\"%dpx\"", h);
	assert_non_null(strstr(buf, want));
	assert_non_null(strstr(buf, "<path"));
	assert_non_null(strstr(buf, "<symbol")); /* glyphs */
	free(buf);
	pmon_trace_reader__free(r);
}

/* The kernel's events in the thread's lane, below its hooks. */
static void test_plot__trace_kernel_rows_below_the_hooks(void **state)
{
	(void)state;
	struct fbuf f = { .n = 0 };
	header_ns(&f);
	channel(&f, 1, "work");
	const struct pmon__trec rec[] = { { 1100, PMON__TR_WORD(PMON__TR_BEGIN, 1), 0 },
					  { 1400, PMON__TR_WORD(PMON__TR_END, 1), 0 } };
	events(&f, 7, rec, 2);
	/* mono 5000 is tick 1000; the switch-out at 4000 starts the trace */
	struct pmon__krec k[] = {
		{ 5200, 7, PMON__K_SYS_ENTER, 1, 1, 0 },
		{ 5300, 7, PMON__K_SYS_EXIT, 1, 1, 6 },
		{ 4000, 7, PMON__K_SWITCH_OUT, 0, 1, 99 },
	};
	struct pmon_trace_chunk_kernel ck = { .nrec = 3 };
	chunk(&f, "TKEV", &ck, sizeof(ck), k, sizeof(k));
	struct pmon_trace_reader *r = pmon_trace_reader__open_mem(f.b, f.n, "t");
	assert_non_null(r);
	struct png p;
	char *buf = NULL;
	size_t len = 0;
	const unsigned W = 1180;
	assert_int_equal(draw(r, PMON_PLOT_PNG, 1000, 1500, W, &p, &buf, &len), 0);
	/* hooks: one row (work: 1100..1400); kernel: a tick row (the switch,
	 * out of the window), then sys_write 1200..1300 */
	double lane = PMON_PLOT_TRACE_TOP;
	uint32_t work = span_at(&p, bar_y(lane, 0), x_at(1100, 1000, 1500, W),
				x_at(1400, 1000, 1500, W), __LINE__);
	uint32_t sys = span_at(&p, bar_y(lane, 2), x_at(1200, 1000, 1500, W),
			       x_at(1300, 1000, 1500, W), __LINE__);
	assert_true(work != sys);
	cairo_surface_destroy(p.s);
	free(buf);
	pmon_trace_reader__free(r);
}

/* Names cairo would refuse (not UTF-8, a surrogate, a noncharacter, an
 * overlong form, controls) become '?' and the picture is drawn. */
static void test_plot__trace_names_not_utf8(void **state)
{
	(void)state;
	struct pmon_trace_reader *r =
		nested("a<b&\"c'\xff\x01\xed\xa0\x80\xef\xbf\xbe\xe0\x80\x80\xf4\x90\x80\x80 ok");
	struct png p;
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(draw(r, PMON_PLOT_PNG, 0, 0, 0, &p, &buf, &len), 0);
	cairo_surface_destroy(p.s);
	free(buf);
	buf = NULL;
	assert_int_equal(draw(r, PMON_PLOT_SVG, 0, 0, 0, NULL, &buf, &len), 0);
	free(buf);
	pmon_trace_reader__free(r);
}

static void test_plot__trace_bad_arguments(void **state)
{
	(void)state;
	struct pmon_trace_reader *r = nested("outer");
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(draw(r, PMON_PLOT_PNG, 5, 5, 0, NULL, &buf, &len), -EINVAL);
	free(buf);
	buf = NULL;
	assert_int_equal(draw(r, PMON_PLOT_PNG, 0, 0, 100, NULL, &buf, &len), -EINVAL);
	free(buf);
	buf = NULL;
	assert_int_equal(draw(r, (enum pmon_plot_format)9, 0, 0, 0, NULL, &buf, &len), -EINVAL);
	free(buf);
	pmon_trace_reader__free(r);
}

static void test_plot__clean_text(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
		size_t len;
		int line;
	} rows[] = {
		{ "plain", "plain", 64, __LINE__ },
		{ "a\x01"
		  "b\x7f",
		  "a?b?", 64, __LINE__ },
		{ "\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9", 64, __LINE__ }, /* été */
		{ "\xff\xfe", "??", 64, __LINE__ },
		{ "\xc0\xaf", "??", 64, __LINE__ }, /* overlong '/' */
		{ "\xe0\x80\x80", "???", 64, __LINE__ }, /* overlong NUL */
		{ "\xed\xa0\x80", "???", 64, __LINE__ }, /* a surrogate */
		{ "\xef\xbf\xbe", "???", 64, __LINE__ }, /* U+FFFE */
		{ "\xef\xb7\x90", "???", 64, __LINE__ }, /* U+FDD0 */
		{ "\xf4\x90\x80\x80", "????", 64, __LINE__ }, /* past U+10FFFF */
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 64, __LINE__ }, /* U+1F600 */
		{ "x\xe2\x82", "x??", 64, __LINE__ }, /* cut short */
		{ "ab\xc3\xa9", "ab", 4, __LINE__ }, /* never half a character */
		{ "abcdef", "abc", 4, __LINE__ },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char out[64];
		pmon__plot_clean_text(rows[i].in, out, rows[i].len);
		if (strcmp(out, rows[i].out))
			fail_msg("line %d: got '%s'", rows[i].line, out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plot__trace_spans_where_their_times_say),
		cmocka_unit_test(test_plot__trace_kernel_rows_below_the_hooks),
		cmocka_unit_test(test_plot__trace_names_not_utf8),
		cmocka_unit_test(test_plot__trace_bad_arguments),
		cmocka_unit_test(test_plot__clean_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
