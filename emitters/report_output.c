#include "emitters/report_output.h"

#include <string.h>

json_t *report_output_check(const struct report_input *in, const char **from)
{
	json_t *o = json_object_get(in->verification, "output");

	*from = "verification";
	if (json_is_object(o))
		return o;
	*from = "baseline runs";
	o = json_object_get(json_object_get(in->capture, "baseline_check"), "output");
	return json_is_object(o) ? o : NULL;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

void report_output_text(struct strbuf *out, const struct report_input *in, const char *bold,
			const char *reset)
{
	const char *from;
	json_t *o = report_output_check(in, &from), *x;
	json_int_t nvol;
	size_t i;

	if (!o)
		return;
	nvol = json_integer_value(json_object_get(o, "volatile_lines"));
	strbuf_addf(out, "\n%sOUTPUT CHECK%s (%s)\n", bold, reset, from);
	strbuf_addf(out, "  Output %s: %s\n", str(o, "status"), str(o, "reason"));
	if (nvol) {
		strbuf_addf(out, "  Volatile lines (differ between baseline runs, compared with numbers "
			    "masked): %lld\n", (long long)nvol);
		json_array_foreach(json_object_get(o, "volatile_examples"), i, x)
			strbuf_addf(out, "    %s\n", json_string_value(x));
	}
	if (json_array_size(json_object_get(o, "unstable_examples"))) {
		strbuf_addf(out, "  Left out of the comparison (their words differ between baseline "
			    "runs): %lld line%s\n",
			    (long long)json_integer_value(json_object_get(o, "unstable_lines")),
			    json_integer_value(json_object_get(o, "unstable_lines")) == 1 ? "" : "s");
		json_array_foreach(json_object_get(o, "unstable_examples"), i, x)
			strbuf_addf(out, "    %s\n", json_string_value(x));
	}
	if (json_array_size(json_object_get(o, "files"))) {
		strbuf_addstr(out, "  Files the program wrote:\n");
		json_array_foreach(json_object_get(o, "files"), i, x) {
			strbuf_addf(out, "    %-10s %s", str(x, "status"), str(x, "path"));
			if (json_is_integer(json_object_get(x, "size")))
				strbuf_addf(out, " (%lld bytes)",
					    (long long)json_integer_value(json_object_get(x, "size")));
			if (!strcmp(str(x, "status"), "unchecked"))
				strbuf_addstr(out, " differs between baseline runs");
			if (json_is_number(json_object_get(x, "max_rel_difference")))
				strbuf_addf(out, ", compared as %s: largest difference %.3g (%.3g "
					    "relative)", str(x, "compared_as"),
					    json_number_value(json_object_get(x, "max_abs_difference")),
					    json_number_value(json_object_get(x, "max_rel_difference")));
			strbuf_addch(out, '\n');
		}
	}
}

void report_output_html(struct strbuf *out, const struct report_input *in)
{
	const char *from;
	json_t *o = report_output_check(in, &from), *x;
	json_int_t nvol;
	size_t i;

	if (!o)
		return;
	nvol = json_integer_value(json_object_get(o, "volatile_lines"));
	strbuf_addstr(out, "<section id=\"output-check\"><h2>Output check</h2><p>Output <strong>");
	strbuf_add_html(out, str(o, "status"));
	strbuf_addstr(out, "</strong> (");
	strbuf_add_html(out, from);
	strbuf_addstr(out, "): ");
	strbuf_add_html(out, str(o, "reason"));
	strbuf_addstr(out, "</p>");
	if (nvol) {
		strbuf_addf(out, "<p>Volatile lines (they differ between baseline runs and are compared "
			    "with numbers masked): %lld</p><ul>", (long long)nvol);
		json_array_foreach(json_object_get(o, "volatile_examples"), i, x) {
			strbuf_addstr(out, "<li><code>");
			strbuf_add_html(out, json_string_value(x));
			strbuf_addstr(out, "</code></li>");
		}
		strbuf_addstr(out, "</ul>");
	}
	if (json_array_size(json_object_get(o, "unstable_examples"))) {
		strbuf_addf(out, "<p>Left out of the comparison (their words differ between baseline "
			    "runs): %lld</p><ul>",
			    (long long)json_integer_value(json_object_get(o, "unstable_lines")));
		json_array_foreach(json_object_get(o, "unstable_examples"), i, x) {
			strbuf_addstr(out, "<li><code>");
			strbuf_add_html(out, json_string_value(x));
			strbuf_addstr(out, "</code></li>");
		}
		strbuf_addstr(out, "</ul>");
	}
	if (json_array_size(json_object_get(o, "files"))) {
		strbuf_addstr(out, "<table><tr><th>file the program wrote</th><th>status</th>"
			      "<th>bytes</th><th>SHA-256</th></tr>");
		json_array_foreach(json_object_get(o, "files"), i, x) {
			strbuf_addstr(out, "<tr><td><code>");
			strbuf_add_html(out, str(x, "path"));
			strbuf_addstr(out, "</code></td><td>");
			strbuf_add_html(out, str(x, "status"));
			if (json_is_number(json_object_get(x, "max_rel_difference"))) {
				strbuf_addstr(out, " (");
				strbuf_add_html(out, str(x, "compared_as"));
				strbuf_addf(out, ", largest difference %.3g relative)",
					    json_number_value(json_object_get(x, "max_rel_difference")));
			}
			strbuf_addstr(out, "</td><td>");
			if (json_is_integer(json_object_get(x, "size")))
				strbuf_addf(out, "%lld", (long long)json_integer_value(json_object_get(x, "size")));
			strbuf_addstr(out, "</td><td><code>");
			strbuf_add_html(out, str(x, "sha256"));
			strbuf_addstr(out, "</code></td></tr>");
		}
		strbuf_addstr(out, "</table>");
	}
	strbuf_addstr(out, "</section>\n");
}

json_t *report_output_json(const struct report_input *in)
{
	const char *from;
	json_t *o = report_output_check(in, &from), *r;

	if (!o)
		return json_null();
	r = json_deep_copy(o);
	json_object_set_new(r, "from", json_string(from));
	return r;
}
