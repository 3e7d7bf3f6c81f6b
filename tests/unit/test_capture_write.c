/*
 * capture_write_analysed(): emitting writes the analysis it is given and
 * never runs it again (a default `profile` analyses once and emits four
 * times).
 */
#include <unistd.h>

#include "analysis/advise.h"
#include "base/json_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "emitters/capture_write.h"
#include "emitters/report_input.h"
#include "tests/unit/check.h"

static void test_analyse_once(void)
{
	char dir[] = "/tmp/test_capture_write_XXXXXX";
	json_t *cap = json_file_load(check_source_path("tests/fixtures/capture-handmade/capture.json"));
	struct analysis analysis;
	struct strbuf sb = STRBUF_INIT;
	struct plan plan;
	struct capture model;
	unsigned long before;
	char *cmd, *path;
	int i;

	if (!cap || !mkdtemp(dir)) {
		CHECK(!"setup");
		return;
	}
	cmd = xasprintf("cp -r %s/modules %s/", check_source_path("tests/fixtures/capture-handmade"), dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	plan_init(&plan);
	before = advise_capture_count();
	capture_init(&model);
	CHECK_INT(capture_from_json(&model, cap, "capture.json"), 0);
	CHECK_INT(report_input_analyse(&model, &plan, NULL, &analysis), 0);
	capture_release(&model);
	CHECK_INT(advise_capture_count(), before + 1);
	/* mark the analysis: the reports must show this one, not a fresh one */
	CHECK(analysis.nr_kernels > 0 && analysis.kernels[0].chosen);
	analysis.kernels[0].solutions[0].method = "marker_solver";
	analysis.kernels[0].chosen = &analysis.kernels[0].solutions[0];
	before = advise_capture_count();
	for (i = 0; i < 4; i++)     /* analyse, verify, L2, oracle: four emits */
		CHECK_INT(capture_write_analysed(dir, cap, &analysis, &plan, NULL, NULL), 0);
	CHECK_INT(advise_capture_count(), before);
	path = capture_layout_file(dir, CAPTURE_LAYOUT_REPORT_JSON);
	CHECK_INT(strbuf_read_file(&sb, path, 0), 0);
	CHECK(strstr(sb.buf, "marker_solver") != NULL);
	free(path);
	/* capture_write_all analyses itself (report --all of an old capture) */
	before = advise_capture_count();
	CHECK_INT(capture_write_all(dir, cap, &plan), 0);
	CHECK_INT(advise_capture_count(), before + 1);
	cmd = xasprintf("rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	strbuf_release(&sb);
	plan_release(&plan);
	analysis_release(&analysis);
	json_decref(cap);
}

static void test_layout(void)
{
	char *p = capture_layout_module_ptx(NULL, "abcd");

	CHECK_STR(p, "modules/abcd.ptx");
	free(p);
	p = capture_layout_run_log("/x", 7);
	CHECK_STR(p, "/x/runs/007.log");
	free(p);
	p = capture_layout_run_events(NULL, 12);
	CHECK_STR(p, "runs/012.d/events.jsonl");
	free(p);
	p = capture_layout_subst_dir("/x", "verify-plan");
	CHECK_STR(p, "/x/runs/verify-plan.subst");
	free(p);
	CHECK(capture_layout_graph("/x", "a/b") == NULL);
	p = capture_layout_graph("/x", "_Z1kv");
	CHECK_STR(p, "/x/graphs/_Z1kv.json");
	free(p);
}

int main(void)
{
	test_analyse_once();
	test_layout();
	return check_done();
}
