#include "emitters/report_carveout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/carveout_verdict.h"
#include "base/xalloc.h"

/* The advice for a kernel whose default was kept, phrased for whoever sets
 * the carve-out (captures before issue 25 said "remove the call" of a
 * library's kernels too). Caller frees. */
char *report_carveout_advice(const struct report_input *in,
			     const struct capture_carveout_kernel *k)
{
	const char *lib = capture_kernel_library(&in->model, k->name);

	if (!lib)
		return xstrdup(k->advice ? k->advice : "");
	return carveout_advice(k->name, k->program_value, lib);
}

static void value_text(struct strbuf *out, int v)
{
	if (v < 0)
		strbuf_addstr(out, "default");
	else
		strbuf_addf(out, "%d%% shared", v);
}

/* "1.234x (noise 0.012), 5 rounds" or "not measured" */
static void speedup_text(struct strbuf *out, const struct capture_carveout_kernel *k)
{
	if (!k->measured || isnan(k->speedup.median)) {
		strbuf_addstr(out, "not measured");
		return;
	}
	strbuf_addf(out, "default %.3fx the program's setting (min %.3f, max %.3f",
		    k->speedup.median, k->speedup.min, k->speedup.max);
	if (!isnan(k->noise))
		strbuf_addf(out, ", noise %.3f", k->noise);
	if (k->method)
		strbuf_addf(out, "; %s", k->method);
	strbuf_addch(out, ')');
}

static int keeps_default(const struct capture_carveout_kernel *k)
{
	return k->kept && !strcmp(k->kept, "default");
}

void report_carveout_text(struct strbuf *out, const struct report_input *in, const char *bold,
			  const char *reset)
{
	const struct capture_carveout *co = &in->model.carveout;
	size_t i;

	if (!co->nr_kernels)
		return;
	strbuf_addf(out, "\n%sL1/SHARED CARVE-OUT%s (set by the program; timed against the "
		    "driver's default, no PTX needed)\n", bold, reset);
	for (i = 0; i < co->nr_kernels; i++) {
		const struct capture_carveout_kernel *k = &co->kernels[i];

		strbuf_addf(out, "  %s\n    program sets ", k->name);
		value_text(out, k->program_value);
		strbuf_addstr(out, "; ");
		speedup_text(out, k);
		strbuf_addf(out, "\n    %s: %s\n", keeps_default(k) ? "ADVICE: use the driver's default" :
			    "kept as it is", k->reason ? k->reason : "");
		if (keeps_default(k)) {
			char *a = report_carveout_advice(in, k);

			strbuf_addf(out, "    -> %s\n", a);
			free(a);
		}
	}
}

void report_carveout_html(struct strbuf *out, const struct report_input *in)
{
	const struct capture_carveout *co = &in->model.carveout;
	size_t i;

	if (!co->nr_kernels)
		return;
	strbuf_addstr(out, "<section id=\"carveout\"><h2>L1/shared carve-out</h2><p>Carve-outs the "
		      "program sets itself, timed against the driver's default (no PTX needed).</p>"
		      "<table><tr><th>kernel</th><th>program's setting</th><th>speedup of the "
		      "default</th><th>kept</th><th>reason</th></tr>");
	for (i = 0; i < co->nr_kernels; i++) {
		const struct capture_carveout_kernel *k = &co->kernels[i];
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(out, "<tr><td><code>");
		strbuf_add_html(out, k->name);
		strbuf_addstr(out, "</code></td><td>");
		value_text(&sb, k->program_value);
		strbuf_add_html(out, sb.buf);
		strbuf_reset(&sb);
		strbuf_addstr(out, "</td><td>");
		speedup_text(&sb, k);
		strbuf_add_html(out, sb.buf);
		strbuf_release(&sb);
		strbuf_addstr(out, "</td><td><strong>");
		strbuf_add_html(out, keeps_default(k) ? "the default" : "as it is");
		strbuf_addstr(out, "</strong></td><td>");
		strbuf_add_html(out, k->reason ? k->reason : "");
		if (k->advice) {
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
	const struct capture_carveout *co = &in->model.carveout;
	json_t *c, *kernels;
	size_t i;

	if (!in->model.has_carveout)
		return;
	kernels = json_array();
	/* as recorded, each advice phrased for whoever sets the carve-out */
	c = json_deep_copy(capture_section_json(co->source));
	for (i = 0; i < co->nr_kernels; i++) {
		json_t *kj = json_deep_copy(capture_section_json(co->kernels[i].source));
		char *a;

		if (co->kernels[i].advice) {
			a = report_carveout_advice(in, &co->kernels[i]);
			json_object_set_new(kj, "advice", json_string(a));
			free(a);
		}
		json_array_append_new(kernels, kj);
	}
	json_object_set_new(c, "kernels", kernels);
	json_object_set_new(doc, "carveout", c);
}
