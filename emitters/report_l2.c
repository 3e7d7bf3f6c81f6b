#include "emitters/report_l2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emitters/report.h"

#define NO_PATCHING_TITLE "Advice that needs no patching (kernels without PTX included)"

static void bytes_text(struct strbuf *out, double bytes)
{
	char *b = report_human_bytes(bytes);

	strbuf_addstr(out, b);
	free(b);
}

/* "allocation #3, 25.0 MiB, hit ratio 1.000, set-aside 37.5 MiB" */
static void window_text(struct strbuf *out, const struct capture_l2_window *w)
{
	strbuf_addf(out, "allocation #%lld, ", w->alloc);
	bytes_text(out, w->num_bytes);
	strbuf_addf(out, ", hit ratio %.3f, set-aside ", w->hit_ratio);
	bytes_text(out, w->set_aside_bytes);
}

/* "kernel [no PTX], kernel" */
static void kernels_text(struct strbuf *out, const struct capture_l2_window *w)
{
	size_t i, j;

	for (i = 0; i < w->nr_kernels; i++) {
		int no_ptx = 0;

		for (j = 0; j < w->nr_kernels_without_ptx; j++)
			no_ptx |= !strcmp(w->kernels[i], w->kernels_without_ptx[j]);
		strbuf_addf(out, "%s%s%s", i ? ", " : "", w->kernels[i], no_ptx ? " [no PTX]" : "");
	}
}

/* "DRAM read 1.2 GiB (baseline 1.5 GiB); 1.023x (min 1.010, max 1.030,
 * noise 0.004): kept: <reason>", or the reason it was not timed. */
static void verification_text(struct strbuf *out, const struct capture_l2 *l2,
			      const struct capture_l2_window *w)
{
	if (!w->measured) {
		strbuf_addstr(out, "not measured");
		return;
	}
	strbuf_addstr(out, "DRAM read ");
	bytes_text(out, w->dram_bytes);
	strbuf_addstr(out, " (baseline ");
	bytes_text(out, l2->baseline_dram_bytes);
	if (l2->baseline)
		strbuf_addf(out, ", with %s", l2->baseline);
	strbuf_addstr(out, ")");
	if (!isnan(w->speedup.median)) {
		strbuf_addf(out, "; %.3fx (min %.3f, max %.3f", w->speedup.median, w->speedup.min,
			    w->speedup.max);
		if (!isnan(w->noise))
			strbuf_addf(out, ", noise %.3f", w->noise);
		if (w->ended_after_rounds >= 0)
			strbuf_addf(out, ", ended after %lld rounds", w->ended_after_rounds);
		strbuf_addch(out, ')');
	}
	strbuf_addf(out, ": %s: %s", w->kept > 0 ? "kept" : "rejected", w->reason ? w->reason : "");
}

void report_l2_text(struct strbuf *out, const struct report_input *in, const char *bold,
		    const char *reset)
{
	const struct capture_l2 *l2 = &in->model.l2;
	size_t i;

	if (!in->model.has_l2)
		return;
	strbuf_addf(out, "\n%sADVICE THAT NEEDS NO PATCHING%s (kernels without PTX included)\n"
		    "  L2 persistence windows: %s", bold, reset, report_or_empty(l2->status));
	if (l2->has_kept)
		strbuf_addf(out, ", kept: %s", l2->kept ? l2->kept : "none");
	strbuf_addf(out, "\n    %s\n", report_or_empty(l2->reason));
	for (i = 0; i < l2->nr_windows; i++) {
		const struct capture_l2_window *w = &l2->windows[i];

		strbuf_addf(out, "  window %s: ", report_or_empty(w->variant));
		window_text(out, w);
		strbuf_addstr(out, "\n    for ");
		kernels_text(out, w);
		strbuf_addstr(out, "\n    measured: ");
		verification_text(out, l2, w);
		strbuf_addch(out, '\n');
	}
}

void report_l2_html(struct strbuf *out, const struct report_input *in)
{
	const struct capture_l2 *l2 = &in->model.l2;
	size_t i;

	if (!in->model.has_l2)
		return;
	strbuf_addstr(out, "<section id=\"no-patching\"><h2>" NO_PATCHING_TITLE "</h2>"
		      "<p>L2 persistence windows: <strong>");
	strbuf_add_html(out, report_or_empty(l2->status));
	strbuf_addstr(out, "</strong>");
	if (l2->has_kept) {
		strbuf_addstr(out, ", kept: <strong>");
		strbuf_add_html(out, l2->kept ? l2->kept : "none");
		strbuf_addstr(out, "</strong>");
	}
	strbuf_addstr(out, ". ");
	strbuf_add_html(out, report_or_empty(l2->reason));
	strbuf_addstr(out, "</p>");
	if (l2->nr_windows)
		strbuf_addstr(out, "<table><tr><th>window</th><th>buffer</th><th>kernels</th>"
			      "<th>measured</th></tr>");
	for (i = 0; i < l2->nr_windows; i++) {
		const struct capture_l2_window *w = &l2->windows[i];
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(out, "<tr><td>");
		strbuf_add_html(out, report_or_empty(w->variant));
		strbuf_addstr(out, "</td><td>");
		window_text(&sb, w);
		strbuf_add_html(out, sb.buf);
		strbuf_reset(&sb);
		strbuf_addstr(out, "</td><td><code>");
		kernels_text(&sb, w);
		strbuf_add_html(out, sb.buf);
		strbuf_reset(&sb);
		strbuf_addstr(out, "</code></td><td>");
		verification_text(&sb, l2, w);
		strbuf_add_html(out, sb.buf);
		strbuf_release(&sb);
		strbuf_addstr(out, "</td></tr>");
	}
	if (l2->nr_windows)
		strbuf_addstr(out, "</table>");
	strbuf_addstr(out, "</section>\n");
}

void report_l2_json(json_t *doc, const struct report_input *in)
{
	if (in->model.has_l2)
		json_object_set_new(doc, "no_patching", json_pack("{s:O}", "l2",
				    capture_section_json(in->model.l2.source)));
}
