#include <string.h>

#include "emitters/report_output.h"
#include "tests/unit/check.h"

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
	json_t *j;
	const char *from;

	memset(&in, 0, sizeof(in));
	in.capture = json_pack("{s:{s:O}}", "baseline_check", "output", out);
	CHECK(report_output_check(&in, &from) != NULL);
	CHECK_STR(from, "baseline runs");
	in.verification = json_pack("{s:s, s:O}", "status", "verified", "output", out);
	CHECK(report_output_check(&in, &from) == out);
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

	/* a capture from before the output check: no section */
	json_decref(in.verification);
	json_decref(in.capture);
	in.verification = NULL;
	in.capture = json_object();
	report_output_text(&sb, &in, "", "");
	CHECK_INT(sb.len, 0);
	j = report_output_json(&in);
	CHECK(json_is_null(j));
	json_decref(j);
	json_decref(in.capture);
	json_decref(out);
	strbuf_release(&sb);
}

int main(void)
{
	test_section();
	return check_done();
}
