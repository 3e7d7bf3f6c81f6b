#include <string.h>

#include "analysis/capture_model.h"
#include "base/error.h"
#include "emitters/report_output.h"
#include "tests/unit/check.h"

/* in->model read from doc, as report_input_load() reads it. */
static int model_of(struct report_input *in, json_t *doc)
{
	memset(in, 0, sizeof(*in));
	capture_init(&in->model);
	if (capture_from_json(&in->model, doc, "capture.json")) {
		fprintf(stderr, "%s\n", error_message());
		return -1;
	}
	return 0;
}

/* The reports' output check section: status, reason, volatile lines with
 * examples, files; from the verification, else the baseline runs. */
static void test_section(void)
{
	struct report_input in;
	struct strbuf sb = STRBUF_INIT;
	json_t *out = json_loads(
		"{\"status\": \"unchecked\", \"volatile_lines\": 2, "
		"\"volatile_examples\": [\"stdout line 2: Kernel : 0.012076\", \"stdout line 4: IO : 0.28\"], "
		"\"unstable_lines\": 0, \"files\": [{\"path\": \"grid.bin\", \"status\": \"unchecked\", "
		"\"size\": 64, \"sha256\": \"ab<cd\"}], \"reason\": \"output unchecked: the program's results "
		"differ between baseline runs (file 'grid.bin')\"}", 0, NULL);
	json_t *doc = json_pack("{s:s, s:[], s:{s:O}}", "schema", CAPTURE_SCHEMA, "kernels",
				"baseline_check", "output", out), *j;
	const char *from;

	CHECK_INT(model_of(&in, doc), 0);
	CHECK(report_output_check(&in, &from) == &in.model.baseline_output);
	CHECK_STR(from, "baseline runs");
	capture_release(&in.model);
	json_object_set_new(doc, "verification", json_pack("{s:s, s:O}", "status", "verified",
							   "output", out));
	CHECK_INT(model_of(&in, doc), 0);
	CHECK(report_output_check(&in, &from) == &in.model.verification_output);
	CHECK_STR(from, "verification");

	report_output_text(&sb, &in, "", "");
	CHECK(strstr(sb.buf, "OUTPUT CHECK (verification)") != NULL);
	CHECK(strstr(sb.buf, "Output unchecked: output unchecked: the program's results differ") != NULL);
	CHECK(strstr(sb.buf, "Volatile lines (differ between baseline runs, compared with numbers masked): 2") != NULL);
	CHECK(strstr(sb.buf, "    stdout line 2: Kernel : 0.012076\n") != NULL);
	CHECK(strstr(sb.buf, "unchecked  grid.bin (64 bytes) differs between baseline runs") != NULL);
	strbuf_reset(&sb);
	report_output_html(&sb, &in);
	CHECK(strstr(sb.buf, "<section id=\"output-check\">") != NULL);
	CHECK(strstr(sb.buf, "ab&lt;cd") != NULL);
	strbuf_release(&sb);
	j = report_output_json(&in);
	CHECK_STR(json_string_value(json_object_get(j, "from")), "verification");
	CHECK_INT(json_integer_value(json_object_get(j, "volatile_lines")), 2);
	json_decref(j);
	capture_release(&in.model);

	/* a file within the tolerance, and lines left out (issue 25) */
	json_object_set_new(out, "status", json_string("within_tolerance"));
	json_object_set_new(out, "unstable_lines", json_integer(1));
	json_object_set_new(out, "unstable_examples", json_pack("[s]", "stdout line 7: seed 1732"));
	json_object_set_new(json_array_get(json_object_get(out, "files"), 0), "status",
			    json_string("within_tolerance"));
	json_object_set_new(json_array_get(json_object_get(out, "files"), 0), "compared_as",
			    json_string("f32"));
	json_object_set_new(json_array_get(json_object_get(out, "files"), 0), "max_abs_difference",
			    json_real(1e-7));
	json_object_set_new(json_array_get(json_object_get(out, "files"), 0), "max_rel_difference",
			    json_real(6e-8));
	json_object_set_new(doc, "verification", json_pack("{s:s, s:O}", "status", "verified",
							   "output", out));
	CHECK_INT(model_of(&in, doc), 0);
	report_output_text(&sb, &in, "", "");
	CHECK(strstr(sb.buf, "Left out of the comparison (their words differ between baseline runs): 1 line\n"
			     "    stdout line 7: seed 1732") != NULL);
	CHECK(strstr(sb.buf, "within_tolerance grid.bin (64 bytes), compared as f32: largest difference "
			     "1e-07 (6e-08 relative)") != NULL);
	strbuf_reset(&sb);
	capture_release(&in.model);

	/* a capture from before the output check: no section */
	json_object_del(doc, "verification");
	json_object_del(doc, "baseline_check");
	CHECK_INT(model_of(&in, doc), 0);
	report_output_text(&sb, &in, "", "");
	CHECK_INT(sb.len, 0);
	j = report_output_json(&in);
	CHECK(json_is_null(j));
	json_decref(j);
	capture_release(&in.model);
	json_decref(doc);
	json_decref(out);
	strbuf_release(&sb);
}

int main(void)
{
	test_section();
	return check_done();
}
