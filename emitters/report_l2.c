#include "emitters/report_l2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emitters/report.h"

#define NO_PATCHING_TITLE "Advice that needs no patching (kernels without PTX included)"

static json_t *l2_of(const struct report_input *in)
{
	json_t *l2 = json_object_get(in->capture, "l2");

	return json_is_object(l2) ? l2 : NULL;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void bytes_text(struct strbuf *out, double bytes)
{
	char *b = report_human_bytes(bytes);

	strbuf_addstr(out, b);
	free(b);
}

/* "allocation #3, 25.0 MiB, hit ratio 1.000, set-aside 37.5 MiB" */
static void window_text(struct strbuf *out, json_t *w)
{
	strbuf_addf(out, "allocation #%lld, ", (long long)json_integer_value(json_object_get(w, "alloc")));
	bytes_text(out, num(w, "num_bytes"));
	strbuf_addf(out, ", hit ratio %.3f, set-aside ", num(w, "hit_ratio"));
	bytes_text(out, num(w, "set_aside_bytes"));
}

/* "kernel [no PTX], kernel" */
static void kernels_text(struct strbuf *out, json_t *w)
{
	json_t *without = json_object_get(w, "kernels_without_ptx"), *k, *x;
	size_t i, j;

	json_array_foreach(json_object_get(w, "kernels"), i, k) {
		int no_ptx = 0;

		json_array_foreach(without, j, x)
			no_ptx |= json_equal(k, x);
		strbuf_addf(out, "%s%s%s", i ? ", " : "", json_string_value(k) ?: "?",
			    no_ptx ? " [no PTX]" : "");
	}
}

/* "DRAM read 1.2 GiB (baseline 1.5 GiB); 1.023x (min 1.010, max 1.030,
 * noise 0.004): kept: <reason>", or the reason it was not timed. */
static void verification_text(struct strbuf *out, json_t *l2, json_t *ver)
{
	json_t *sp = json_object_get(ver, "speedup");

	if (!json_is_object(ver)) {
		strbuf_addstr(out, "not measured");
		return;
	}
	strbuf_addstr(out, "DRAM read ");
	bytes_text(out, num(ver, "dram_bytes"));
	strbuf_addstr(out, " (baseline ");
	bytes_text(out, num(l2, "baseline_dram_bytes"));
	strbuf_addstr(out, ")");
	if (json_is_object(sp)) {
		strbuf_addf(out, "; %.3fx (min %.3f, max %.3f", num(sp, "median"), num(sp, "min"),
			    num(sp, "max"));
		if (json_is_number(json_object_get(ver, "noise")))
			strbuf_addf(out, ", noise %.3f", num(ver, "noise"));
		if (json_is_integer(json_object_get(ver, "ended_after_rounds")))
			strbuf_addf(out, ", ended after %lld rounds",
				    (long long)json_integer_value(json_object_get(ver, "ended_after_rounds")));
		strbuf_addch(out, ')');
	}
	strbuf_addf(out, ": %s: %s", json_is_true(json_object_get(ver, "kept")) ? "kept" : "rejected",
		    str(ver, "reason"));
}

void report_l2_text(struct strbuf *out, const struct report_input *in, const char *bold,
		    const char *reset)
{
	json_t *l2 = l2_of(in), *w;
	size_t i;

	if (!l2)
		return;
	strbuf_addf(out, "\n%sADVICE THAT NEEDS NO PATCHING%s (kernels without PTX included)\n"
		    "  L2 persistence windows: %s", bold, reset, str(l2, "status"));
	if (json_object_get(l2, "kept"))
		strbuf_addf(out, ", kept: %s", json_is_string(json_object_get(l2, "kept")) ?
			    str(l2, "kept") : "none");
	strbuf_addf(out, "\n    %s\n", str(l2, "reason"));
	json_array_foreach(json_object_get(l2, "windows"), i, w) {
		strbuf_addf(out, "  window %s: ", str(w, "variant"));
		window_text(out, w);
		strbuf_addstr(out, "\n    for ");
		kernels_text(out, w);
		strbuf_addstr(out, "\n    measured: ");
		verification_text(out, l2, json_object_get(w, "verification"));
		strbuf_addch(out, '\n');
	}
}

void report_l2_html(struct strbuf *out, const struct report_input *in)
{
	json_t *l2 = l2_of(in), *w;
	size_t i;

	if (!l2)
		return;
	strbuf_addstr(out, "<section id=\"no-patching\"><h2>" NO_PATCHING_TITLE "</h2>"
		      "<p>L2 persistence windows: <strong>");
	strbuf_add_html(out, str(l2, "status"));
	strbuf_addstr(out, "</strong>");
	if (json_object_get(l2, "kept")) {
		strbuf_addstr(out, ", kept: <strong>");
		strbuf_add_html(out, json_is_string(json_object_get(l2, "kept")) ? str(l2, "kept") : "none");
		strbuf_addstr(out, "</strong>");
	}
	strbuf_addstr(out, ". ");
	strbuf_add_html(out, str(l2, "reason"));
	strbuf_addstr(out, "</p>");
	if (json_array_size(json_object_get(l2, "windows")))
		strbuf_addstr(out, "<table><tr><th>window</th><th>buffer</th><th>kernels</th>"
			      "<th>measured</th></tr>");
	json_array_foreach(json_object_get(l2, "windows"), i, w) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(out, "<tr><td>");
		strbuf_add_html(out, str(w, "variant"));
		strbuf_addstr(out, "</td><td>");
		window_text(&sb, w);
		strbuf_add_html(out, sb.buf);
		strbuf_reset(&sb);
		strbuf_addstr(out, "</td><td><code>");
		kernels_text(&sb, w);
		strbuf_add_html(out, sb.buf);
		strbuf_reset(&sb);
		strbuf_addstr(out, "</code></td><td>");
		verification_text(&sb, l2, json_object_get(w, "verification"));
		strbuf_add_html(out, sb.buf);
		strbuf_release(&sb);
		strbuf_addstr(out, "</td></tr>");
	}
	if (json_array_size(json_object_get(l2, "windows")))
		strbuf_addstr(out, "</table>");
	strbuf_addstr(out, "</section>\n");
}

void report_l2_json(json_t *doc, const struct report_input *in)
{
	json_t *l2 = l2_of(in);

	if (l2)
		json_object_set_new(doc, "no_patching", json_pack("{s:O}", "l2", l2));
}
