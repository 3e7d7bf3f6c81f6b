#include <string.h>

#include "analysis/capture_model.h"
#include "base/error.h"
#include "emitters/report_l2.h"
#include "tests/unit/check.h"

/* in->model read from a capture document holding `l2` (NULL: none). */
static void read_into(struct report_input *in, const char *l2)
{
	json_t *doc = json_pack("{s:s, s:[]}", "schema", CAPTURE_SCHEMA, "kernels");

	if (l2)
		json_object_set_new(doc, "l2", json_loads(l2, 0, NULL));
	memset(in, 0, sizeof(*in));
	capture_init(&in->model);
	if (capture_from_json(&in->model, doc, "capture.json"))
		fprintf(stderr, "%s\n", error_message());
	json_decref(doc);
}

/* The "Advice that needs no patching" section: a window for a kernel
 * without PTX that was timed and rejected, one not timed (DRAM screen). */
static void test_section(void)
{
	struct report_input in;
	struct strbuf sb = STRBUF_INIT;
	json_t *j;

	read_into(&in,
		"{\"status\": \"advised\", \"reason\": \"allocation #0 (26.2 MB) is read\", "
		"\"baseline_dram_bytes\": 2000000000.0, \"kept\": null, \"windows\": ["
		"{\"variant\": \"guide\", \"set_aside_bytes\": 39321600, \"alloc\": 0, \"num_bytes\": 26214400, "
		"\"hit_ratio\": 1.0, \"kernels\": [\"gemm<a>\", \"scale\"], \"kernels_without_ptx\": [\"gemm<a>\"], "
		"\"verification\": {\"kept\": false, \"reason\": \"slower\", \"dram_bytes\": 1500000000.0, "
		"\"speedup\": {\"min\": 0.97, \"median\": 0.98, \"max\": 0.99}, \"noise\": 0.01}}, "
		"{\"variant\": \"half_ratio\", \"set_aside_bytes\": 39321600, \"alloc\": 0, \"num_bytes\": 26214400, "
		"\"hit_ratio\": 0.5, \"kernels\": [\"gemm<a>\"], \"kernels_without_ptx\": [\"gemm<a>\"], "
		"\"verification\": {\"kept\": false, \"reason\": \"DRAM reads fell by less than 2%: not timed\", "
		"\"dram_bytes\": 1990000000.0}}]}");
	CHECK(in.model.has_l2);

	report_l2_text(&sb, &in, "", "");
	CHECK(strstr(sb.buf, "ADVICE THAT NEEDS NO PATCHING (kernels without PTX included)") != NULL);
	CHECK(strstr(sb.buf, "L2 persistence windows: advised, kept: none") != NULL);
	CHECK(strstr(sb.buf, "window guide: allocation #0, 25.0 MiB, hit ratio 1.000") != NULL);
	CHECK(strstr(sb.buf, "for gemm<a> [no PTX], scale\n") != NULL);
	CHECK(strstr(sb.buf, "0.980x (min 0.970, max 0.990, noise 0.010): rejected: slower") != NULL);
	CHECK(strstr(sb.buf, "rejected: DRAM reads fell by less than 2%: not timed") != NULL);
	strbuf_reset(&sb);
	report_l2_html(&sb, &in);
	CHECK(strstr(sb.buf, "<section id=\"no-patching\">") != NULL);
	CHECK(strstr(sb.buf, "gemm&lt;a&gt; [no PTX]") != NULL);
	j = json_object();
	report_l2_json(j, &in);
	CHECK_STR(json_string_value(json_object_get(json_object_get(json_object_get(j, "no_patching"),
		"l2"), "status")), "advised");
	json_decref(j);
	capture_release(&in.model);

	/* windows timed against the kept per-load L2 priorities say so */
	strbuf_reset(&sb);
	read_into(&in,
		"{\"status\": \"advised\", \"reason\": \"r\", \"baseline_dram_bytes\": 2000000000.0, "
		"\"baseline\": \"the kept per-load L2 priorities\", \"kept\": null, \"windows\": ["
		"{\"variant\": \"guide\", \"set_aside_bytes\": 39321600, \"alloc\": 0, \"num_bytes\": 26214400, "
		"\"hit_ratio\": 1.0, \"kernels\": [\"scale\"], "
		"\"verification\": {\"kept\": false, \"reason\": \"slower\", \"dram_bytes\": 1500000000.0, "
		"\"speedup\": {\"min\": 0.97, \"median\": 0.98, \"max\": 0.99}, \"noise\": 0.01}}]}");
	CHECK_STR(in.model.l2.baseline, "the kept per-load L2 priorities");
	report_l2_text(&sb, &in, "", "");
	CHECK(strstr(sb.buf, "(baseline 1.86 GiB, with the kept per-load L2 priorities); 0.980x") != NULL);
	capture_release(&in.model);

	/* a capture without "l2": no section */
	strbuf_reset(&sb);
	read_into(&in, NULL);
	report_l2_text(&sb, &in, "", "");
	CHECK_INT(sb.len, 0);
	j = json_object();
	report_l2_json(j, &in);
	CHECK(json_object_get(j, "no_patching") == NULL);
	json_decref(j);
	capture_release(&in.model);
	strbuf_release(&sb);
}

int main(void)
{
	test_section();
	return check_done();
}
