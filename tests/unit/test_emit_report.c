/*
 * Unit tests of the report emitters on the hand-made capture
 * (tests/fixtures/capture-handmade): the report input and its source
 * hints, every report format, the source patch and sources.json, and the
 * patched PTX. The analysis is the ILP's, whose optimum on the fixture's
 * graphs was worked out by hand when the fixture was made; the plan is
 * written out here, so these tests check the rendering, not the solvers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "emitters/capture_write.h"
#include "emitters/patched_ptx.h"
#include "emitters/rewrite/sources_file.h"
#include "emitters/report.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/source_patch.h"
#include "tests/unit/check.h"

#define MOD_A "31a5c710dd083d35"
#define MOD_B "cf936e38cf9700b0"
#define MIX "_Z3mixPKfS0_PKiPfii"
#define GATHER "_Z6gatherPK8particlePKfPfii"
#define AXPY "_Z12axpy_inplacePfPKffi"
#define SCALE "_Z5scalePKfPfPVii"

/* The analysis of the fixture by the ILP (its optimum was worked out when
 * the fixture was made: mix caches ld1 and ld3, gather ld0, axpy_inplace
 * ld0, scale ld1). */
static struct analysis analyses[16];   /* each input borrows one: released at the end */
static size_t nr_analyses;

static struct analysis *fixture_analysis(json_t *capture)
{
	struct analysis *an = &analyses[nr_analyses++];
	struct advise_options ao;
	struct capture model;
	struct plan plan;

	advise_options_init(&ao);
	ao.method = "ilp";
	plan_init(&plan);
	capture_init(&model);
	/* a capture the reader refuses (the tests of refusals) has no analysis */
	if (!capture_from_json(&model, capture, "capture.json"))
		CHECK_INT(advise_capture(&model, &ao, &plan, NULL, an), 0);
	error_clear();
	capture_release(&model);
	plan_release(&plan);
	return an;
}

static json_t *fixture_capture(void)
{
	json_t *doc = json_file_load(check_source_path("tests/fixtures/capture-handmade/capture.json"));

	CHECK(doc != NULL);
	return doc;
}

static void fixture_plan(struct plan *p, int with_gather)
{
	plan_init(p);
	plan_set(p, MOD_A, MIX, 0, LOAD_ACTION_NO_ALLOCATE);
	plan_set(p, MOD_A, MIX, 1, LOAD_ACTION_DEFAULT);
	plan_set(p, MOD_A, MIX, 2, LOAD_ACTION_NO_ALLOCATE);
	plan_set(p, MOD_A, MIX, 3, LOAD_ACTION_DEFAULT);
	plan_set(p, MOD_A, MIX, 4, LOAD_ACTION_NO_ALLOCATE);
	plan_set(p, MOD_A, MIX, 5, LOAD_ACTION_NO_ALLOCATE);
	if (with_gather) {
		plan_set(p, MOD_A, GATHER, 0, LOAD_ACTION_DEFAULT);
		plan_set(p, MOD_A, GATHER, 1, LOAD_ACTION_NO_ALLOCATE);
		plan_set(p, MOD_A, GATHER, 2, LOAD_ACTION_NO_ALLOCATE);
	}
	plan_set(p, MOD_A, AXPY, 0, LOAD_ACTION_DEFAULT);
	plan_set(p, MOD_A, AXPY, 1, LOAD_ACTION_NO_ALLOCATE);
	plan_set(p, MOD_B, SCALE, 1, LOAD_ACTION_DEFAULT);
	plan_set(p, MOD_B, SCALE, 2, LOAD_ACTION_NO_ALLOCATE);
}

/* Builds the input from capture (a reference is taken) and plan. Returns 0 or the error. */
static int build_with(struct report_input *in, json_t *capture, const struct plan *plan)
{
	struct report_input_options opt = { NULL, NULL };
	char *dir = xstrdup(check_source_path("tests/fixtures/capture-handmade"));
	int ret;

	opt.source_root = check_source_path("tests/fixtures/sources");
	opt.source_root = xstrdup(opt.source_root);
	CHECK(nr_analyses < ARRAY_SIZE(analyses));
	ret = report_input_init_from(in, dir, capture, fixture_analysis(capture), plan, NULL, &opt);
	free((char *)opt.source_root);
	free(dir);
	return ret;
}

/* build_with the fixture's plan. */
static int build(struct report_input *in, json_t *capture, int with_gather)
{
	struct plan plan;
	int ret;

	fixture_plan(&plan, with_gather);
	ret = build_with(in, capture, &plan);
	plan_release(&plan);
	return ret;
}

static const struct report_load *find_load(const struct report_input *in, const char *kernel,
					   unsigned ordinal)
{
	size_t i, j;

	for (i = 0; i < in->nr_kernels; i++)
		if (!strcmp(in->kernels[i].name, kernel))
			for (j = 0; j < in->kernels[i].nr_loads; j++)
				if (in->kernels[i].loads[j].ordinal == ordinal)
					return &in->kernels[i].loads[j];
	CHECK(!"load not found");
	return NULL;
}

static char *render(const struct report_input *in, const char *format, int color)
{
	struct report_options opt = { color };
	struct strbuf sb = STRBUF_INIT;
	const struct report_format *f = report_format_find(format);

	CHECK(f != NULL);
	if (!f)
		return xstrdup("");
	CHECK_INT(f->render(in, &opt, &sb), 0);
	return strbuf_detach(&sb, NULL);
}

#define HINT(in, k, o) (find_load((in), (k), (o))->hint)

static void test_hints(const struct report_input *in)
{
	const struct report_load *l;

	CHECK_INT(in->nr_kernels, 4);
	CHECK_STR(in->source_root, "/work/main/tests/fixtures/sources");
	CHECK_INT(in->incomplete, 0);
	CHECK(in->verification == NULL);

	l = find_load(in, MIX, 0);
	CHECK_STR(l->decision, "bypass");
	CHECK_STR(l->action, "L1::no_allocate");
	CHECK_INT(l->changes, 1);
	CHECK_INT(l->hint.status, SOURCE_HINT_REWRITTEN);
	CHECK_STR(l->hint.path, "stencil.cu");
	CHECK_STR(l->hint.source_text, "\ts += b[idx[i]];");
	CHECK_STR(l->hint.rewritten, "\ts += b[ca_ldg_na(&idx[i])];");
	CHECK_STR(l->hint.helper, "ca_ldg_na");
	CHECK_STR(l->hint.elem_type, "int");

	l = find_load(in, MIX, 1);
	CHECK_STR(l->decision, "cache");
	CHECK_INT(l->changes, 0);   /* "default" on a load without qualifier */
	CHECK_INT(l->hint.status, SOURCE_HINT_NONE);
	CHECK(strstr(l->hint.message, "keep as is") != NULL);

	CHECK_STR(HINT(in, MIX, 2).rewritten, "\tfloat s = ca_ldg_na(&a[i]);");
	CHECK_INT(HINT(in, MIX, 4).status, SOURCE_HINT_NOT_REWRITTEN);
	CHECK(strstr(HINT(in, MIX, 4).message, "reads 'a' 2 times") != NULL);
	/* row is a local pointer into a (const float *row = a + ...): read through it */
	CHECK_INT(HINT(in, MIX, 5).status, SOURCE_HINT_REWRITTEN);
	CHECK_STR(HINT(in, MIX, 5).rewritten, "\ts += ca_ldg_na(&row[1]);");
	CHECK(strstr(HINT(in, MIX, 5).message, "the line reads 'a' through 'row', a pointer into it") != NULL);

	CHECK_STR(HINT(in, GATHER, 1).rewritten, "\tfloat x = ca_ld_na_ro(&p[i].x);");
	/* a member: the struct's definition in the file says its type */
	CHECK_STR(HINT(in, GATHER, 1).elem_type, "float");
	CHECK_STR(HINT(in, GATHER, 2).rewritten, "\tout[i] = x * w + 2.0f * ca_ldg_na(q + i + k);");
	/* x is written by the kernel: the helper with the "memory" clobber. */
	CHECK_STR(HINT(in, AXPY, 1).rewritten, "\t\tx[i] = alpha * y[i] + ca_ld_na(&x[i]);");

	l = find_load(in, SCALE, 2);
	CHECK_INT(l->hint.status, SOURCE_HINT_NO_LINEINFO);
	CHECK(strstr(l->hint.message, "rebuild with nvcc -lineinfo") != NULL);
	CHECK_STR(l->hint.ptx_path, "modules/" MOD_B ".ptx");
	CHECK(l->hint.ptx_text && !strncmp(l->hint.ptx_text, "ld.global.f32", 13));
	l = find_load(in, SCALE, 0);
	CHECK_STR(l->decision, "not patchable");
	CHECK(strstr(l->hint.message, "volatile") != NULL);
	CHECK(isnan(l->hit));

	/* The sections of capture.json: the software cache of mix and the L2 advice. */
	CHECK_INT(in->nr_sections, 2);
}

static void test_text(const struct report_input *in)
{
	char *t = render(in, "text", 0), *c;
	const char *summary = strstr(t, "SUMMARY"), *kernel = strstr(t, "KERNEL mix");

	CHECK(summary && kernel && summary < kernel);
	CHECK(strstr(t, "not verified") != NULL);
	CHECK(strstr(t, "the plan changes 8 loads in 4 kernels") != NULL);
	CHECK(strstr(t, "stencil.cu:14") != NULL);
	CHECK(strstr(t, "PTX line 52") != NULL);
	CHECK(strstr(t, "6 of 8 loads rewritten in source.patch") != NULL);
	CHECK(strstr(t, "+ \tfloat s = ca_ldg_na(&a[i]);") != NULL);
	CHECK(strstr(t, "SOFTWARE CACHE of mix  (candidate, not verified on this program") != NULL);
	CHECK(strstr(t, "ADVICE THAT NEEDS NO PATCHING (kernels without PTX included)\n  L2 persistence windows: none") != NULL);
	CHECK(strstr(t, "INCOMPLETE") == NULL);
	CHECK(strchr(t, '\033') == NULL);
	/* mix: loads 0..5 in the table with decision, hit_i, access; no per-load
	 * rate where loads share lines (hit_i / access_i is no rate). */
	CHECK(strstr(t, "     1  cache         default                   400000      1048576        -") != NULL);
	CHECK(strstr(t, "38.1%") == NULL);
	c = render(in, "text", 1);
	CHECK(strstr(c, "\033[1mSUMMARY\033[0m") != NULL);
	free(c);
	free(t);
}

static void test_json(const struct report_input *in)
{
	char *t = render(in, "json", 0);
	json_t *doc = json_loads(t, 0, NULL), *k, *l;

	CHECK(doc != NULL);
	CHECK_STR(json_string_value(json_object_get(doc, "schema")), "cacheadvise.report/1");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "summary"), "loads_changed")), 8);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "summary"),
						     "loads_rewritten_in_source")), 6);
	CHECK_STR(json_string_value(json_object_get(json_object_get(doc, "summary"), "verification")),
		  "not verified");
	k = json_array_get(json_object_get(doc, "kernels"), 0);
	CHECK_STR(json_string_value(json_object_get(k, "name")), MIX);
	CHECK(json_is_true(json_object_get(k, "optimal")));
	l = json_array_get(json_object_get(k, "loads"), 0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(l, "hint"), "status")), "rewritten");
	CHECK_INT(json_integer_value(json_object_get(l, "hit")), 2000);
	CHECK_INT(json_array_size(json_object_get(json_object_get(k, "graph"), "nodes")), 6);
	CHECK(json_is_object(json_object_get(doc, "plan")));
	CHECK_INT(json_array_size(json_object_get(doc, "sections")), 2);
	json_decref(doc);
	free(t);
}

static void test_sarif(const struct report_input *in)
{
	char *t = render(in, "sarif", 0);
	json_t *doc = json_loads(t, 0, NULL), *run, *res, *r;
	size_t i, bypass = 0, cache = 0;

	CHECK(doc != NULL);
	CHECK_STR(json_string_value(json_object_get(doc, "version")), "2.1.0");
	CHECK(json_string_value(json_object_get(doc, "$schema")) != NULL);
	run = json_array_get(json_object_get(doc, "runs"), 0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(json_object_get(run, "tool"),
		"driver"), "name")), "cacheadvise");
	res = json_object_get(run, "results");
	/* Every decided load: 6 + 3 + 2 + 2 (the volatile load is not advised). */
	CHECK_INT(json_array_size(res), 13);
	json_array_foreach(res, i, r) {
		const char *id = json_string_value(json_object_get(r, "ruleId"));
		json_t *loc = json_object_get(json_array_get(json_object_get(r, "locations"), 0),
					      "physicalLocation");
		bypass += id && !strcmp(id, "cacheadvise/bypass-l1");
		cache += id && !strcmp(id, "cacheadvise/cache-l1");
		CHECK(json_string_value(json_object_get(json_object_get(r, "message"), "text")) != NULL);
		CHECK(json_string_value(json_object_get(json_object_get(loc, "artifactLocation"),
							"uri")) != NULL);
		CHECK(json_integer_value(json_object_get(json_object_get(loc, "region"),
							 "startLine")) > 0);
	}
	CHECK_INT(bypass, 8);
	CHECK_INT(cache, 5);
	r = json_object_get(json_array_get(json_object_get(json_array_get(res, 0), "locations"), 0),
			    "physicalLocation");
	r = json_object_get(r, "artifactLocation");
	CHECK_STR(json_string_value(json_object_get(r, "uri")), "stencil.cu");
	CHECK_STR(json_string_value(json_object_get(r, "uriBaseId")), "SRCROOT");
	json_decref(doc);
	free(t);
}

static void test_html(const struct report_input *in)
{
	char *t = render(in, "html", 0);
	const char *p;

	CHECK(!strncmp(t, "<!DOCTYPE html>", 15));
	CHECK(strstr(t, "id=\"summary\"") != NULL);
	CHECK(strstr(t, "<svg") != NULL);
	CHECK(strstr(t, " &#10;" MIX "\">mix</code></h2>") && strstr(t, "\">gather</code></h2>") &&
	      strstr(t, "\">axpy_inplace</code></h2>") && strstr(t, "\">scale</code></h2>"));
	/* Self-contained: no scripts, no external stylesheets, images or fonts. */
	CHECK(strstr(t, "<script") == NULL);
	CHECK(strstr(t, "<link") == NULL);
	CHECK(strstr(t, " src=") == NULL);
	CHECK(strstr(t, "url(") == NULL);
	for (p = t; (p = strstr(p, "http")); p++)
		CHECK(!strncmp(p, "http://www.w3.org/2000/svg", 26));
	/* Source text is escaped. */
	CHECK(strstr(t, "ca_ldg_na(&amp;idx[i])") != NULL);
	CHECK(strstr(t, "Software cache of <code title=\"" MIX "\">mix</code>") != NULL);
	free(t);
}

static void test_patch(const struct report_input *in)
{
	struct strbuf sb = STRBUF_INIT;
	struct sources_file sf;
	size_t n = source_patch_write(in, &sb);

	CHECK_INT(n, 6);
	CHECK(!strncmp(sb.buf, "--- a/stencil.cu\n+++ b/stencil.cu\n@@ -1,3 +1,", 44));
	CHECK(strstr(sb.buf, "\n-\tfloat s = a[i];\n-\ts += b[idx[i]];\n+\tfloat s = ca_ldg_na(&a[i]);\n"
			     "+\ts += b[ca_ldg_na(&idx[i])];\n") != NULL);
	CHECK(strstr(sb.buf, "+#define CACHEADVISE_LDG_NA_I32\n") != NULL);
	CHECK(strstr(sb.buf, "+__device__ __forceinline__ float ca_ld_na(const float *p)") != NULL);
	CHECK(strstr(sb.buf, "a[i + k] * a[i + 2 * k]") != NULL);   /* context, not changed */
	CHECK(strstr(sb.buf, "-\ts += a[i + k]") == NULL);
	sources_file_init(&sf);
	source_patch_sources(in, &sf);
	CHECK_INT(sf.nr_files, 1);
	CHECK_STR(sf.files[0].path, "stencil.cu");
	CHECK(sf.files[0].patched);
	CHECK_INT(strlen(sf.files[0].patched_sha256), 64);
	/* The sources are the fixture's, unchanged. */
	CHECK_INT(source_patch_check_sources(&sf, "sources.json",
					     check_source_path("tests/fixtures/sources")), 0);
	CHECK(source_patch_check_sources(&sf, "sources.json", "/nonexistent") < 0);
	/* what is written reads back the same */
	{
		struct sources_file back;
		char *path = xasprintf("/tmp/test_emit_report_sources_%d.json", (int)getpid());

		sources_file_init(&back);
		CHECK_INT(sources_file_write(&sf, path), 0);
		CHECK_INT(sources_file_load(&back, path), 0);
		CHECK_INT(back.nr_files, 1);
		CHECK_STR(back.files[0].sha256, sf.files[0].sha256);
		CHECK_STR(back.files[0].patched_sha256, sf.files[0].patched_sha256);
		CHECK_INT(back.files[0].rewritten_lines, 6);
		sources_file_release(&back);
		unlink(path);
		free(path);
	}
	sources_file_release(&sf);
	strbuf_release(&sb);
}

static void test_patched_ptx(const struct report_input *in)
{
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;
	int n;

	CHECK_INT(strbuf_read_file(&text, check_source_path("tests/fixtures/capture-handmade/modules/"
							     MOD_A ".ptx"), 0), 0);
	n = patched_ptx_render("A", text.buf, text.len, MOD_A, &in->plan, &out);
	/* mix 6, gather 3, axpy 2 entries in the plan for module A. */
	CHECK_INT(n, 11);
	CHECK(strstr(out.buf, "ld.global.nc.L1::no_allocate.u32") != NULL);
	CHECK(strstr(out.buf, "ld.global.L1::no_allocate.f32") != NULL);
	CHECK_INT(out.len > text.len, 1);
	strbuf_release(&text);
	strbuf_release(&out);
}

static void test_verified(void)
{
	json_t *cap = fixture_capture(), *k;
	struct report_input in;
	char *t;

	/* mix kept at 1.08x; gather measured slower and dropped from the plan. */
	k = json_array_get(json_object_get(cap, "kernels"), 0);
	json_object_set_new(k, "verification", json_pack("{s:{s:f,s:f,s:f}, s:f, s:b, s:s, s:s}",
		"speedup", "min", 1.05, "median", 1.08, "max", 1.11, "noise", 0.012, "kept", 1,
		"reason", "the median speedup exceeds the baseline-against-baseline spread",
		"name", MIX));
	k = json_array_get(json_object_get(cap, "kernels"), 1);
	json_object_set_new(k, "verification", json_pack("{s:{s:f,s:f,s:f}, s:f, s:b, s:s, s:s}",
		"speedup", "min", 0.95, "median", 0.97, "max", 0.99, "noise", 0.01, "kept", 0,
		"reason", "slower than the baseline", "name", GATHER));
	json_object_set_new(cap, "verification", json_pack("{s:s, s:b, s:{s:{s:f}}}", "status",
		"verified", "kept", 1, "program", "gpu_speedup", "median", 1.04));
	CHECK_INT(build(&in, cap, 0), 0);
	t = render(&in, "text", 0);
	CHECK(strstr(t, "verified: 1.08x median kernel speedup, baseline spread 1.2%, kept") != NULL);
	CHECK(strstr(t, "measured and rejected: 0.97x median kernel speedup, baseline spread 1.0%: "
			"slower than the baseline") != NULL);
	CHECK(strstr(t, "program speedup 1.04x") != NULL);
	CHECK(strstr(t, "not verified (the capture") == NULL);
	/* gather's bypass advice was rejected: its hint says so, nothing to change. */
	CHECK_INT(find_load(&in, GATHER, 1)->changes, 0);
	CHECK(strstr(HINT(&in, GATHER, 1).message, "the verification rejected") != NULL);
	free(t);
	report_input_release(&in);
	json_decref(cap);
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The summary's headline of the input, as one line. */
static int headline_is(const struct report_input *in, const char *want)
{
	char *h = report_summary_headline(&in->summary);
	int same = !strcmp(h, want);

	if (!same)
		fprintf(stderr, "headline: %s\n", h);
	free(h);
	return same;
}

/*
 * Issue 35: every kind of kept advice counts in the headline, and a kept
 * verdict whose figure is within its own noise is no advice.
 */
static void test_summary_kept_kinds(void)
{
	json_t *cap = fixture_capture(), *doc;
	struct report_input in;
	char *t;

	json_object_set_new(cap, "carveout", json_pack("{s:[{s:s, s:i, s:i, s:{s:{s:f,s:f,s:f}, "
		"s:f, s:b}, s:s, s:s}]}", "kernels", "name", MIX, "program_value", 100,
		"default_value", -1, "speedup_of_default", "speedup", "min", 1.03, "median", 1.05,
		"max", 1.07, "noise", 0.01, "kept", 1, "kept", "default", "advice",
		"remove the cudaFuncSetAttribute call"));
	/* recorded as kept, yet 1.003x within a 1% spread */
	json_object_set_new(cap, "l2", json_pack("{s:s, s:[{s:s, s:i, s:f, s:{s:{s:f,s:f,s:f}, "
		"s:f, s:b}}], s:s}", "status", "advised", "windows", "variant", "guide", "alloc", 0,
		"num_bytes", 4194304.0, "verification", "speedup", "min", 0.99, "median", 1.003,
		"max", 1.01, "noise", 0.01, "kept", 1, "kept", "guide"));
	CHECK_INT(build(&in, cap, 1), 0);
	CHECK_INT(in.summary.nr_wins, 1);
	CHECK_STR(in.summary.wins[0].kind, "carve-out");
	CHECK_NEAR(in.summary.wins[0].noise, 0.01, 1e-12);
	CHECK_INT(in.summary.kept_any, 1);
	CHECK_INT(in.summary.plan, REPORT_PLAN_UNVERIFIED);
	CHECK(headline_is(&in, "Verified speedup: 1.05x at best (carve-out, kernel time; 1 piece "
			  "of advice kept, listed above); the load plan is not verified (this "
			  "capture has no verification section; profile without --no-verify to "
			  "measure it)."));
	t = render(&in, "text", 0);
	CHECK(strstr(t, "Verified speedup: not verified") == NULL);
	CHECK(strstr(t, "1. 1.05x carve-out") != NULL);
	CHECK(strstr(t, "L2 window      a persisting") == NULL);
	free(t);
	t = render(&in, "json", 0);
	doc = json_loads(t, 0, NULL);
	CHECK(json_is_true(json_object_get(json_object_get(doc, "summary"), "kept_anything")));
	CHECK_INT(json_array_size(json_object_get(json_object_get(doc, "summary"),
						  "verified_advice")), 1);
	json_decref(doc);
	free(t);
	report_input_release(&in);
	json_decref(cap);
}

/* Issue 35 item 7: --l2-priority asked for, and nothing measured. */
static void test_summary_l2_not_run(void)
{
	json_t *cap = fixture_capture(), *mix;
	struct report_input in;
	const struct report_kernel *k;
	char *t;

	json_object_set_new(json_object_get(cap, "options"), "l2_priority", json_true());
	/* what the profile records when the pass measured no load */
	mix = json_array_get(json_object_get(cap, "kernels"), 0);
	json_object_set_new(mix, "l2_priority", json_pack("{s:[s,s], s:f, s:[], s:[]}", "forms",
		"L2::evict_first", "L2::evict_last", "baseline_dram_bytes", 4.0e6, "loads", "pairs"));
	CHECK_INT(build(&in, cap, 1), 0);
	k = &in.kernels[0];
	CHECK_STR(k->name, MIX);
	/* no decision made, and none reported as one */
	CHECK(k->analysis && k->analysis->l2_method == NULL);
	CHECK_INT(in.summary.l2_priority_asked, 1);
	CHECK_INT(in.summary.l2_priority_ran, 0);
	CHECK_INT(in.summary.nr_not_run, 1);
	CHECK(starts_with(in.summary.not_run[0].sentence, "The L2 priority pass you asked for "
			  "(--l2-priority) measured no load with an L2 priority: "));
	CHECK_INT(in.summary.not_run[0].skipped, 0);
	t = render(&in, "text", 0);
	CHECK(strstr(t, "can take one") == NULL);
	CHECK(strstr(t, "  L2 priorities: not measured: no load was measured with an L2 "
			"priority\n") != NULL);
	free(t);
	report_input_release(&in);

	/* the budget skipped it: said first, with how to make it run */
	json_object_set_new(cap, "budget", json_pack("{s:f, s:f, s:f, s:[{s:s, s:i, s:f, s:f}]}",
		"factor", 20.0, "seconds", 30.0, "native_seconds", 1.5, "skipped", "step",
		"the L2 priority pass", "runs", 1, "estimate_seconds", 4.0, "spent_seconds", 28.0));
	CHECK_INT(build(&in, cap, 1), 0);
	CHECK_INT(in.summary.nr_not_run, 1);
	CHECK_INT(in.summary.not_run[0].asked, 1);
	CHECK_STR(in.summary.not_run[0].sentence, "The L2 priority pass you asked for "
		  "(--l2-priority) did not run, so no load was measured with an L2 priority: the "
		  "budget skipped it (its 1 program run would take about 4 s, and 28 s of the "
		  "budget's 30 s were spent); profile again with --budget 0 to measure it.");
	t = render(&in, "text", 0);
	CHECK(strstr(t, "SUMMARY\n  The L2 priority pass you asked for") != NULL);
	CHECK(strstr(t, "(the L2 priority pass did not run: see the summary)") != NULL);
	free(t);
	t = render(&in, "html", 0);
	CHECK(strstr(t, "<li class=\"not-run\"><strong>The L2 priority pass you asked for") != NULL);
	free(t);
	report_input_release(&in);

	/* not asked for (an older capture): the skip is said, not as asked */
	json_object_del(json_object_get(cap, "options"), "l2_priority");
	CHECK_INT(build(&in, cap, 1), 0);
	CHECK_INT(in.summary.nr_not_run, 1);
	CHECK_INT(in.summary.not_run[0].asked, 0);
	CHECK(starts_with(in.summary.not_run[0].sentence, "The L2 priority pass did not run: the "
			  "budget skipped it ("));
	report_input_release(&in);
	json_decref(cap);
}

/* A plan that changes no load: nothing to verify, said so, nothing kept. */
static void test_summary_unchanged(void)
{
	json_t *cap = fixture_capture();
	struct report_input in;
	struct plan plan;
	char *t;

	json_object_set_new(cap, "verification", json_pack("{s:s, s:b}", "status",
		"nothing to verify: the plan changes no load", "kept", 0));
	plan_init(&plan);
	CHECK_INT(build_with(&in, cap, &plan), 0);
	plan_release(&plan);
	CHECK_INT(in.summary.plan, REPORT_PLAN_UNCHANGED);
	CHECK_INT(in.summary.kept_any, 0);
	CHECK(headline_is(&in, "Verified speedup: none: the plan changes no load, so there was "
			  "nothing to verify."));
	CHECK_STR(in.summary.no_change, "Nothing to change: every measured load is best left as "
		  "it is.");
	t = render(&in, "json", 0);
	CHECK(strstr(t, "\"verification\": \"nothing to verify\"") != NULL);
	free(t);
	report_input_release(&in);
	json_decref(cap);
}

static void test_incomplete_and_conflict(void)
{
	json_t *cap = fixture_capture(), *mix;
	struct report_input in;
	char *t;

	json_object_set_new(cap, "status", json_string("incomplete"));
	/* Load 3 (cached) moved onto load 2's line: one expression, two advices. */
	mix = json_array_get(json_object_get(cap, "kernels"), 0);
	json_object_set_new(json_array_get(json_object_get(mix, "loads"), 3), "line", json_integer(13));
	CHECK_INT(build(&in, cap, 1), 0);
	CHECK_INT(in.incomplete, 1);
	t = render(&in, "text", 0);
	CHECK(!strncmp(t, "*** INCOMPLETE CAPTURE (status \"incomplete\")", 44));
	free(t);
	t = render(&in, "html", 0);
	CHECK(strstr(t, "id=\"incomplete\"") != NULL);
	free(t);
	CHECK_INT(HINT(&in, MIX, 2).status, SOURCE_HINT_NOT_REWRITTEN);
	CHECK(strstr(HINT(&in, MIX, 2).message, "load 3 of mix comes from the same expression") != NULL);
	report_input_release(&in);
	json_decref(cap);
}

static void test_bad_capture(void)
{
	json_t *cap = fixture_capture();
	struct report_input in;

	json_object_set_new(cap, "schema", json_string("cacheadvise.capture/2"));
	CHECK_INT(build(&in, cap, 1), CA_E_INPUT);
	report_input_release(&in);
	json_object_set_new(cap, "schema", json_string("cacheadvise.capture/1"));
	json_object_set_new(json_array_get(json_object_get(cap, "kernels"), 1), "loads",
			    json_string("oops"));
	CHECK_INT(build(&in, cap, 1), CA_E_INPUT);
	report_input_release(&in);
	json_object_set_new(json_array_get(json_object_get(cap, "modules"), 0), "ptx",
			    json_string("modules/missing.ptx"));
	CHECK_INT(build(&in, cap, 1), CA_E_INPUT);
	report_input_release(&in);
	json_decref(cap);
}

/* capture_write_all(): every artifact of a capture directory, atomically. */
static void test_capture_write(void)
{
	static const char *const files[] = { "plan.json", "report.txt", "report.html", "report.json",
					     "hints.sarif", "source.patch", "sources.json",
					     "patched/" MOD_A ".ptx", "patched/" MOD_B ".ptx" };
	struct capture_write_options opt = { NULL };
	char dir[] = "/tmp/test_emit_capture_XXXXXX";
	json_t *cap = fixture_capture();
	struct strbuf sb = STRBUF_INIT;
	struct plan plan;
	char *cmd, *path;
	size_t i;

	if (!cap || !mkdtemp(dir)) {
		CHECK(!"setup");
		return;
	}
	cmd = xasprintf("cp -r %s/modules %s/", check_source_path("tests/fixtures/capture-handmade"), dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	CHECK_INT(capture_write_all(dir, cap, NULL), 0);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		path = xasprintf("%s/%s", dir, files[i]);
		strbuf_reset(&sb);
		CHECK_INT(strbuf_read_file(&sb, path, 0), 0);
		free(path);
	}
	cmd = xasprintf("ls -a %s %s/patched | grep -q '[.]tmp[.]'", dir, dir);
	CHECK(system(cmd) != 0);    /* no temporary file left */
	free(cmd);
	/* The plan written is the analysis' (no plan given): mix load 0 bypassed. */
	plan_init(&plan);
	path = xasprintf("%s/plan.json", dir);
	CHECK_INT(plan_load_file(&plan, path), 0);
	free(path);
	CHECK(plan.nr_modules > 0);
	plan_release(&plan);
	path = xasprintf("%s/patched/" MOD_A ".ptx", dir);
	strbuf_reset(&sb);
	CHECK_INT(strbuf_read_file(&sb, path, 0), 0);
	CHECK(strstr(sb.buf, "ld.global.nc.L1::no_allocate.u32") != NULL);
	free(path);

	/* With the sources where they are in this checkout: the patch. */
	opt.source_root = check_source_path("tests/fixtures/sources");
	opt.source_root = xstrdup(opt.source_root);
	CHECK_INT(capture_write_all_opts(dir, cap, NULL, &opt), 0);
	path = xasprintf("%s/source.patch", dir);
	strbuf_reset(&sb);
	CHECK_INT(strbuf_read_file(&sb, path, 0), 0);
	CHECK(strstr(sb.buf, "+\tfloat s = ca_ldg_na(&a[i]);") != NULL);
	free(path);
	free((char *)opt.source_root);

	/* A directory without the modules: an error, nothing written. */
	cmd = xasprintf("rm -rf %s/* && mkdir -p %s/x", dir, dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	path = xasprintf("%s/x", dir);
	CHECK_INT(capture_write_all(path, cap, NULL), CA_E_INPUT);
	free(path);
	path = xasprintf("%s/x/report.txt", dir);
	CHECK(access(path, F_OK) != 0);
	free(path);
	cmd = xasprintf("rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
	free(cmd);
	strbuf_release(&sb);
	json_decref(cap);
}

static void test_human(void)
{
	char *s;

	s = report_human_bytes(812);
	CHECK_STR(s, "812 B");
	free(s);
	s = report_human_bytes(1536);
	CHECK_STR(s, "1.50 KiB");
	free(s);
	s = report_human_bytes(14880000);
	CHECK_STR(s, "14.2 MiB");
	free(s);
	s = report_human_bytes(-2048);
	CHECK_STR(s, "-2.00 KiB");
	free(s);
	s = report_human_bytes(NAN);
	CHECK_STR(s, "unmeasured");
	free(s);
}

int main(void)
{
	struct report_input in;
	json_t *cap = fixture_capture();

	CHECK(report_format_find("text") && report_format_find("html") &&
	      report_format_find("json") && report_format_find("sarif"));
	CHECK(report_format_find("pdf") == NULL);
	if (cap && !build(&in, cap, 1)) {
		test_hints(&in);
		test_text(&in);
		test_json(&in);
		test_sarif(&in);
		test_html(&in);
		test_patch(&in);
		test_patched_ptx(&in);
		report_input_release(&in);
	} else {
		CHECK(!"cannot build the report input");
	}
	json_decref(cap);
	test_verified();
	test_summary_kept_kinds();
	test_summary_l2_not_run();
	test_summary_unchanged();
	test_incomplete_and_conflict();
	test_bad_capture();
	test_capture_write();
	test_human();
	while (nr_analyses)
		analysis_release(&analyses[--nr_analyses]);
	return check_done();
}
