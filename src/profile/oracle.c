/*
 * `profile --oracle N`: times every plan of the kernels with at most N
 * measured loads (analysis/oracle_plans.h enumerates them), one plan of
 * every kernel per run, and records the best against the advice.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ab_verdict.h"
#include "analysis/load_sites.h"
#include "analysis/oracle_plans.h"
#include "analysis/plan.h"
#include "analysis/plan_query.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "src/profile/internal.h"

/* The outputs of the runs whose indices are in ids (a JSON array). */
static struct run_output *load_outputs(struct profile_ctx *c, json_t *ids, const struct run_output ***ptrs)
{
	json_t *x;
	size_t n = json_array_size(ids), i;
	struct run_output *o = xcalloc(n + 1, sizeof(*o));

	*ptrs = xcalloc(n + 1, sizeof(**ptrs));
	json_array_foreach(ids, i, x) {
		run_output_init(&o[i]);
		profile_run_output(c, profile_run_record(c, (unsigned)json_integer_value(x)), &o[i]);
		(*ptrs)[i] = &o[i];
	}
	return o;
}

static void free_outputs(struct run_output *o, const struct run_output **ptrs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		run_output_release(&o[i]);
	free(o);
	free(ptrs);
}

/*
 * The output check of every plan's runs against the oracle's baselines, as
 * verification does it: status[p] gets the status (caller frees) and ok[p]
 * whether it passed; a plan whose output does not pass is timed but never
 * the best. Returns how many plans did not pass.
 */
static size_t judge_plans(struct profile_ctx *c, json_t *ids, size_t nplans, char **status,
			  int *ok)
{
	json_t *bids = json_array_get(ids, nplans);
	const struct run_output **bp, **pp;
	struct run_output *bo = load_outputs(c, bids, &bp), *po;
	size_t p, failed = 0;

	for (p = 0; p < nplans; p++) {
		json_t *pids = json_array_get(ids, p), *o;

		po = load_outputs(c, pids, &pp);
		o = output_check_judge(bp, json_array_size(bids), pp, json_array_size(pids),
				       &c->output_check, &ok[p]);
		status[p] = output_check_status(o) ? xstrdup(output_check_status(o)) : NULL;
		failed += !ok[p];
		json_decref(o);
		free_outputs(po, pp, json_array_size(pids));
	}
	free_outputs(bo, bp, json_array_size(bids));
	return failed;
}

/* L2 oracle plans of a kernel at most: beyond them it gets the L1 oracle. */
#define ORACLE_MAX_L2_PLANS 81

/*
 * The L2 oracle of one kernel (--l2-priority, docs/cmd-profile.md): its
 * measured forms, each measured load's L1 action as advised (without the
 * L1 part of a Triton form the advice chose: digit 0 is the load without
 * a priority), and the advised plan's index. Returns the kernel's number
 * of L2 plans, 0 when it gets the L1 oracle.
 */
struct l2_oracle {
	struct oracle_l2_form *forms;
	size_t nr_forms;
	enum load_action *l1;
	/* the site of each measured load: a source site's loads (a Triton
	 * tl.load's, a CUDA expression's copies: analysis/load_sites.h) share a
	 * digit */
	size_t *site, nr_sites;
	/* per site, the digits it takes (bit d: form d - 1 measured; bit 0,
	 * the advice's L1 alone, always): a form it is built in is not */
	unsigned *allowed;
	size_t nplans, advised;
};

static size_t l2_oracle_of(struct profile_ctx *c, struct profile_kernel *k, struct l2_oracle *o)
{
	const struct capture_kernel *ck;
	const struct capture_l2_priority *lp;
	size_t n = k->vk.nr_measured, b, f;
	unsigned *digits;

	memset(o, 0, sizeof(*o));
	if (!c->opt->l2_priority || !k->l2_priority || !(ck = profile_kernel_read(c, k)) ||
	    !(lp = ck->l2_priority) || !lp->nr_forms)
		return 0;
	o->site = xcalloc(n + 1, sizeof(*o->site));
	o->nr_sites = load_sites_group_ptx(k->fn, k->vk.measured, n, o->site);
	o->allowed = xcalloc(o->nr_sites + 1, sizeof(*o->allowed));
	for (b = 0; b < o->nr_sites; b++)
		o->allowed[b] = 1;
	for (b = 0; b < n; b++) {
		const struct capture_l2_load *l = NULL;
		size_t e, m;

		for (e = 0; e < lp->nr_loads && !l; e++)
			for (m = 0; m < lp->loads[e].nr_ordinals; m++)
				if (lp->loads[e].ordinals[m] == k->vk.measured[b])
					l = &lp->loads[e];
		for (f = 0; l && f < lp->nr_forms && f < 31; f++)
			if (!isnan(l->dram_bytes[f]))
				o->allowed[o->site[b]] |= 1u << (f + 1);
	}
	if (o->nr_sites <= c->opt->oracle_max)
		o->nplans = oracle_l2_plan_count(o->nr_sites, lp->nr_forms, o->allowed,
						 ORACLE_MAX_L2_PLANS);
	o->forms = xcalloc(lp->nr_forms + 1, sizeof(*o->forms));
	for (f = 0; o->nplans && f < lp->nr_forms; f++)
		if (load_form_parse(lp->forms[f], &o->forms[f].action, &o->forms[f].l2))
			o->nplans = 0;
	if (!o->nplans) {
		free(o->site);
		free(o->forms);
		free(o->allowed);
		memset(o, 0, sizeof(*o));
		return 0;
	}
	o->nr_forms = lp->nr_forms;
	o->l1 = xcalloc(n + 1, sizeof(*o->l1));
	digits = xcalloc(o->nr_sites + 1, sizeof(*digits));
	for (b = 0; b < n; b++) {
		int a = plan_action(c->plan, k->module->id, k->name, k->vk.measured[b]);
		int l2 = plan_l2(c->plan, k->module->id, k->name, k->vk.measured[b]);

		o->l1[b] = a < 0 ? LOAD_ACTION_AS_BUILT : (enum load_action)a;
		for (f = 0; f < o->nr_forms; f++) {
			if (o->forms[f].l2 != (enum l2_priority)(l2 > 0 ? l2 : L2_PRIORITY_NONE))
				continue;
			/* "default" (l2 none): where the site measured it, the load's
			 * own policy removed; elsewhere it is the load as built */
			if (o->forms[f].l2 == L2_PRIORITY_NONE &&
			    !(o->allowed[o->site[b]] >> (f + 1) & 1))
				continue;
			if (o->forms[f].action != LOAD_ACTION_AS_BUILT) {
				if (o->forms[f].action != o->l1[b])
					continue;
				o->l1[b] = LOAD_ACTION_AS_BUILT;   /* the form's own L1 part */
			}
			digits[o->site[b]] = (unsigned)f + 1;   /* a site's loads share it */
			break;
		}
	}
	o->advised = oracle_l2_plan_index(digits, o->nr_sites, o->nr_forms, o->allowed);
	free(digits);
	return o->nplans;
}

static void l2_oracle_release(struct l2_oracle *o)
{
	free(o->forms);
	free(o->l1);
	free(o->site);
	free(o->allowed);
}

/* Whether kernel k takes part in the L1 oracle: no L2 one, and few loads. */
static int in_l1_oracle(const struct profile_ctx *c, const struct profile_kernel *k,
			const struct l2_oracle *o)
{
	return !o->nplans && k->vk.nr_measured <= c->opt->oracle_max;
}

/* An L2 plan's loads and forms: [{"ordinal", "form"}] for digits > 0. */
static json_t *l2_plan_json(const struct profile_kernel *k, const struct l2_oracle *o, size_t p)
{
	json_t *arr = json_array();
	size_t b;

	for (b = 0; b < k->vk.nr_measured; b++) {
		unsigned d = oracle_l2_digit(p, o->site[b], o->nr_forms, o->allowed);

		if (d)
			json_array_append_new(arr, json_pack("{s:i, s:s}", "ordinal",
				(int)k->vk.measured[b], "form",
				load_form_name(o->forms[d - 1].action, o->forms[d - 1].l2)));
	}
	return arr;
}

int profile_oracle(struct profile_ctx *c)
{
	unsigned rounds = c->opt->repeat < 3 ? (c->opt->repeat ? c->opt->repeat : 1) : 3;
	size_t nk = c->nr_kernels, i, nplans = 0, p, b;
	struct l2_oracle *l2o;
	unsigned r;
	double *t = NULL, *base = NULL;
	char *base_dir = NULL;
	json_t *out = json_array(), *ids = json_array();
	char **status = NULL;
	int *plan_ok = NULL;
	size_t output_failed = 0;
	int ret = 0;

	l2o = xcalloc(nk + 1, sizeof(*l2o));
	for (i = 0; i < nk; i++) {
		/* the L2 oracle counts a kernel's sites against N, the L1 one its loads */
		size_t kp = l2_oracle_of(c, &c->kernels[i], &l2o[i]);

		if (!kp && in_l1_oracle(c, &c->kernels[i], &l2o[i]))
			kp = oracle_plan_count((unsigned)c->kernels[i].vk.nr_measured);
		if (kp > nplans)
			nplans = kp;
	}
	if (!nplans) {
		json_object_set_new(c->capture, "oracle", json_pack("{s:s}", "status",
			"no measured kernel has few enough loads for --oracle"));
		goto out;
	}
	t = xcalloc(nk * nplans * rounds + 1, sizeof(double));
	base = xcalloc(nk * rounds + 1, sizeof(double));
	for (i = 0; i < nk * nplans * rounds; i++)
		t[i] = NAN;
	for (i = 0; i < nk * rounds; i++)
		base[i] = NAN;
	base_dir = profile_write_substitutes(c, "oracle-baseline", NULL);
	if (!base_dir) {
		ret = CA_E_IO;
		goto out;
	}
	for (p = 0; p <= nplans; p++)
		json_array_append_new(ids, json_array());
	c->runs_planned = c->runs_done + rounds * (unsigned)(nplans + 1);
	for (r = 0; r < rounds && !ret; r++) {
		for (p = 0; p <= nplans && !ret; p++) {
			/* p == nplans: the baseline of this round */
			char label[48], *dir;
			struct run_request req = { .timing = 1 };
			struct run_events ev;
			struct run_result res;
			unsigned run = UINT_MAX;

			if (p < nplans) {
				struct plan plan;
				plan_init(&plan);
				for (i = 0; i < nk; i++) {
					struct profile_kernel *k = &c->kernels[i];

					if (l2o[i].nplans)
						oracle_l2_plan_add(&plan, k->module->id, k->name,
								   k->vk.measured, l2o[i].l1,
								   k->vk.nr_measured, l2o[i].site,
								   l2o[i].nr_sites, l2o[i].forms,
								   l2o[i].nr_forms, l2o[i].allowed, p);
					else if (in_l1_oracle(c, k, &l2o[i]))
						oracle_plan_add(&plan, k->module->id, k->name,
								k->vk.measured, k->vk.nr_measured, p);
				}
				snprintf(label, sizeof(label), "oracle-%zu", p);
				dir = profile_write_substitutes(c, label, &plan);
				plan_release(&plan);
			} else {
				snprintf(label, sizeof(label), "oracle-baseline");
				dir = xstrdup(base_dir);
			}
			if (!dir) {
				ret = CA_E_IO;
				break;
			}
			req.subst_dir = dir;
			run_events_init(&ev);
			profile_progress(c, label);
			ret = profile_run_program(c, p < nplans ? "oracle" : "oracle-baseline", &req, &ev,
						  &res, &run);
			if (run != UINT_MAX)
				json_array_append_new(json_array_get(ids, p), json_integer(run));
			free(dir);
			if (!ret && res.status == RUN_INTERRUPTED)
				ret = error_set(CA_E_INTERRUPTED, "interrupted during the oracle runs");
			if (!ret && res.status == RUN_OK) {
				for (i = 0; i < nk; i++) {
					struct event_kernel *ek = run_events_kernel(&ev, c->kernels[i].name);
					double v = ek->timed_launches ? (double)ek->gpu_time_ns : NAN;
					if (p < nplans)
						t[(i * nplans + p) * rounds + r] = v;
					else
						base[i * rounds + r] = v;
				}
			}
			run_events_release(&ev);
			profile_progress(c, label);
		}
	}
	if (ret)
		goto out;
	status = xcalloc(nplans + 1, sizeof(*status));
	plan_ok = xcalloc(nplans + 1, sizeof(*plan_ok));
	output_failed = judge_plans(c, ids, nplans, status, plan_ok);
	for (i = 0; i < nk; i++) {
		struct profile_kernel *k = &c->kernels[i];
		size_t n = k->vk.nr_measured, best = 0, kplans, advised;
		double best_sp = -1, advised_sp = NAN, bt[8], med_base, *med;
		size_t nb = 0;
		json_t *plans, *kj;

		if (!l2o[i].nplans && !in_l1_oracle(c, k, &l2o[i]))
			continue;
		kplans = l2o[i].nplans ? l2o[i].nplans : (size_t)1 << n;
		advised = l2o[i].nplans ? l2o[i].advised : (size_t)k->advised;
		plans = json_array();
		med = xcalloc(kplans + 1, sizeof(*med));
		for (r = 0; r < rounds; r++)
			if (!isnan(base[i * rounds + r]))
				bt[nb++] = base[i * rounds + r];
		med_base = ab_median(bt, nb);
		for (p = 0; p < kplans; p++) {
			double v[8], m;
			size_t nv = 0;
			json_t *cached = json_array(), *pj;

			for (r = 0; r < rounds; r++)
				if (!isnan(t[(i * nplans + p) * rounds + r]))
					v[nv++] = t[(i * nplans + p) * rounds + r];
			m = med[p] = ab_median(v, nv);
			/* plan p of every kernel ran in the runs of plan index p */
			if (!plan_ok[p])
				med[p] = NAN;
			/* an L1 plan: the loads it caches; an L2 plan: the loads it
			 * gives a form (the L1 side as advised) */
			for (b = 0; b < n && !l2o[i].nplans; b++)
				if (p & ((size_t)1 << b))
					json_array_append_new(cached, json_integer(k->vk.measured[b]));
			pj = json_pack("{s:o, s:o, s:o, s:o}", "cached", cached,
				"median_ns", isnan(m) ? json_null() : json_real(m), "speedup",
				isnan(m) || isnan(med_base) ? json_null() : json_real(med_base / m),
				"output", status[p] ? json_string(status[p]) : json_null());
			if (l2o[i].nplans)
				json_object_set_new(pj, "l2", l2_plan_json(k, &l2o[i], p));
			json_array_append_new(plans, pj);
			if (p == advised && !isnan(m) && !isnan(med_base))
				advised_sp = med_base / m;
		}
		best = oracle_best_plan(med, kplans, med_base, &best_sp);
		free(med);
		kj = json_pack("{s:s, s:s, s:i, s:i, s:o}", "kernel", k->name, "dimension",
			       l2o[i].nplans ? "l2" : "l1", "loads", (int)n, "rounds", rounds,
			       "plans", plans);
		json_object_set_new(kj, "best_plan", json_integer((json_int_t)best));
		json_object_set_new(kj, "best_speedup", best_sp < 0 ? json_null() : json_real(best_sp));
		json_object_set_new(kj, "advised_plan", json_integer((json_int_t)advised));
		json_object_set_new(kj, "advised_speedup", isnan(advised_sp) ? json_null() : json_real(advised_sp));
		json_object_set_new(kj, "ratio", isnan(advised_sp) || best_sp <= 0 ? json_null() :
				    json_real(advised_sp / best_sp));
		json_array_append(out, kj);
		json_object_set_new(k->json, "oracle", kj);
	}
	json_object_set_new(c->capture, "oracle", json_pack("{s:s, s:i, s:O, s:I}", "status", "measured",
		"rounds", rounds, "kernels", out, "plans_output_rejected", (json_int_t)output_failed));
	ret = profile_write_capture(c, "complete");
out:
	for (i = 0; i < nk; i++)
		l2_oracle_release(&l2o[i]);
	free(l2o);
	json_decref(out);
	json_decref(ids);
	for (i = 0; status && i < nplans; i++)
		free(status[i]);
	free(status);
	free(plan_ok);
	free(base_dir);
	free(t);
	free(base);
	return ret;
}
