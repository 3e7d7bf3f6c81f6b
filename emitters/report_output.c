#include "emitters/report_output.h"

#include <math.h>
#include <string.h>

#include "emitters/report.h"

const struct capture_output_check *report_output_check(const struct report_input *in,
						       const char **from)
{
	*from = "verification";
	if (in->model.has_verification_output)
		return &in->model.verification_output;
	*from = "baseline runs";
	return in->model.has_baseline_output ? &in->model.baseline_output : NULL;
}

void report_output_text(struct strbuf *out, const struct report_input *in, const char *bold,
			const char *reset)
{
	const char *from;
	const struct capture_output_check *o = report_output_check(in, &from);
	size_t i;

	if (!o)
		return;
	strbuf_addf(out, "\n%sOUTPUT CHECK%s (%s)\n", bold, reset, from);
	strbuf_addf(out, "  Output %s: %s\n", report_or_empty(o->status), report_or_empty(o->reason));
	if (o->volatile_lines > 0) {
		strbuf_addf(out, "  Volatile lines (differ between baseline runs, compared with numbers "
			    "masked): %lld\n", o->volatile_lines);
		for (i = 0; i < o->nr_volatile_examples; i++)
			strbuf_addf(out, "    %s\n", o->volatile_examples[i]);
	}
	if (o->nr_unstable_examples) {
		strbuf_addf(out, "  Left out of the comparison (their words differ between baseline "
			    "runs): %lld line%s\n", o->unstable_lines, o->unstable_lines == 1 ? "" : "s");
		for (i = 0; i < o->nr_unstable_examples; i++)
			strbuf_addf(out, "    %s\n", o->unstable_examples[i]);
	}
	if (o->nr_files) {
		strbuf_addstr(out, "  Files the program wrote:\n");
		for (i = 0; i < o->nr_files; i++) {
			const struct capture_output_file *f = &o->files[i];

			strbuf_addf(out, "    %-10s %s", report_or_empty(f->status), f->path);
			if (!isnan(f->size))
				strbuf_addf(out, " (%.0f bytes)", f->size);
			if (f->status && !strcmp(f->status, "unchecked"))
				strbuf_addstr(out, " differs between baseline runs");
			if (!isnan(f->max_rel_difference))
				strbuf_addf(out, ", compared as %s: largest difference %.3g (%.3g "
					    "relative)", report_or_empty(f->compared_as),
					    f->max_abs_difference, f->max_rel_difference);
			strbuf_addch(out, '\n');
		}
	}
}

void report_output_html(struct strbuf *out, const struct report_input *in)
{
	const char *from;
	const struct capture_output_check *o = report_output_check(in, &from);
	size_t i;

	if (!o)
		return;
	strbuf_addstr(out, "<section id=\"output-check\"><h2>Output check</h2><p>Output <strong>");
	strbuf_add_html(out, report_or_empty(o->status));
	strbuf_addstr(out, "</strong> (");
	strbuf_add_html(out, from);
	strbuf_addstr(out, "): ");
	strbuf_add_html(out, report_or_empty(o->reason));
	strbuf_addstr(out, "</p>");
	if (o->volatile_lines > 0) {
		strbuf_addf(out, "<p>Volatile lines (they differ between baseline runs and are compared "
			    "with numbers masked): %lld</p><ul>", o->volatile_lines);
		for (i = 0; i < o->nr_volatile_examples; i++) {
			strbuf_addstr(out, "<li><code>");
			strbuf_add_html(out, o->volatile_examples[i]);
			strbuf_addstr(out, "</code></li>");
		}
		strbuf_addstr(out, "</ul>");
	}
	if (o->nr_unstable_examples) {
		strbuf_addf(out, "<p>Left out of the comparison (their words differ between baseline "
			    "runs): %lld</p><ul>", o->unstable_lines);
		for (i = 0; i < o->nr_unstable_examples; i++) {
			strbuf_addstr(out, "<li><code>");
			strbuf_add_html(out, o->unstable_examples[i]);
			strbuf_addstr(out, "</code></li>");
		}
		strbuf_addstr(out, "</ul>");
	}
	if (o->nr_files) {
		strbuf_addstr(out, "<table><tr><th>file the program wrote</th><th>status</th>"
			      "<th>bytes</th><th>SHA-256</th></tr>");
		for (i = 0; i < o->nr_files; i++) {
			const struct capture_output_file *f = &o->files[i];

			strbuf_addstr(out, "<tr><td><code>");
			strbuf_add_html(out, f->path);
			strbuf_addstr(out, "</code></td><td>");
			strbuf_add_html(out, report_or_empty(f->status));
			if (!isnan(f->max_rel_difference)) {
				strbuf_addstr(out, " (");
				strbuf_add_html(out, report_or_empty(f->compared_as));
				strbuf_addf(out, ", largest difference %.3g relative)",
					    f->max_rel_difference);
			}
			strbuf_addstr(out, "</td><td>");
			if (!isnan(f->size))
				strbuf_addf(out, "%.0f", f->size);
			strbuf_addstr(out, "</td><td><code>");
			strbuf_add_html(out, report_or_empty(f->sha256));
			strbuf_addstr(out, "</code></td></tr>");
		}
		strbuf_addstr(out, "</table>");
	}
	strbuf_addstr(out, "</section>\n");
}

json_t *report_output_json(const struct report_input *in)
{
	const char *from;
	const struct capture_output_check *o = report_output_check(in, &from);
	json_t *r;

	if (!o)
		return json_null();
	/* the check as recorded, and where it comes from */
	r = json_deep_copy(capture_section_json(o->source));
	json_object_set_new(r, "from", json_string(from));
	return r;
}
