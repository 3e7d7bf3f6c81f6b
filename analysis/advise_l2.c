/*
 * The L2 eviction priorities of a kernel (analysis/advise_l2.h): the
 * several-forms problem its "l2_priority" measurements pose, solved
 * beside the L1 decision.
 */
#include "analysis/advise_l2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/capture_model.h"
#include "analysis/close_calls.h"
#include "analysis/load_sites.h"
#include "analysis/multi_choice.h"
#include "analysis/plan.h"
#include "base/error.h"
#include "base/xalloc.h"

/*
 * A kernel's "l2_priority" measurements (issue 26, docs/model.md "Several
 * forms per load") as the several-forms problem they pose: every entry
 * that can take a priority takes as built (form 0) or one of the section's
 * forms.
 */
struct l2_problem {
	const struct capture_kernel *ck;
	const struct capture_l2_priority *lp;
	enum load_action *act;      /* per form of the section: its L1 part ... */
	enum l2_priority *prio;     /* ... and its L2 part */
	size_t *idx, n;             /* the entries (of lp->loads) that can take one */
};

static void l2_problem_release(struct l2_problem *p)
{
	free(p->act);
	free(p->prio);
	free(p->idx);
}

/*
 * The forms (an L2 priority, an L1 form with one: Triton's eviction_policy,
 * or "default": a Triton load without one, its policy removed) and the
 * entries a priority can be given: every load of them patchable, and none
 * with a bare L2 eviction qualifier of its own. A cache hint of their own
 * (Triton's eviction_policy) is what they are "as built": a measured
 * priority that does better replaces its policy (ptx_load_l2_refused).
 * Returns 0 or CA_E_INPUT for a form that is no L2 priority.
 */
static int l2_problem_init(struct l2_problem *p, const struct capture_kernel *ck)
{
	const struct capture_l2_priority *lp = ck->l2_priority;
	size_t i, f;

	memset(p, 0, sizeof(*p));
	p->ck = ck;
	p->lp = lp;
	p->prio = xcalloc(lp->nr_forms + 1, sizeof(*p->prio));
	p->act = xcalloc(lp->nr_forms + 1, sizeof(*p->act));
	p->idx = xcalloc(lp->nr_loads + 1, sizeof(*p->idx));
	for (f = 0; f < lp->nr_forms; f++)
		if (load_form_parse(lp->forms[f], &p->act[f], &p->prio[f]) ||
		    !load_form_is_l2_choice(p->act[f], p->prio[f]))
			return error_set(CA_E_INPUT, "kernel '%s': l2_priority.forms[%zu] '%s' is "
					 "not an L2 priority", ck->name, f, lp->forms[f]);
	for (i = 0; i < lp->nr_loads; i++) {
		const struct capture_l2_load *l = &lp->loads[i];
		size_t m;

		for (m = 0; m < l->nr_ordinals; m++) {
			const struct capture_load *cl = capture_kernel_find_load(ck, l->ordinals[m]);

			if (!cl || cl->patchable == 0 ||
			    (cl->instruction && strstr(cl->instruction, "L2::evict_")))
				break;
		}
		if (m == l->nr_ordinals)
			p->idx[p->n++] = i;
	}
	return 0;
}

/* Whether entry i of the problem is a Triton .py's call. */
static int l2_entry_python(const struct l2_problem *p, size_t i)
{
	unsigned ordinal = p->lp->loads[p->idx[i]].ordinal;
	const struct capture_load *cl = capture_kernel_find_load(p->ck, ordinal);

	return cl && load_sites_is_python(cl->file);
}

/* Whether entry i may take form f in the source plan: a CUDA load any
 * form, a Triton call only one tl.load can write. */
static int l2_source_allows(const struct l2_problem *p, size_t i, size_t f)
{
	return !l2_entry_python(p, i) || load_sites_triton_form(p->act[f], p->prio[f], NULL, NULL);
}

/* Whether the source plan's problem differs from the plan's: some Triton
 * call was measured in a form tl.load cannot write. */
static int l2_source_restricts(const struct l2_problem *p)
{
	size_t i, f;

	for (i = 0; i < p->n; i++) {
		const double *dram = p->lp->loads[p->idx[i]].dram_bytes;

		for (f = 0; f < p->lp->nr_forms; f++)
			if (!isnan(dram[f]) && !l2_source_allows(p, i, f))
				return 1;
	}
	return 0;
}

/*
 * The DRAM bytes within which a gain is noise: twice the baseline's
 * spread. The spread is the range of a few replays, and a single's gain is
 * one replay against them: at one spread, a load that saves nothing real
 * crossed it in one profile of three (deposit's load 0 on the H200,
 * bench/gpu_plan_stability.sh), and the plans differed.
 */
#define L2_NOISE_SPREADS 2.0

static double l2_noise(const struct capture_l2_priority *lp)
{
	return isnan(lp->noise_dram_bytes) ? 0 : L2_NOISE_SPREADS * lp->noise_dram_bytes;
}

/*
 * The gains: u_i(s) the DRAM bytes entry i in form s saved alone, p_ij(s,
 * t) what a measured pair saved beyond its two singles; a gain within the
 * baseline's noise counts 0. A form not measured, or (source) one the
 * entry's source cannot write, is never chosen. Nor is a pair of forms
 * not measured of two entries whose measured pair interacts beyond the
 * noise: the profile measures each pair in its singles' best forms, and
 * taking another pair of their forms as adding up, where the measured one
 * does not, chose deposit's load 0 and 2 priorities beside load 1's at
 * random (three H200 profiles, three plans; docs/model.md "Pairs not
 * measured").
 */
static void l2_gains(const struct l2_problem *p, int source, struct multi_choice *mc)
{
	const struct capture_l2_priority *lp = p->lp;
	double noise = l2_noise(lp);
	unsigned *forms = xcalloc(p->n + 1, sizeof(*forms));
	size_t nf = lp->nr_forms + 1, i, f;
	/* measured[(a * n + b) * nf * nf + s * nf + t]; interacts[a * n + b] */
	unsigned char *measured = xcalloc(p->n * p->n * nf * nf + 1, 1);
	unsigned char *interacts = xcalloc(p->n * p->n + 1, 1);

	for (i = 0; i < p->n; i++)
		forms[i] = (unsigned)lp->nr_forms + 1;
	multi_choice_init(mc, p->n, forms);
	free(forms);
	for (i = 0; i < p->n; i++) {
		const struct capture_l2_load *l = &lp->loads[p->idx[i]];

		for (f = 0; f < lp->nr_forms; f++) {
			double g = lp->baseline_dram_bytes - l->dram_bytes[f];

			if (isnan(g) || (source && !l2_source_allows(p, i, f)))
				g = -1e30;
			else if (fabs(g) <= noise)
				g = 0;
			multi_choice_set_unary(mc, i, (unsigned)f + 1, g);
		}
	}
	for (i = 0; i < lp->nr_pairs; i++) {
		const struct capture_l2_pair *pr = &lp->pairs[i];
		size_t a, b;
		double ga, gb, g;

		for (a = 0; a < p->n && lp->loads[p->idx[a]].ordinal != pr->i; a++)
			;
		for (b = 0; b < p->n && lp->loads[p->idx[b]].ordinal != pr->j; b++)
			;
		if (a == p->n || b == p->n)
			continue;
		ga = lp->baseline_dram_bytes - lp->loads[p->idx[a]].dram_bytes[pr->form_i];
		gb = lp->baseline_dram_bytes - lp->loads[p->idx[b]].dram_bytes[pr->form_j];
		g = lp->baseline_dram_bytes - pr->dram_bytes - ga - gb;
		if (isnan(g))
			continue;
		measured[(a * p->n + b) * nf * nf + (pr->form_i + 1) * nf + pr->form_j + 1] = 1;
		measured[(b * p->n + a) * nf * nf + (pr->form_j + 1) * nf + pr->form_i + 1] = 1;
		if (fabs(g) <= noise)
			continue;
		interacts[a * p->n + b] = interacts[b * p->n + a] = 1;
		multi_choice_set_pair(mc, a, pr->form_i + 1, b, pr->form_j + 1, g);
	}
	for (i = 0; i < p->n; i++) {
		size_t j, s, t;

		for (j = i + 1; j < p->n; j++)
			for (s = 1; interacts[i * p->n + j] && s < nf; s++)
				for (t = 1; t < nf; t++)
					if (!measured[(i * p->n + j) * nf * nf + s * nf + t])
						multi_choice_set_pair(mc, i, (unsigned)s, j,
								      (unsigned)t, -1e30);
	}
	free(interacts);
	free(measured);
}

/* Form s of the problem's several-forms items by name: 0 is as built. */
static const char *l2_form_name(const struct l2_problem *p, unsigned s)
{
	return s ? p->lp->forms[s - 1] : "as built";
}

/* What a close call's tie goes to (close_call_rank_fn): the form as built,
 * then a form the item's source can write, then any. */
struct l2_rank_ctx {
	const struct l2_problem *p;
	const size_t *group;        /* each entry's item, NULL: the entry itself */
};

static unsigned l2_rank(const void *ctx, size_t item, unsigned form)
{
	const struct l2_rank_ctx *c = ctx;
	size_t i;

	if (!form)
		return 0;
	for (i = 0; i < c->p->n; i++)
		if ((c->group ? c->group[i] : i) == item)
			return l2_source_allows(c->p, i, form - 1) ? 1 : 2;
	return 2;
}

/* An L2 close call of item `item` into ak: every load of its entries. */
static void l2_record_close(const struct l2_problem *p, const size_t *group, size_t item,
			    const struct close_choice *cc, double noise,
			    struct analysis_kernel *ak)
{
	unsigned *ords = NULL;
	struct close_call_site c = { "L2", NULL, 0, NULL, l2_form_name(p, cc->chosen),
				     l2_form_name(p, cc->other), l2_form_name(p, cc->kept),
				     cc->margin, noise, p->lp->baseline_dram_bytes };
	char *where = NULL;
	size_t i, m, n = 0;

	for (i = 0; i < p->n; i++) {
		const struct capture_l2_load *l = &p->lp->loads[p->idx[i]];

		if ((group ? group[i] : i) != item)
			continue;
		ords = xrealloc(ords, (n + l->nr_ordinals + 1) * sizeof(*ords));
		for (m = 0; m < l->nr_ordinals; m++) {
			const struct capture_load *cl = capture_kernel_find_load(p->ck,
										 l->ordinals[m]);

			ords[n++] = l->ordinals[m];
			if (!where && cl && cl->file && cl->line > 0)
				where = xasprintf("%s:%ld", cl->file, cl->line);
		}
	}
	c.ordinals = ords;
	c.nr_ordinals = n;
	c.where = where;
	close_calls_record(ak, &c);
	free(where);
	free(ords);
}

/*
 * The close calls (docs/model.md "Close calls") of bnb's answer res on mc
 * (the problem solved: one item per site, group[] giving each entry's, or
 * per entry when group is NULL): where one keeps another form than the
 * answer's, the close items are fixed to the form they keep and bnb
 * solves mc again (res replaced). Recorded into ak when not NULL.
 * Returns 0 or bnb's error (res then released).
 */
static int l2_close_calls(const struct l2_problem *p, struct multi_choice *mc,
			  const size_t *group, const struct multi_choice_options *mopt,
			  struct multi_choice_result *res, struct analysis_kernel *ak)
{
	struct close_choice *cc = xcalloc(mc->n + 1, sizeof(*cc));
	struct l2_rank_ctx ctx = { p, group };
	double noise = l2_noise(p->lp);
	size_t i;
	int ret = 0;

	if (close_calls_choices(mc, res->form, noise, l2_rank, &ctx, cc)) {
		struct multi_choice_result again;

		for (i = 0; i < mc->n; i++)
			if (cc[i].close || cc[i].kept != cc[i].chosen)
				close_calls_fix_choice(mc, i, cc[i].kept);
		ret = multi_choice_bnb(mc, mopt, &again);
		multi_choice_result_release(res);
		if (!ret)
			*res = again;
	}
	for (i = 0; ak && !ret && i < mc->n; i++)
		if (cc[i].close)
			l2_record_close(p, group, i, &cc[i], noise, ak);
	free(cc);
	return ret;
}

/*
 * The exact choice (bnb) of the problem's forms, the plan's or (source)
 * the source plan's; the loads of one tl.load take one priority, so it is
 * solved on their sites and given to each. Close calls keep their form
 * (l2_close_calls; recorded into ak when not NULL). Returns 0 or bnb's
 * error.
 */
static int l2_solve(const struct l2_problem *p, const struct advise_options *opt, int source,
		    struct multi_choice_result *res, struct analysis_kernel *ak)
{
	struct multi_choice_options mopt;
	struct multi_choice mc;
	unsigned *ordinals = xcalloc(p->n + 1, sizeof(*ordinals));
	size_t *group = xcalloc(p->n + 1, sizeof(*group)), nr_sites, i;
	int ret;

	l2_gains(p, source, &mc);
	multi_choice_options_init(&mopt);
	mopt.time_limit_seconds = opt->time_limit_seconds;
	/* the loads of one source site take one priority (load_sites.h): solve
	 * on their sites */
	for (i = 0; i < p->n; i++)
		ordinals[i] = p->lp->loads[p->idx[i]].ordinal;
	nr_sites = load_sites_group(p->ck, ordinals, p->n, group);
	if (nr_sites < p->n) {
		struct multi_choice sites;
		struct multi_choice_result on_sites;

		load_sites_merge_choices(&mc, group, nr_sites, &sites);
		ret = multi_choice_bnb(&sites, &mopt, &on_sites);
		if (!ret)
			ret = l2_close_calls(p, &sites, group, &mopt, &on_sites, ak);
		if (!ret) {
			*res = on_sites;
			res->form = xcalloc(p->n + 1, sizeof(*res->form));
			for (i = 0; i < p->n; i++)
				res->form[i] = on_sites.form[group[i]];
			res->objective = multi_choice_value(&mc, res->form);
			multi_choice_result_release(&on_sites);
		}
		multi_choice_release(&sites);
	} else {
		ret = multi_choice_bnb(&mc, &mopt, res);
		if (!ret)
			ret = l2_close_calls(p, &mc, NULL, &mopt, res, ak);
	}
	free(ordinals);
	free(group);
	multi_choice_release(&mc);
	return ret;
}

/* The answer's entries into plan: every load of each entry (a site's
 * loads: one tl.load). A form with an L1 part (Triton's) is measured
 * whole: it replaces the L1 decision. */
static void l2_plan_set(const struct l2_problem *p, const unsigned *form, struct plan *plan)
{
	const char *mod = *p->ck->module ? p->ck->module : NULL;
	size_t i, m;

	for (i = 0; i < p->n; i++) {
		const struct capture_l2_load *l = &p->lp->loads[p->idx[i]];
		unsigned s = form[i];

		for (m = 0; s && m < l->nr_ordinals; m++) {
			unsigned ordinal = l->ordinals[m];

			if (p->act[s - 1] != LOAD_ACTION_AS_BUILT)
				plan_set(plan, mod, p->ck->name, ordinal, p->act[s - 1]);
			if (p->prio[s - 1] != L2_PRIORITY_NONE)
				plan_set_l2(plan, mod, p->ck->name, ordinal, p->prio[s - 1]);
		}
	}
}

/* The answer in the analysis' loads. */
static void l2_record(const struct l2_problem *p, const unsigned *form, struct analysis_kernel *ak)
{
	size_t i, m;

	for (i = 0; i < p->n; i++) {
		const struct capture_l2_load *l = &p->lp->loads[p->idx[i]];
		unsigned s = form[i];

		for (m = 0; s && m < l->nr_ordinals; m++) {
			struct analysis_load *al = (struct analysis_load *)
				analysis_kernel_load(ak, l->ordinals[m]);

			if (!al)
				continue;
			if (p->act[s - 1] != LOAD_ACTION_AS_BUILT)
				al->action = load_action_name(p->act[s - 1]);
			/* "default": the load's own policy removed */
			al->l2_action = p->prio[s - 1] != L2_PRIORITY_NONE ?
					l2_priority_name(p->prio[s - 1]) : "default";
			/* the entry's saving, on its first load (the rest add nothing) */
			al->l2_saved_dram_bytes = m ? 0 : p->lp->baseline_dram_bytes -
							   l->dram_bytes[s - 1];
		}
	}
}

/*
 * The L2 eviction priorities of a kernel with "l2_priority" measurements:
 * the exact choice (bnb) goes into plan beside the L1 decision, and into
 * source_plan (when not NULL) the choice among the forms each load's
 * source can write: the same answer unless a Triton call was measured in
 * a form tl.load cannot write, else solved again with those forms barred.
 */
int advise_l2_priorities(const struct capture_kernel *ck, const struct advise_options *opt,
			 struct plan *plan, struct plan *source_plan, struct analysis_kernel *ak)
{
	struct l2_problem p;
	struct multi_choice_result res, sres;
	int ret = l2_problem_init(&p, ck);

	if (ret)
		goto out;
	/* nothing measured (the pass did not run, or measured no load): no
	 * decision was made, and none is reported as if it had been */
	if (!p.lp->nr_loads)
		ak->l2_note = "no load was measured with an L2 priority";
	else
		ak->l2_method = "bnb";
	ak->l2_saved_dram_bytes = 0;
	if (!p.n) {
		if (p.lp->nr_loads)
			ak->l2_note = "no load measured with an L2 priority can take one";
		goto out;
	}
	ret = l2_solve(&p, opt, 0, &res, ak);
	if (ret) {
		error_prefix(ret, "kernel '%s' (module %s): the L2 priorities", ck->name, ck->module);
		goto out;
	}
	ak->l2_optimal = res.optimal;
	ak->l2_saved_dram_bytes = res.objective;
	l2_plan_set(&p, res.form, plan);
	l2_record(&p, res.form, ak);
	if (res.objective <= 0)
		ak->l2_note = "no L2 priority saves DRAM traffic beyond the noise";
	if (source_plan && l2_source_restricts(&p)) {
		ret = l2_solve(&p, opt, 1, &sres, NULL);
		if (!ret) {
			l2_plan_set(&p, sres.form, source_plan);
			ak->source_l2_saved_dram_bytes = sres.objective;
			multi_choice_result_release(&sres);
		} else {
			error_prefix(ret, "kernel '%s' (module %s): the source plan's L2 "
				     "priorities", ck->name, ck->module);
		}
	} else if (source_plan) {
		l2_plan_set(&p, res.form, source_plan);
		ak->source_l2_saved_dram_bytes = res.objective;
	}
	multi_choice_result_release(&res);
out:
	l2_problem_release(&p);
	return ret;
}

