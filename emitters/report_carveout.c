#include "emitters/report_carveout.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/carveout_verdict.h"
#include "base/xalloc.h"

static json_t *kernels(const struct report_input *in)
{
	return json_object_get(json_object_get(in->capture, "carveout"), "kernels");
}

/* The library whose module (no PTX) holds the kernel, NULL: the program's own. */
static const char *library_of(const struct report_input *in, const char *kernel)
{
	size_t i, j;

	for (i = 0; i < in->model.nr_modules; i++) {
		const struct capture_module *m = &in->model.modules[i];

		for (j = 0; m->library && j < m->nr_kernels; j++)
			if (!strcmp(m->kernels[j], kernel))
				return m->library;
	}
	return NULL;
}

/* The advice for a kernel whose default was kept, phrased for whoever sets
 * the carve-out (captures before issue 25 said "remove the call" of a
 * library's kernels too). Caller frees. */
char *report_carveout_advice(const struct report_input *in, json_t *k)
{
	const char *name = json_string_value(json_object_get(k, "name"));
	const char *lib = name ? library_of(in, name) : NULL;

	if (!lib)
		return xstrdup(json_string_value(json_object_get(k, "advice")) ?: "");
	return carveout_advice(name, (int)json_integer_value(json_object_get(k, "program_value")),
			       lib);
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void value_text(struct strbuf *out, json_t *v)
{
	json_int_t n = json_integer_value(v);

	if (n < 0)
		strbuf_addstr(out, "default");
	else
		strbuf_addf(out, "%lld%% shared", (long long)n);
}

/* "1.234x (noise 0.012), 5 rounds" or "not measured" */
static void speedup_text(struct strbuf *out, json_t *k)
{
	json_t *v = json_object_get(k, "speedup_of_default");
	json_t *sp = json_object_get(v, "speedup");

	if (!json_is_object(sp)) {
		strbuf_addstr(out, "not measured");
		return;
	}
	strbuf_addf(out, "default %.3fx the program's setting (min %.3f, max %.3f",
		    json_number_value(json_object_get(sp, "median")),
		    json_number_value(json_object_get(sp, "min")),
		    json_number_value(json_object_get(sp, "max")));
	if (json_is_number(json_object_get(v, "noise")))
		strbuf_addf(out, ", noise %.3f", json_number_value(json_object_get(v, "noise")));
	if (json_object_get(v, "method"))
		strbuf_addf(out, "; %s", str(v, "method"));
	strbuf_addch(out, ')');
}

void report_carveout_text(struct strbuf *out, const struct report_input *in, const char *bold,
			  const char *reset)
{
	json_t *k;
	size_t i;

	if (!json_array_size(kernels(in)))
		return;
	strbuf_addf(out, "\n%sL1/SHARED CARVE-OUT%s (set by the program; timed against the "
		    "driver's default, no PTX needed)\n", bold, reset);
	json_array_foreach(kernels(in), i, k) {
		int keep_default = !strcmp(str(k, "kept"), "default");

		strbuf_addf(out, "  %s\n    program sets ", str(k, "name"));
		value_text(out, json_object_get(k, "program_value"));
		strbuf_addstr(out, "; ");
		speedup_text(out, k);
		strbuf_addf(out, "\n    %s: %s\n", keep_default ? "ADVICE: use the driver's default" :
			    "kept as it is", str(k, "reason"));
		if (keep_default) {
			char *a = report_carveout_advice(in, k);

			strbuf_addf(out, "    -> %s\n", a);
			free(a);
		}
	}
}

void report_carveout_html(struct strbuf *out, const struct report_input *in)
{
	json_t *k;
	size_t i;

	if (!json_array_size(kernels(in)))
		return;
	strbuf_addstr(out, "<section id=\"carveout\"><h2>L1/shared carve-out</h2><p>Carve-outs the "
		      "program sets itself, timed against the driver's default (no PTX needed).</p>"
		      "<table><tr><th>kernel</th><th>program's setting</th><th>speedup of the "
		      "default</th><th>kept</th><th>reason</th></tr>");
	json_array_foreach(kernels(in), i, k) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(out, "<tr><td><code>");
		strbuf_add_html(out, str(k, "name"));
		strbuf_addstr(out, "</code></td><td>");
		value_text(&sb, json_object_get(k, "program_value"));
		strbuf_add_html(out, sb.buf);
		strbuf_reset(&sb);
		strbuf_addstr(out, "</td><td>");
		speedup_text(&sb, k);
		strbuf_add_html(out, sb.buf);
		strbuf_release(&sb);
		strbuf_addstr(out, "</td><td><strong>");
		strbuf_add_html(out, !strcmp(str(k, "kept"), "default") ? "the default" : "as it is");
		strbuf_addstr(out, "</strong></td><td>");
		strbuf_add_html(out, str(k, "reason"));
		if (json_object_get(k, "advice")) {
			char *a = report_carveout_advice(in, k);

			strbuf_addstr(out, "<br>");
			strbuf_add_html(out, a);
			free(a);
		}
		strbuf_addstr(out, "</td></tr>");
	}
	strbuf_addstr(out, "</table></section>\n");
}

void report_carveout_json(json_t *doc, const struct report_input *in)
{
	json_t *c = json_object_get(in->capture, "carveout");

	if (c)
		json_object_set(doc, "carveout", c);
}
