#include "emitters/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/load_sites.h"
#include "analysis/ptx.h"
#include "base/error.h"
#include "base/module_id.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "emitters/patched_ptx.h"
#include "emitters/report_carveout.h"
#include "emitters/rewrite/source_file.h"

/* PTX files larger than this are refused (as patched_ptx.c does). */
#define REPORT_PTX_MAX_BYTES (1u << 30)

const struct report_format *const report_formats[] = {
	&report_format_text,
	&report_format_html,
	&report_format_json,
	&report_format_sarif,
	NULL,
};

const struct report_format *report_format_find(const char *name)
{
	size_t i;

	for (i = 0; report_formats[i]; i++)
		if (!strcmp(report_formats[i]->name, name))
			return report_formats[i];
	return NULL;
}

/*
 * NEEDSWORK: patched_ptx_write_all reads and renders the same files again;
 * it could write what this check rendered.
 */
int report_check_input(const struct report_input *in)
{
	const struct plan *plan = &in->plan;
	size_t i, j;
	int ret = 0;

	/* every function plan.json names is a kernel the capture measured
	 * (issue 25: a plan naming none gave "Nothing to change" beside rows
	 * that advise a change) */
	for (i = 0; i < plan->nr_modules; i++)
		for (j = 0; j < plan->modules[i].nr_functions; j++) {
			const char *id = plan->modules[i].id, *fn = plan->modules[i].functions[j].name;

			if (!capture_find_kernel(&in->model, id, fn))
				return error_set(CA_E_INPUT, "'%s/plan.json' names function %s%s%s, which "
						 "the capture measured no kernel of: re-write it with "
						 "'cacheadvise report %s --all'", in->dir, fn,
						 id ? " of module " : "", id ? id : "", in->dir);
		}
	for (i = 0; i < in->model.nr_modules; i++) {
		const char *id = in->model.modules[i].id, *ptx = in->model.modules[i].ptx;
		struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;
		char actual[MODULE_ID_LEN + 1], *src;

		if (!ptx)
			continue;
		src = capture_layout_file(in->dir, ptx);
		ret = strbuf_read_file(&text, src, REPORT_PTX_MAX_BYTES);
		if (!ret) {
			module_id_compute(text.buf, text.len, actual);
			if (strcmp(actual, id))
				ret = error_set(CA_E_INPUT, "'%s' does not match its module id %s (its "
						"content hashes to %s): was it edited?", src, id, actual);
		}
		if (!ret)
			ret = patched_ptx_render(src, text.buf, text.len, id, &in->plan, &out);
		free(src);
		strbuf_release(&text);
		strbuf_release(&out);
		if (ret < 0)
			return ret;
	}
	return 0;
}

const char *report_or_empty(const char *s)
{
	return s ? s : "";
}

char *report_human_bytes(double bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = fabs(bytes);
	int u = -1;

	if (isnan(bytes))
		return xstrdup("unmeasured");
	if (v < 1024)
		return xasprintf("%.0f B", bytes);
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	return xasprintf("%s%.*f %s", bytes < 0 ? "-" : "", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

char *report_load_where(const struct report_load *l)
{
	/* a Triton kernel: which tl.load of the line, by its column */
	if (load_sites_is_python(l->hint.path) && l->column > 0)
		return xasprintf("%s:%d:%d", l->hint.path, l->line, l->column);
	if (l->file && ptx_toolkit_include_name(l->file))   /* CUB's, Thrust's: as included */
		return xasprintf("<%s>:%d", ptx_toolkit_include_name(l->file), l->line);
	if (l->hint.path)
		return xasprintf("%s:%d", l->hint.path, l->line);
	if (l->ptx_line)
		return xasprintf("PTX line %u", l->ptx_line);
	return xstrdup("-");
}

/* Whether b continues a's group in "What to change" and the hints: the
 * same source line and action and hint status, and either the same column
 * (the loads of one expression, a Triton tl.load) or one reason why no
 * source change carries them (a library's code, no source). */
static int same_site(const struct report_load *a, const struct report_load *b)
{
	if (!(b->changes && a->file && b->file && a->line > 0 && a->line == b->line &&
	      !strcmp(a->file, b->file) && a->action && b->action && !strcmp(a->action, b->action) &&
	      a->hint.status == b->hint.status && b->ordinal == a->ordinal + (b - a)))
		return 0;
	if (a->column > 0 && a->column == b->column)
		return 1;
	return a->hint.status != SOURCE_HINT_REWRITTEN && a->hint.status != SOURCE_HINT_NONE &&
	       a->hint.message && b->hint.message && !strcmp(a->hint.message, b->hint.message);
}

/* What a source site is in file's language (analysis/load_sites.h). */
static const char *site_noun(const char *file)
{
	return load_sites_is_python(file) ? "call" : "expression";
}

char *report_load_group_phrase(const struct report_kernel *k, size_t j, size_t e)
{
	const struct report_load *l = &k->loads[j];

	if (l->column > 0 && l->column == k->loads[e].column)
		return xasprintf("%zu PTX loads of one %s", e - j + 1, site_noun(l->file));
	return xasprintf("%zu loads of this line", e - j + 1);
}

char *report_sites_text(const struct report_kernel *k)
{
	const char *file = NULL, *noun;
	size_t i;

	if (!k->analysis || !k->analysis->sites)
		return NULL;
	for (i = 0; i < k->nr_loads && !file; i++)
		file = k->loads[i].file;
	noun = site_noun(file);
	return xasprintf("decided per %s: %zu PTX loads are %zu source %s%s (%s)", noun,
			 k->analysis->site_loads, k->analysis->sites, noun,
			 k->analysis->sites == 1 ? "" : "s",
			 load_sites_is_python(file) ? "a tl.load's loads take one decision" :
			 "an expression's copies take one decision");
}

size_t report_load_group_end(const struct report_kernel *k, size_t j)
{
	size_t e = j;

	while (e + 1 < k->nr_loads && same_site(&k->loads[j], &k->loads[e + 1]))
		e++;
	return e;
}

char *report_load_saving(const struct report_load *l)
{
	double v = !strcmp(l->decision, "bypass") ? l->bypass_avoids_bytes : l->traffic_saved_bytes;
	char *b, *ret;

	if (isnan(v))
		return xstrdup("");
	b = report_human_bytes(v);
	ret = xasprintf("%s %s of L2 traffic", !strcmp(l->decision, "bypass") ? "avoids" : "saves", b);
	free(b);
	return ret;
}

char *report_human_count(double v)
{
	static const char *const units[] = { "k", "M", "G", "T" };
	double a = fabs(v);
	int u = -1;

	if (isnan(v))
		return xstrdup("-");
	if (a < 1000)
		return xasprintf("%.0f", v);
	while (a >= 1000 && u < 3) {
		a /= 1000;
		u++;
	}
	return xasprintf("%s%.*f %s", v < 0 ? "-" : "", a < 10 ? 2 : a < 100 ? 1 : 0, a, units[u]);
}

char *report_ranks_text(const struct report_kernel *k)
{
	const struct rank_spread *rs = &k->ranks;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	if (rs->nr_ranks < 2)
		return NULL;
	strbuf_addf(&sb, "%zu ranks measured apart", rs->nr_ranks);
	if (isnan(rs->max_spread)) {
		strbuf_addstr(&sb, ": no load was measured on two of them, so they are not compared");
		return strbuf_detach(&sb, NULL);
	}
	strbuf_addf(&sb, ": their hit_i per launch lie within %.0f%% of each other on the loads "
		    "that matter", 100 * rs->max_spread);
	if (!rs->nr_differs)
		strbuf_addstr(&sb, ", so the merged counters stand for every rank");
	if (rs->nr_differs == 2 && rs->nr_ranks == 2 &&
	    rs->differs[0].ordinal == rs->differs[1].ordinal) {
		/* two ranks apart: neither is the odd one */
		char *h0 = report_human_count(rs->differs[0].hit_per_launch);
		char *h1 = report_human_count(rs->differs[1].hit_per_launch);

		strbuf_addstr(&sb, "; ");
		for (i = 0; i < 2; i++) {
			strbuf_addf(&sb, "%srank %d", i ? " and " : "", rs->differs[i].rank);
			if (rs->differs[i].gpu)
				strbuf_addf(&sb, " (GPU %s)", rs->differs[i].gpu);
		}
		strbuf_addf(&sb, " differ: load %u gets %s and %s L1 hits per launch: the advice, "
			    "from their merged counters, may suit neither", rs->differs[0].ordinal,
			    h0, h1);
		free(h0);
		free(h1);
		return strbuf_detach(&sb, NULL);
	}
	for (i = 0; i < rs->nr_differs; i++) {
		const struct rank_spread_differs *d = &rs->differs[i];
		char *h = report_human_count(d->hit_per_launch), *m = report_human_count(d->median);

		strbuf_addf(&sb, "; rank %d", d->rank);
		if (d->gpu)
			strbuf_addf(&sb, " (GPU %s)", d->gpu);
		strbuf_addf(&sb, " differs: load %u gets %s L1 hits per launch against the ranks' "
			    "median %s", d->ordinal, h, m);
		free(h);
		free(m);
	}
	if (rs->nr_differs)
		strbuf_addf(&sb, ": the advice, from the ranks' merged counters, may not suit %s",
			    rs->nr_differs == 1 ? "it" : "them");
	return strbuf_detach(&sb, NULL);
}

char *report_load_hits_phrase(const struct report_load *l)
{
	char *n, *ret;

	if (isnan(l->hit))
		return xstrdup("");
	n = report_human_count(l->hit);
	if (isnan(l->hit_rate))
		ret = xasprintf("caching it enables %s L1 hits", n);
	else
		ret = xasprintf("caching it enables %s L1 hits, its hit rate %.1f%%", n,
				100 * l->hit_rate);
	free(n);
	return ret;
}

const struct report_legend_row report_load_legend[] = {
	{ "L1 hits enabled",
	  "hit_i, in 32-byte sectors: the kernel's L1 hits when this load alone allocates in L1 "
	  "(every other load bypassing it): this load's own hits plus the hits of other loads "
	  "on lines it brought in. It is what caching this load enables, not a rate of this "
	  "load, and may exceed the sectors the load reads." },
	{ "sectors read",
	  "access_i: the 32-byte sectors the load reads, counted exactly in the monitor run." },
	{ "hit rate",
	  "the load's own L1 hit rate, shown only where one is measured: in a kernel with a "
	  "single load, hit_i / access_i. Where loads share lines their own hits cannot be "
	  "told apart, so no rate is shown; the kernel's L1 hit rate with every load as built "
	  "is given above its table." },
	{ "saved",
	  "the L2 traffic the decision saves: the load's share of the plan's objective in the "
	  "traffic reduction graph." },
	{ NULL, NULL },
};

const char *report_action_phrase(const char *action)
{
	static const struct { const char *action, *phrase; } p[] = {
		{ "L1::no_allocate", "bypass L1 (L1::no_allocate)" },
		{ "L1::evict_last", "keep in L1 (L1::evict_last)" },
		{ "L1::evict_first", "evict first from L1 (L1::evict_first)" },
		{ "default", "plain load (no qualifier)" },
		{ "cache", "cache in L1 (.ca, strong)" },
		{ "bypass", "bypass L1 (.cg, strong)" },
		{ "stream", "streaming (.cs)" },
		{ "last_use", "last use (.lu)" },
		{ "L2::evict_last", "keep in L2 (L2::evict_last)" },
		{ "L2::evict_first", "evict first from L2 (L2::evict_first)" },
		{ "L2::evict_normal", "normal L2 priority (L2::evict_normal)" },
		{ "L2::evict_unchanged", "L2 priority unchanged (L2::evict_unchanged)" },
	};
	static char both[LOAD_ACTION__COUNT][L2_PRIORITY__COUNT][128];
	enum load_action a;
	enum l2_priority l2;
	size_t i;

	if (!action)
		return "leave as is";
	for (i = 0; i < ARRAY_SIZE(p); i++)
		if (!strcmp(p[i].action, action))
			return p[i].phrase;
	/* an L1 form and an L2 priority: both phrases */
	if (strchr(action, '+') && !load_form_parse(action, &a, &l2)) {
		if (!both[a][l2][0])
			snprintf(both[a][l2], sizeof(both[a][l2]), "%s, %s",
				 report_action_phrase(load_action_name(a)),
				 report_action_phrase(l2_priority_name(l2)));
		return both[a][l2];
	}
	return action;
}

const char *report_section_title(const char *key, int *candidate)
{
	static const struct { const char *key, *title; int candidate; } t[] = {
		{ "software_cache", "Software cache", 1 },
		{ "register_cache", "Register cache", 1 },
		{ "l2", "L2 persistence windows", 0 },
		{ "l2_windows", "L2 persistence windows in the plan", 0 },
		{ "oracle", "Oracle: every plan measured", 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		if (!strcmp(t[i].key, key)) {
			*candidate = t[i].candidate;
			return t[i].title;
		}
	}
	*candidate = 1;
	return key;
}

const char *report_section_standing(const struct report_section *s)
{
	const struct capture_softcache_verification *ver =
		s->software_cache && s->software_cache->has_verification ?
		&s->software_cache->verification : NULL;
	int candidate;

	report_section_title(s->key, &candidate);
	if (ver && ver->status && !strcmp(ver->status, "verified"))
		return ver->kept == 1 ? "verified on this program: kept"
				      : "verified on this program: rejected";
	return candidate ? "candidate, not verified on this program" : "as measured";
}

/* A job's ranks in a verdict: " (rank 0 on GPU 0000:1b:00.0: 1.21x; rank 1:
 * not timed, ...)", "" outside a job. Caller frees. */
static char *rank_verdicts_phrase(const struct capture_verdict *v)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; v && i < v->nr_ranks; i++) {
		const struct capture_rank_verdict *r = &v->ranks[i];

		strbuf_addf(&sb, "%srank %d", i ? "; " : " (", r->rank);
		if (r->gpu)
			strbuf_addf(&sb, " on GPU %s", r->gpu);
		if (!isnan(r->median))
			strbuf_addf(&sb, ": %.3gx%s", r->median, r->kept == 0 ? ", rejected" : "");
		else
			strbuf_addf(&sb, ": not timed%s%s", r->not_timed ? ", " : "",
				    r->not_timed ? r->not_timed : "");
	}
	if (sb.len)
		strbuf_addch(&sb, ')');
	return strbuf_detach(&sb, NULL);
}

char *report_async_copies_text(const struct report_kernel *k)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i, total = 0;
	int python = 0;

	if (!k->nr_async_copies)
		return NULL;
	for (i = 0; i < k->nr_async_copies; i++)
		total += k->async_copies[i].copies;
	strbuf_addf(&sb, "%zu async cop%s from global to shared memory (cp.async)", total,
		    total == 1 ? "y" : "ies");
	for (i = 0; i < k->nr_async_copies; i++) {
		const struct report_async_copy *a = &k->async_copies[i];
		const char *slash = a->file ? strrchr(a->file, '/') : NULL;

		if (!a->file)
			continue;
		python |= load_sites_is_python(a->file);
		strbuf_addf(&sb, "%s %s:%d (%zu)", i ? "," : " at", slash ? slash + 1 : a->file,
			    a->line, a->copies);
	}
	strbuf_addstr(&sb, total == 1 ? " is no ld.global load: it is" :
		      " are no ld.global loads: they are");
	strbuf_addstr(&sb, " neither measured nor patched");
	if (python)
		strbuf_addstr(&sb, ". Triton pipelines these tl.load calls into shared memory and "
			      "writes no cache hint on the copies, whatever eviction_policy= "
			      "says (Triton 3.6, docs/triton.md)");
	return strbuf_detach(&sb, NULL);
}

char *report_kernel_verification_text(const struct report_input *in,
				      const struct report_kernel *k)
{
	const char *status = in->model.verification.status;
	const char *reason = k->verdict ? k->verdict->reason : NULL;
	double speedup;
	int kept;

	if (report_kernel_verified(k, &speedup, &kept)) {
		double spread = report_verification_spread(k);
		char *sp = isnan(spread) ? xstrdup("") :
			   xasprintf(", baseline spread %.1f%%", 100 * spread);
		char *ranks = rank_verdicts_phrase(k->verdict);
		/* kept, with no load changed: the kernel was timed against itself */
		char *ret = kept && !k->nr_changes ?
			    xasprintf("verified: %.3gx median kernel speedup%s, with no load changed: "
				      "no advice (the plan keeps every load as built, so the figure "
				      "is the timing's noise)%s", speedup, sp, ranks) :
			    kept ? xasprintf("verified: %.3gx median kernel speedup%s, kept%s", speedup,
					     sp, ranks)
				 : xasprintf("measured and rejected: %.3gx median kernel speedup%s%s%s%s",
					     speedup, sp, reason ? ": " : "", reason ? reason : "", ranks);
		free(sp);
		free(ranks);
		return ret;
	}
	if (reason)
		return xasprintf("not verified: %s", reason);
	if (!in->model.has_verification)
		return xstrdup("not verified (the capture has no verification)");
	if (status && strcmp(status, "verified"))
		return xasprintf("not verified (%s)", status);
	return xstrdup("not verified");
}

char *report_l2_priorities_text(const struct report_input *in, const struct report_kernel *k)
{
	const struct analysis_kernel *a = k->analysis;
	size_t i;

	if (!a || (!a->l2_method && !a->l2_note))
		return NULL;
	if (!a->l2_method) {
		/* nothing measured: say so, and why where the SUMMARY knows */
		for (i = 0; i < in->summary.nr_not_run; i++)
			if (in->summary.not_run[i].skipped &&
			    !strncmp(in->summary.not_run[i].step, "the L2 priority", 15))
				return xasprintf("L2 priorities: not measured: %s (%s did not run: "
						 "see the summary)", a->l2_note,
						 in->summary.not_run[i].step);
		return xasprintf("L2 priorities: not measured: %s", a->l2_note);
	}
	{
		char *dram = report_human_bytes(a->l2_saved_dram_bytes);
		char *ret = xasprintf("L2 priorities: %s%s, expected DRAM traffic saved %s (measured "
				      "per load and pair against every load as built)%s%s",
				      a->l2_method, a->l2_optimal ? " (proven optimal)" :
				      " (not proven optimal)", dram, a->l2_note ? ": " : "",
				      a->l2_note ? a->l2_note : "");

		free(dram);
		return ret;
	}
}

/* "3-5" or "3, 7" for a close call's loads. */
static void close_call_loads(struct strbuf *sb, const struct analysis_close_call *c)
{
	size_t m;
	int run = c->nr_ordinals > 1;

	for (m = 1; m < c->nr_ordinals; m++)
		run &= c->ordinals[m] == c->ordinals[m - 1] + 1;
	if (run) {
		strbuf_addf(sb, "loads %u-%u", c->ordinals[0], c->ordinals[c->nr_ordinals - 1]);
		return;
	}
	strbuf_addstr(sb, c->nr_ordinals > 1 ? "loads " : "load ");
	for (m = 0; m < c->nr_ordinals; m++)
		strbuf_addf(sb, "%s%u", m ? ", " : "", c->ordinals[m]);
}

/* Whether the plan the report shows changes one of the close call's loads
 * while the analysis kept them as built: a plan.json written before the
 * close-call rule. */
static int plan_overrides(const struct report_kernel *k, const struct analysis_close_call *c)
{
	size_t m, j;

	if (strcmp(c->kept, "as built"))
		return 0;
	for (m = 0; m < c->nr_ordinals; m++)
		for (j = 0; j < k->nr_loads; j++)
			if (k->loads[j].ordinal == c->ordinals[m] && k->loads[j].changes)
				return 1;
	return 0;
}

char *report_close_calls_text(const struct report_kernel *k)
{
	const struct analysis_kernel *a = k->analysis;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	if (!a || !a->nr_close_calls)
		return NULL;
	strbuf_addstr(&sb, "close calls (within the noise, kept as built):");
	for (i = 0; i < a->nr_close_calls; i++) {
		const struct analysis_close_call *c = &a->close_calls[i];
		const char *alt = strcmp(c->chosen, c->kept) ? c->chosen : c->other;

		strbuf_addstr(&sb, i ? "; " : " ");
		close_call_loads(&sb, c);
		if (c->where)   /* file:line, the file's name as the tables print it */
			strbuf_addf(&sb, " (%s)", strrchr(c->where, '/') ? strrchr(c->where, '/') + 1 :
				    c->where);
		strbuf_addf(&sb, " %s %s vs %s, margin %.3g%% against noise %.3g%%", c->layer,
			    alt, c->kept, 100 * c->margin, 100 * c->noise);
		if (plan_overrides(k, c))
			strbuf_addstr(&sb, " (plan.json, written before this rule, still changes it: "
				      "profile again for a plan that keeps it)");
	}
	return strbuf_detach(&sb, NULL);
}

static json_t *num(double v);

/* The kernel's close calls for report.json: each with its loads, layer,
 * forms, margin and noise (fractions), and the line the text prints. */
static json_t *close_calls_json(const struct report_kernel *k)
{
	const struct analysis_kernel *a = k->analysis;
	json_t *arr = json_array(), *o;
	char *line = report_close_calls_text(k);
	size_t i, m;

	for (i = 0; i < a->nr_close_calls; i++) {
		const struct analysis_close_call *c = &a->close_calls[i];
		json_t *ords = json_array();

		for (m = 0; m < c->nr_ordinals; m++)
			json_array_append_new(ords, json_integer(c->ordinals[m]));
		json_array_append_new(arr, json_pack("{s:o, s:s, s:s?, s:s, s:s, s:s, s:o, s:o}",
			"loads", ords, "layer", c->layer, "where", c->where, "chosen", c->chosen,
			"other", c->other, "kept", c->kept, "margin", num(c->margin), "noise",
			num(c->noise)));
	}
	o = json_pack("{s:o, s:s?}", "sites", arr, "text", line);
	free(line);
	return o;
}

static json_t *num(double v)
{
	if (isnan(v) || isinf(v))
		return json_null();
	if (v == (double)(json_int_t)v && fabs(v) < 9e15)
		return json_integer((json_int_t)v);
	return json_real(v);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *copy_or_null(json_t *v)
{
	return v ? json_deep_copy(v) : json_null();
}

static json_t *hint_json(const struct report_load *l)
{
	const struct source_hint *h = &l->hint;
	json_t *o = json_object();

	json_object_set_new(o, "status", json_string(source_hint_status_name(h->status)));
	json_object_set_new(o, "message", str_or_null(h->message));
	json_object_set_new(o, "path", str_or_null(h->path));
	json_object_set_new(o, "line", l->line ? json_integer(l->line) : json_null());
	json_object_set_new(o, "source_text", str_or_null(h->source_text));
	json_object_set_new(o, "rewritten", str_or_null(h->rewritten));
	json_object_set_new(o, "helper", str_or_null(h->helper));
	json_object_set_new(o, "ptx", str_or_null(h->ptx_path));
	json_object_set_new(o, "ptx_line", l->ptx_line ? json_integer(l->ptx_line) : json_null());
	json_object_set_new(o, "ptx_text", str_or_null(h->ptx_text));
	return o;
}

static json_t *load_json(const struct report_load *l)
{
	json_t *o = json_object();

	json_object_set_new(o, "ordinal", json_integer(l->ordinal));
	json_object_set_new(o, "ptx_line", l->ptx_line ? json_integer(l->ptx_line) : json_null());
	json_object_set_new(o, "instruction", json_string(l->instruction));
	json_object_set_new(o, "file", str_or_null(l->file));
	json_object_set_new(o, "line", l->line ? json_integer(l->line) : json_null());
	json_object_set_new(o, "param", l->param >= 0 ? json_integer(l->param) : json_null());
	json_object_set_new(o, "read_only", l->read_only < 0 ? json_null() :
			    json_boolean(l->read_only));
	json_object_set_new(o, "patchable", json_boolean(l->patchable));
	json_object_set_new(o, "decision", json_string(l->decision));
	json_object_set_new(o, "action", str_or_null(l->action));
	json_object_set_new(o, "changes", json_boolean(l->changes));
	json_object_set_new(o, "hit", num(l->hit));
	json_object_set_new(o, "l1_hits_enabled", num(l->hit));
	json_object_set_new(o, "access", num(l->access));
	json_object_set_new(o, "hit_rate", num(l->hit_rate));
	json_object_set_new(o, "weight_bytes", num(l->weight_bytes));
	json_object_set_new(o, "traffic_saved_bytes", num(l->traffic_saved_bytes));
	json_object_set_new(o, "bypass_avoids_bytes", num(l->bypass_avoids_bytes));
	json_object_set_new(o, "hint", hint_json(l));
	return o;
}

/* report.json's "ranks" of a kernel (docs/report-json.md). */
static json_t *ranks_json(const struct rank_spread *rs)
{
	json_t *loads = json_array(), *differs = json_array();
	size_t i;

	for (i = 0; i < rs->nr_loads; i++) {
		const struct rank_spread_load *l = &rs->loads[i];

		json_array_append_new(loads, json_pack("{s:i, s:i, s:f, s:i, s:f, s:f, s:i, s:f}",
			"ordinal", l->ordinal, "ranks", (int)l->nr_ranks, "min", l->min, "min_rank",
			l->min_rank, "median", l->median, "max", l->max, "max_rank", l->max_rank,
			"spread", l->spread));
	}
	for (i = 0; i < rs->nr_differs; i++) {
		const struct rank_spread_differs *d = &rs->differs[i];

		json_array_append_new(differs, json_pack("{s:i, s:s?, s:i, s:f, s:f}", "rank",
			d->rank, "gpu", d->gpu, "ordinal", d->ordinal, "hit_per_launch",
			d->hit_per_launch, "median", d->median));
	}
	return json_pack("{s:i, s:o, s:o, s:o}", "measured", (int)rs->nr_ranks, "max_spread",
			 num(rs->max_spread), "loads", loads, "differs", differs);
}

static json_t *kernel_json(const struct report_input *in, const struct report_kernel *k)
{
	json_t *o = json_object(), *loads = json_array(), *jit = json_object();
	char *vt = report_kernel_verification_text(in, k), *label = report_kernel_label(k);
	size_t i;

	json_object_set_new(o, "module", json_string(k->module));
	json_object_set_new(o, "name", json_string(k->name));
	json_object_set_new(o, "demangled", str_or_null(k->demangled));
	json_object_set_new(o, "launches", k->launches >= 0 ? json_integer(k->launches) : json_null());
	{
		static const char *const keys[] = { "grid", "block", "gpu_time_ns", NULL };
		json_t *m = capture_members_json(k->model->source, keys);

		json_object_update(o, m);
		json_decref(m);
	}
	json_object_set_new(o, "analysed", json_boolean(k->analysis != NULL));
	json_object_set_new(o, "chosen", str_or_null(k->chosen));
	json_object_set_new(o, "optimal", k->optimal < 0 ? json_null() : json_boolean(k->optimal));
	json_object_set_new(o, "expected_l2_traffic_saved_bytes", num(k->expected_saved_bytes));
	if (k->analysis && k->analysis->sites)
		json_object_set_new(o, "sites", json_pack("{s:I, s:I}", "loads",
			(json_int_t)k->analysis->site_loads, "calls", (json_int_t)k->analysis->sites));
	json_object_set_new(o, "label", json_string(label));
	json_object_set_new(o, "l1_hit_rate", num(k->l1_hit_rate));
	json_object_set_new(jit, "change", num(k->jit_vs_cubin));
	json_object_set_new(jit, "reason", str_or_null(isnan(k->jit_vs_cubin) ?
							 k->jit_vs_cubin_reason : NULL));
	json_object_set_new(o, "jit_vs_cubin", jit);
	json_object_set_new(o, "loads_changed", json_integer((json_int_t)k->nr_changes));
	json_object_set_new(o, "verification", copy_or_null(k->verification));
	json_object_set_new(o, "verification_text", json_string(vt));
	json_object_set_new(o, "graph", k->analysis ? graph_to_json(&k->analysis->g) : json_null());
	if (k->generated_from)
		json_object_set_new(o, "generated", json_pack("{s:s, s:s, s:s?}", "by",
			"torch.compile (Inductor)", "source", k->generated_from, "provenance",
			k->provenance));
	if (k->ranks.nr_ranks >= 2)
		json_object_set_new(o, "ranks", ranks_json(&k->ranks));
	if (k->analysis && (k->analysis->l2_method || k->analysis->l2_note))
		json_object_set_new(o, "l2_priority", json_pack("{s:s?, s:b, s:o, s:s?}", "method",
			k->analysis->l2_method, "optimal", k->analysis->l2_optimal,
			"expected_dram_bytes_saved", num(k->analysis->l2_saved_dram_bytes),
			"note", k->analysis->l2_note));
	if (k->analysis && k->analysis->nr_close_calls)
		json_object_set_new(o, "close_calls", close_calls_json(k));
	if (k->analysis) {
		json_t *sols = json_array();

		for (i = 0; i < k->analysis->nr_solutions; i++)
			json_array_append_new(sols, solver_result_to_json(&k->analysis->g,
								       &k->analysis->solutions[i]));
		json_object_set_new(o, "solutions", sols);
	} else {
		json_object_set_new(o, "solutions", json_null());
	}
	for (i = 0; i < k->nr_loads; i++)
		json_array_append_new(loads, load_json(&k->loads[i]));
	json_object_set_new(o, "loads", loads);
	free(vt);
	free(label);
	return o;
}

/* report.json's "summary": in->summary, as every format prints it. */
static void summary_json(json_t *sum, const struct report_summary *s)
{
	static const char *const standing[] = {
		[REPORT_PLAN_UNCHANGED] = "nothing to verify",
		[REPORT_PLAN_UNVERIFIED] = "not verified",
		[REPORT_PLAN_NONE_MEASURED] = "not verified",
		[REPORT_PLAN_ALL_REJECTED] = "all rejected",
		[REPORT_PLAN_VERIFIED] = "verified",
	};
	json_t *arr = json_array();
	char *headline = report_summary_headline(s);
	size_t k;

	json_object_set_new(sum, "kernels", json_integer((json_int_t)s->nr_kernels));
	json_object_set_new(sum, "kernels_changed", json_integer((json_int_t)s->nr_kernels_changed));
	json_object_set_new(sum, "loads_changed", json_integer((json_int_t)s->nr_changes));
	json_object_set_new(sum, "source_plan_loads_changed",
			    json_integer((json_int_t)s->nr_patch_changes));
	json_object_set_new(sum, "loads_rewritten_in_source", json_integer((json_int_t)s->nr_rewritten));
	json_object_set_new(sum, "expected_l2_traffic_saved_bytes", num(s->expected_saved_bytes));
	json_object_set_new(sum, "verification", json_string(standing[s->plan]));
	json_object_set_new(sum, "verified_kernels", json_integer((json_int_t)s->nr_verified));
	json_object_set_new(sum, "kept_kernels", json_integer((json_int_t)s->nr_kept));
	for (k = 0; k < s->nr_wins; k++) {
		const struct report_win *w = &s->wins[k];
		json_t *o = json_pack("{s:s, s:s, s:f, s:s, s:s}", "kind", w->kind, "what", w->what,
				      "speedup", w->speedup, "measured", w->measured, "how", w->how);

		if (!isnan(w->noise))
			json_object_set_new(o, "noise", json_real(w->noise));
		json_array_append_new(arr, o);
	}
	json_object_set_new(sum, "verified_advice", arr);
	arr = json_array();
	for (k = 0; k < s->nr_plan_only; k++)
		json_array_append_new(arr, json_string(s->plan_only[k]));
	json_object_set_new(sum, "only_through_run_plan", arr);
	json_object_set_new(sum, "program_speedup", num(s->program_speedup));
	/* the program rebuilt from source.patch, timed (verification.rebuilt) */
	json_object_set_new(sum, "rebuilt_speedup", num(s->rebuilt_speedup));
	/* the first screen's sentences, as the text and HTML reports print them */
	json_object_set_new(sum, "kept_anything", json_boolean(s->kept_any));
	json_object_set_new(sum, "headline", json_string(headline));
	free(headline);
	arr = json_array();
	for (k = 0; k < s->nr_verdicts; k++) {
		const struct report_verdict *v = &s->verdicts[k];

		json_array_append_new(arr, json_pack("{s:s, s:o, s:b, s:b, s:s}", "kernel",
			v->kernel->name, "speedup", num(v->speedup), "kept", v->kept,
			"changes_loads", v->changes, "text", v->line));
	}
	json_object_set_new(sum, "kernel_verdicts", arr);
	arr = json_array();
	for (k = 0; k < s->nr_not_run; k++)
		json_array_append_new(arr, json_pack("{s:s, s:b, s:s}", "step", s->not_run[k].step,
			"asked_for", s->not_run[k].asked, "text", s->not_run[k].sentence));
	json_object_set_new(sum, "not_run", arr);
	json_object_set_new(sum, "nothing_to_change", str_or_null(s->no_change));
}

json_t *report_to_json(const struct report_input *in)
{
	const struct report_summary *s = &in->summary;
	json_t *doc = json_object(), *cap = json_object(), *sum = json_object();
	json_t *kernels = json_array(), *sections = json_array(), *notes = json_array();
	json_t *sources = json_object(), *files = json_array(), *no_ptx = json_array();
	size_t i;

	json_object_set_new(doc, "schema", json_string("cacheadvise.report/1"));
	json_object_set_new(doc, "tool_version", json_string(CACHEADVISE_VERSION));

	json_object_set_new(cap, "dir", json_string(in->dir));
	json_object_set_new(cap, "status", json_string(in->status));
	json_object_set_new(cap, "incomplete", json_boolean(in->incomplete));
	{
		static const char *const keys[] = { "created", "tool_version", "program", "device",
						    "options", "baseline_check", "runs", NULL };
		json_t *m = capture_members_json(in->model.source, keys);

		json_object_update(cap, m);
		json_decref(m);
	}
	json_object_set_new(doc, "capture", cap);

	summary_json(sum, s);
	json_object_set_new(doc, "summary", sum);

	for (i = 0; i < in->nr_kernels; i++)
		json_array_append_new(kernels, kernel_json(in, &in->kernels[i]));
	json_object_set_new(doc, "kernels", kernels);
	json_object_set_new(doc, "plan", plan_to_json(&in->plan));
	json_object_set_new(doc, "plan_source", json_string(in->plan_from_analysis ? "analysis" :
							     CAPTURE_LAYOUT_PLAN));
	json_object_set_new(doc, "verification", copy_or_null(in->verification));
	for (i = 0; i < in->nr_sections; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "key", json_string(in->sections[i].key));
		json_object_set_new(o, "kernel", str_or_null(in->sections[i].kernel));
		json_object_set_new(o, "origin", json_string(in->sections[i].origin));
		json_object_set_new(o, "value", json_deep_copy(in->sections[i].value));
		json_array_append_new(sections, o);
	}
	json_object_set_new(doc, "sections", sections);
	for (i = 0; i < in->nr_no_ptx; i++) {
		const struct report_module *m = &in->no_ptx[i];
		json_t *o = json_object();
		json_object_set_new(o, "id", str_or_null(m->id));
		json_object_set_new(o, "origin", str_or_null(m->origin));
		json_object_set_new(o, "library", str_or_null(m->library));
		json_object_set_new(o, "reason", json_string(m->reason));
		if (m->has_kernels) {
			json_t *names = json_array();
			size_t j;

			for (j = 0; j < m->nr_kernels; j++)
				json_array_append_new(names, json_string(m->kernels[j]));
			json_object_set_new(o, "kernels", names);
		} else {
			json_object_set_new(o, "kernels", json_null());
		}
		json_object_set_new(o, "gpu_time_ns", num(m->gpu_time_ns));
		json_array_append_new(no_ptx, o);
	}
	json_object_set_new(doc, "modules_without_ptx", no_ptx);

	json_object_set_new(sources, "root", str_or_null(in->source_root));
	json_object_set_new(sources, "read_from", str_or_null(in->lookup_root));
	for (i = 0; i < in->nr_sources; i++) {
		const struct report_source *src = &in->sources[i];
		json_t *f = json_object();
		json_object_set_new(f, "path", json_string(src->path));
		json_object_set_new(f, "read_path", json_string(src->read_path));
		json_object_set_new(f, "under_root", json_boolean(src->under_root));
		json_object_set_new(f, "readable", json_boolean(src->file != NULL));
		json_object_set_new(f, "sha256", src->file ? json_string(src->file->sha256) :
				    json_null());
		json_array_append_new(files, f);
	}
	json_object_set_new(sources, "files", files);
	json_object_set_new(doc, "sources", sources);
	for (i = 0; i < in->nr_notes; i++)
		json_array_append_new(notes, json_string(in->notes[i]));
	json_object_set_new(doc, "notes", notes);
	return doc;
}
