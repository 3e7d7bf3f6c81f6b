/*
 * From capture.json to advice: per kernel, the traffic reduction graph of
 * its measured loads (sector or classic model, docs/model.md), every solver
 * that applies, and the chosen plan with the numbers behind each decision
 * (docs/analysis-json.md).
 */
#include "analysis/advise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "analysis/capture_model.h"
#include "analysis/graph.h"
#include "analysis/load_sites.h"
#include "analysis/multi_choice.h"
#include "analysis/plan_query.h"
#include "analysis/ptx.h"
#include "analysis/solver.h"
#include "base/xalloc.h"

#define ANALYSIS_SCHEMA "cacheadvise.analysis/1"

void advise_options_init(struct advise_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->model = ADVISE_MODEL_SECTOR;
	opt->method = "bnb";
	opt->exhaustive_max_n = 20;
	opt->ilp_max_n = 40;
	opt->time_limit_seconds = 60;
}

/* The device geometry the models need, from capture.device. */
struct geometry {
	double sector_bytes;        /* s */
	double line_bytes;          /* B, the classic model's L1 block */
};

/* One load of a kernel as the capture gives it. */
struct load_in {
	unsigned ordinal;
	int node;                   /* index in the graph, -1 when left out */
	const char *left_out;       /* why it is not a node (static) */
	double hit, access;         /* NAN when not measured */
	int has_operator;           /* already carries a cache operator / L1 eviction */
	char *operator_name;        /* that qualifier, for the reason text (owned) */
};

struct kernel_in {
	const struct capture_kernel *ck;
	const char *module, *name;
	struct load_in *loads;
	size_t nr_loads;
	struct graph g;
	size_t pairs_missing;
};

/* The capture's device model (its defaults where the capture has none:
 * 32-byte sectors, 128-byte lines). The reader checked the sizes. */
static void get_geometry(const struct capture *cap, struct geometry *geo)
{
	geo->sector_bytes = cap->device.sector_bytes ? cap->device.sector_bytes : 32;
	geo->line_bytes = cap->device.l1_line_bytes ? cap->device.l1_line_bytes : 128;
}

/*
 * Whether the load already has an L1 cache operator or eviction priority:
 * from "cache_op" / "l1_eviction" when the capture has them, else from the
 * qualifiers of "instruction".
 */
static int load_operator(const struct capture_load *load, char **name)
{
	const char *op = load->cache_op, *ev = load->l1_eviction, *ins = load->instruction;
	static const char *const ops[] = { "ca", "cg", "cs", "lu", "cv" };

	*name = NULL;
	if (op || ev) {
		if (op && strcmp(op, "default") && strcmp(op, "none"))
			*name = xasprintf(".%s", op);
		else if (ev && strcmp(ev, "default") && strcmp(ev, "none"))
			*name = xasprintf(".%s", ev);
		return *name != NULL;
	}
	while (ins && (ins = strchr(ins, '.'))) {
		size_t len = strcspn(++ins, ".");
		size_t i;

		for (i = 0; i < ARRAY_SIZE(ops); i++)
			if (len == strlen(ops[i]) && !strncmp(ins, ops[i], len))
				*name = xasprintf(".%s", ops[i]);
		if (!*name && !strncmp(ins, "L1::", 4))
			*name = xasprintf(".%.*s", (int)len, ins);
		if (*name)
			return 1;
	}
	return 0;
}

static void kernel_release(struct kernel_in *k)
{
	size_t i;

	for (i = 0; i < k->nr_loads; i++)
		free(k->loads[i].operator_name);
	free(k->loads);
	graph_release(&k->g);
}

static struct load_in *find_load(struct kernel_in *k, unsigned ordinal)
{
	size_t i;

	for (i = 0; i < k->nr_loads; i++)
		if (k->loads[i].ordinal == ordinal)
			return &k->loads[i];
	return NULL;
}

static void read_loads(struct kernel_in *k)
{
	size_t i;

	k->loads = xcalloc(k->ck->nr_loads + 1, sizeof(*k->loads));
	for (i = 0; i < k->ck->nr_loads; i++) {
		const struct capture_load *cl = &k->ck->loads[i];
		struct load_in *l = &k->loads[k->nr_loads++];

		l->ordinal = cl->ordinal;
		l->node = -1;
		l->hit = cl->hit;
		l->access = cl->access;
		l->has_operator = load_operator(cl, &l->operator_name);
		if (cl->patchable == 0)
			l->left_out = "not patchable";
		else if (cl->measured == 0 || isnan(l->hit))
			l->left_out = "not measured";
	}
}

static int classic_weight(const struct kernel_in *k, const struct load_in *l,
			  const struct geometry *geo, double e_on, double e_off, double *w)
{
	double t_on, t_off;

	if (isnan(l->access))
		return error_set(CA_E_INPUT,
				 "kernel '%s' (module %s): the classic model needs \"access\" of load %u "
				 "(counted by the monitor run), which the capture lacks: use the "
				 "sector model", k->name, k->module, l->ordinal);
	t_on = (l->access - l->hit) * geo->line_bytes;
	t_off = l->access * geo->line_bytes * e_on / e_off;
	*w = t_off - t_on;
	return 0;
}

static int read_efficiency(const struct kernel_in *k, double *e_on, double *e_off)
{
	if (!(k->ck->efficiency_on > 0) || !(k->ck->efficiency_off > 0))
		return error_set(CA_E_INPUT,
				 "kernel '%s' (module %s): the classic model needs the load "
				 "efficiency E_on/E_off (\"efficiency\": {\"on\", \"off\"} from the "
				 "monitor run), which the capture lacks: use the sector model",
				 k->name, k->module);
	*e_on = k->ck->efficiency_on;
	*e_off = k->ck->efficiency_off;
	return 0;
}

/*
 * A load the monitor counted no access of, with no hits: it never ran in the
 * launches measured. Its pairs differ from its partner's hits by counter
 * noise alone (decode_iter: +-0.003% of load 4's hits, of either sign from
 * one capture to the next), which would decide its form at random.
 */
static int never_ran(const struct load_in *l)
{
	return !isnan(l->access) && l->access == 0 && l->hit == 0;
}

static int build_graph(struct kernel_in *k, enum advise_model model, const struct geometry *geo)
{
	double e_on = 1, e_off = 1, unit;
	unsigned char *seen;
	size_t i, n, listed_null = 0, u, v;
	int ret = 0;

	if (model == ADVISE_MODEL_CLASSIC) {
		size_t nodes = 0;

		for (i = 0; i < k->nr_loads; i++)
			nodes += !k->loads[i].left_out;
		if (nodes && (ret = read_efficiency(k, &e_on, &e_off)))
			return ret;
	}
	unit = model == ADVISE_MODEL_CLASSIC ? geo->line_bytes : geo->sector_bytes;
	for (i = 0; i < k->nr_loads; i++) {
		struct load_in *l = &k->loads[i];
		char id[32];
		double w = 0;

		if (l->left_out)
			continue;
		if (model == ADVISE_MODEL_CLASSIC) {
			if ((ret = classic_weight(k, l, geo, e_on, e_off, &w)))
				return ret;
		} else {
			w = geo->sector_bytes * l->hit;
		}
		snprintf(id, sizeof(id), "ld%u", l->ordinal);
		l->node = (int)graph_add_node(&k->g, id, w);
	}
	/* the reader resolved every pair to two loads of the kernel, once each */
	n = k->g.n;
	seen = xcalloc(n * n + 1, 1);
	for (i = 0; i < k->ck->nr_pairs; i++) {
		const struct capture_pair *p = &k->ck->pairs[i];
		struct load_in *a = find_load(k, p->i), *b = find_load(k, p->j);

		if (!a || !b || a->node < 0 || b->node < 0)
			continue;
		seen[(size_t)a->node * n + (size_t)b->node] = 1;
		seen[(size_t)b->node * n + (size_t)a->node] = 1;
		if (never_ran(a) || never_ran(b))
			continue;
		if (isnan(p->hit)) {
			listed_null++;
			continue;
		}
		graph_set_edge(&k->g, (size_t)a->node, (size_t)b->node,
			       unit * (p->hit - a->hit - b->hit));
	}
	for (u = 0; u < n; u++)
		for (v = u + 1; v < n; v++)
			k->pairs_missing += !seen[u * n + v];
	k->pairs_missing += listed_null;
	free(seen);
	return 0;
}

/* A node whose weight and every edge are 0: nothing to gain either way. */
static int is_tie(const struct graph *g, size_t v)
{
	size_t u;

	if (g->nodes[v].weight != 0)
		return 0;
	for (u = 0; u < g->n; u++)
		if (graph_edge(g, v, u) != 0)
			return 0;
	return 1;
}

static void decide_loads(struct kernel_in *k, const struct solver_result *chosen,
			 struct plan *plan, struct analysis_kernel *ak)
{
	const struct graph *g = &k->g;
	size_t i;

	ak->loads = xcalloc(k->nr_loads + 1, sizeof(*ak->loads));
	ak->left_out = xcalloc(k->nr_loads + 1, sizeof(*ak->left_out));
	for (i = 0; i < k->nr_loads; i++) {
		struct load_in *l = &k->loads[i];
		struct analysis_load *al;
		const char *decision, *action = NULL;
		char *reason = NULL;
		double saved = 0;
		size_t v, u;

		if (l->left_out) {
			ak->left_out[ak->nr_left_out].ordinal = l->ordinal;
			ak->left_out[ak->nr_left_out++].reason = l->left_out;
			continue;
		}
		v = (size_t)l->node;
		if (never_ran(l)) {
			decision = "keep";
			reason = xstrdup("never ran in the launches measured (no accesses): keeps "
					 "its current form");
		} else if (is_tie(g, v)) {
			decision = "keep";
			reason = xstrdup("weight 0 and no reuse or conflict with other loads: "
					 "keeps its current form");
		} else if (chosen->cached[v]) {
			decision = "cache";
			saved = g->nodes[v].weight;
			for (u = 0; u < g->n; u++)
				if (u != v && chosen->cached[u])
					saved += graph_edge(g, v, u) / 2;
			if (l->has_operator) {
				reason = xasprintf("cached: keeps its %s", l->operator_name);
			} else {
				action = "default";
				plan_set(plan, *k->module ? k->module : NULL, k->name, l->ordinal,
					 LOAD_ACTION_DEFAULT);
			}
		} else {
			decision = "bypass";
			action = "L1::no_allocate";
			plan_set(plan, *k->module ? k->module : NULL, k->name, l->ordinal,
				 LOAD_ACTION_NO_ALLOCATE);
		}
		al = &ak->loads[ak->nr_loads++];
		al->ordinal = l->ordinal;
		al->node = xstrdup(g->nodes[v].id);
		al->decision = decision;
		al->action = action;
		al->reason = reason;
		al->hit = l->hit;
		al->access = l->access;
		al->hit_rate = !isnan(l->access) && l->access > 0 ? l->hit / l->access : NAN;
		al->weight_bytes = g->nodes[v].weight;
		al->traffic_saved_bytes = saved;
	}
}

/*
 * The L2 eviction priorities of a kernel with "l2_priority" measurements
 * (issue 26, docs/model.md "Several forms per load"): every load measured
 * takes as built (form 0) or one of the priorities; u_i(s) is the DRAM
 * bytes load i in form s saved alone, p_ij(s, t) what a measured pair saved
 * beyond its two singles; a gain within the baseline's noise counts 0. The
 * exact choice (bnb, cross-checked by exhaustive search on small kernels)
 * goes into the plan beside the L1 decision.
 */
static int decide_l2(const struct capture_kernel *ck, const struct advise_options *opt,
		     struct plan *plan, struct analysis_kernel *ak)
{
	const struct capture_l2_priority *lp = ck->l2_priority;
	struct multi_choice_options mopt;
	struct multi_choice mc;
	struct multi_choice_result res;
	enum l2_priority *prio;
	enum load_action *act;
	unsigned *forms, *ordinals;
	size_t *idx, *group, nr_sites, n = 0, i, f;
	double noise = isnan(lp->noise_dram_bytes) ? 0 : lp->noise_dram_bytes;
	int ret;

	prio = xcalloc(lp->nr_forms + 1, sizeof(*prio));
	act = xcalloc(lp->nr_forms + 1, sizeof(*act));
	for (f = 0; f < lp->nr_forms; f++) {
		/* an L2 priority, an L1 form with one (Triton's eviction_policy),
		 * or "default": a Triton load without one (its policy removed) */
		if (load_form_parse(lp->forms[f], &act[f], &prio[f]) ||
		    !load_form_is_l2_choice(act[f], prio[f])) {
			free(prio);
			free(act);
			return error_set(CA_E_INPUT, "kernel '%s': l2_priority.forms[%zu] '%s' is "
					 "not an L2 priority", ck->name, f, lp->forms[f]);
		}
	}
	/* the entries a priority can be given: every load of them patchable,
	 * and none with a bare L2 eviction qualifier of its own. A cache hint
	 * of their own (Triton's eviction_policy) is what they are "as built":
	 * a measured priority that does better replaces its policy
	 * (ptx_load_l2_refused) */
	idx = xcalloc(lp->nr_loads + 1, sizeof(*idx));
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
			idx[n++] = i;
	}
	/* nothing measured (the pass did not run, or measured no load): no
	 * decision was made, and none is reported as if it had been */
	if (!lp->nr_loads)
		ak->l2_note = "no load was measured with an L2 priority";
	else
		ak->l2_method = "bnb";
	ak->l2_saved_dram_bytes = 0;
	if (!n) {
		if (lp->nr_loads)
			ak->l2_note = "no load measured with an L2 priority can take one";
		free(idx);
		free(prio);
		free(act);
		return 0;
	}
	forms = xcalloc(n + 1, sizeof(*forms));
	for (i = 0; i < n; i++)
		forms[i] = (unsigned)lp->nr_forms + 1;
	multi_choice_init(&mc, n, forms);
	for (i = 0; i < n; i++) {
		const struct capture_l2_load *l = &lp->loads[idx[i]];

		for (f = 0; f < lp->nr_forms; f++) {
			double g = lp->baseline_dram_bytes - l->dram_bytes[f];

			/* not measured: never chosen; within the noise: no gain */
			if (isnan(g))
				g = -1e30;
			else if (fabs(g) <= noise)
				g = 0;
			multi_choice_set_unary(&mc, i, (unsigned)f + 1, g);
		}
	}
	for (i = 0; i < lp->nr_pairs; i++) {
		const struct capture_l2_pair *p = &lp->pairs[i];
		size_t a, b;
		double ga, gb, g;

		for (a = 0; a < n && lp->loads[idx[a]].ordinal != p->i; a++)
			;
		for (b = 0; b < n && lp->loads[idx[b]].ordinal != p->j; b++)
			;
		if (a == n || b == n)
			continue;
		ga = lp->baseline_dram_bytes - lp->loads[idx[a]].dram_bytes[p->form_i];
		gb = lp->baseline_dram_bytes - lp->loads[idx[b]].dram_bytes[p->form_j];
		g = lp->baseline_dram_bytes - p->dram_bytes - ga - gb;
		if (isnan(g) || fabs(g) <= noise)
			continue;
		multi_choice_set_pair(&mc, a, p->form_i + 1, b, p->form_j + 1, g);
	}
	multi_choice_options_init(&mopt);
	mopt.time_limit_seconds = opt->time_limit_seconds;
	/* the loads of one source site take one priority (load_sites.h): solve
	 * on their sites */
	ordinals = xcalloc(n + 1, sizeof(*ordinals));
	group = xcalloc(n + 1, sizeof(*group));
	for (i = 0; i < n; i++)
		ordinals[i] = lp->loads[idx[i]].ordinal;
	nr_sites = load_sites_group(ck, ordinals, n, group);
	if (nr_sites < n) {
		struct multi_choice sites;
		struct multi_choice_result on_sites;

		load_sites_merge_choices(&mc, group, nr_sites, &sites);
		ret = multi_choice_bnb(&sites, &mopt, &on_sites);
		if (!ret) {
			res = on_sites;
			res.form = xcalloc(n + 1, sizeof(*res.form));
			for (i = 0; i < n; i++)
				res.form[i] = on_sites.form[group[i]];
			res.objective = multi_choice_value(&mc, res.form);
			multi_choice_result_release(&on_sites);
		}
		multi_choice_release(&sites);
	} else {
		ret = multi_choice_bnb(&mc, &mopt, &res);
	}
	free(ordinals);
	free(group);
	if (!ret) {
		ak->l2_optimal = res.optimal;
		ak->l2_saved_dram_bytes = res.objective;
		for (i = 0; i < n; i++) {
			const struct capture_l2_load *l = &lp->loads[idx[i]];
			unsigned s = res.form[i];
			size_t m;

			if (!s)
				continue;
			/* every load of the entry (a site's loads, measured as one) */
			for (m = 0; m < l->nr_ordinals; m++) {
				struct analysis_load *al = (struct analysis_load *)
					analysis_kernel_load(ak, l->ordinals[m]);
				const char *mod = *ck->module ? ck->module : NULL;

				/* a form with an L1 part (Triton's) is measured whole: it
				 * replaces the L1 decision */
				if (act[s - 1] != LOAD_ACTION_AS_BUILT)
					plan_set(plan, mod, ck->name, l->ordinals[m], act[s - 1]);
				if (prio[s - 1] != L2_PRIORITY_NONE)
					plan_set_l2(plan, mod, ck->name, l->ordinals[m], prio[s - 1]);
				if (!al)
					continue;
				if (act[s - 1] != LOAD_ACTION_AS_BUILT)
					al->action = load_action_name(act[s - 1]);
				/* "default": the load's own policy removed */
				al->l2_action = prio[s - 1] != L2_PRIORITY_NONE ?
						l2_priority_name(prio[s - 1]) : "default";
				/* the entry's saving, on its first load (the rest add nothing) */
				al->l2_saved_dram_bytes = m ? 0 : lp->baseline_dram_bytes -
								   l->dram_bytes[s - 1];
			}
		}
		if (res.objective <= 0)
			ak->l2_note = "no L2 priority saves DRAM traffic beyond the noise";
		multi_choice_result_release(&res);
	} else {
		error_prefix(ret, "kernel '%s' (module %s): the L2 priorities", ck->name, ck->module);
	}
	multi_choice_release(&mc);
	free(forms);
	free(idx);
	free(prio);
	free(act);
	return ret;
}

/* The sites of the graph's nodes (load_sites_group): group[v] per node. */
static size_t node_sites(const struct kernel_in *k, size_t *group)
{
	unsigned *ordinals = xcalloc(k->g.n + 1, sizeof(*ordinals));
	size_t i, nr;

	for (i = 0; i < k->nr_loads; i++)
		if (k->loads[i].node >= 0)
			ordinals[k->loads[i].node] = k->loads[i].ordinal;
	nr = load_sites_group(k->ck, ordinals, k->g.n, group);
	free(ordinals);
	return nr;
}

/* A result on the sites' graph given to every load of each site. */
static void expand_result(const struct graph *g, const size_t *group, struct solver_result *res)
{
	unsigned char *cached = xcalloc(g->n + 1, 1);
	size_t v;

	for (v = 0; v < g->n; v++)
		cached[v] = res->cached[group[v]];
	free(res->cached);
	res->cached = cached;
	res->objective = graph_objective(g, cached);
}

/* Why a load beyond --max-loads takes its site's decision. */
static const char *follows_site_reason(const struct capture_load *l)
{
	return load_sites_is_python(l->file) ?
	       "not measured: takes its call's decision (a tl.load carries one form)" :
	       "not measured: takes its expression's decision (an expression carries one "
	       "form)";
}

/*
 * A source site's loads beyond --max-loads (not measured) take the
 * decision its measured loads got: the site, a Triton call or a CUDA
 * expression, can carry only one form (load_sites.h), and a site half
 * rewritten is no source the user can write. Their left_out reason says so.
 */
static void follow_sites(struct kernel_in *k, struct plan *plan, struct analysis_kernel *ak)
{
	const struct capture_kernel *ck = k->ck;
	const char *mod = *k->module ? k->module : NULL;
	unsigned *ords = xcalloc(ck->nr_loads + 1, sizeof(*ords));
	size_t *group = xcalloc(ck->nr_loads + 1, sizeof(*group)), i, j, o;

	for (i = 0; i < ck->nr_loads; i++)
		ords[i] = ck->loads[i].ordinal;
	if (load_sites_group(ck, ords, ck->nr_loads, group) < ck->nr_loads) {
		for (o = 0; o < ak->nr_left_out; o++) {
			struct analysis_left_out *lo = &ak->left_out[o];

			if (strcmp(lo->reason, "not measured"))
				continue;
			for (i = 0; i < ck->nr_loads && ords[i] != lo->ordinal; i++)
				;
			for (j = 0; i < ck->nr_loads && j < ck->nr_loads; j++) {
				const struct load_in *n = find_load(k, ords[j]);
				int a, l2;

				if (j == i || group[j] != group[i] || !n || n->node < 0)
					continue;
				a = plan_action(plan, mod ? mod : "", k->name, n->ordinal);
				l2 = plan_l2(plan, mod ? mod : "", k->name, n->ordinal);
				if (a >= 0 && a != LOAD_ACTION_AS_BUILT)
					plan_set(plan, mod, k->name, lo->ordinal, (enum load_action)a);
				if (l2 > 0)
					plan_set_l2(plan, mod, k->name, lo->ordinal, (enum l2_priority)l2);
				lo->reason = follows_site_reason(&ck->loads[i]);
				break;
			}
		}
	}
	free(group);
	free(ords);
}

static int advise_kernel(const struct capture_kernel *ck, const struct advise_options *opt,
			 const struct geometry *geo, struct plan *plan, struct analysis_kernel *ak)
{
	struct kernel_in k;
	struct solver_options sopt;
	struct graph sites;
	const struct graph *solved;
	size_t i, nr_sites, *group = NULL;
	int ret;

	memset(&k, 0, sizeof(k));
	graph_init(&k.g);
	k.ck = ck;
	k.name = ck->name;
	k.module = ck->module;
	ak->module = xstrdup(ck->module ? ck->module : "");
	ak->name = xstrdup(ck->name);
	graph_init(&ak->g);
	read_loads(&k);
	if ((ret = build_graph(&k, opt->model, geo)))
		goto out;

	solver_options_init(&sopt);
	sopt.time_limit_seconds = opt->time_limit_seconds;
	sopt.exhaustive_max_n = opt->exhaustive_max_n;
	/* the loads of one source site are one decision: solve on their sites */
	group = xcalloc(k.g.n + 1, sizeof(*group));
	nr_sites = node_sites(&k, group);
	graph_init(&sites);
	if (nr_sites < k.g.n) {
		load_sites_merge_graph(&k.g, group, nr_sites, &sites);
		ak->site_loads = k.g.n;
		ak->sites = nr_sites;
	}
	solved = nr_sites < k.g.n ? &sites : &k.g;
	for (i = 0; solver_table[i]; i++)
		;
	ak->solutions = xcalloc(i + 1, sizeof(*ak->solutions));
	for (i = 0; solver_table[i]; i++) {
		const struct solver *s = solver_table[i];

		if (!strcmp(s->name, "exhaustive") && solved->n > opt->exhaustive_max_n)
			continue;
		/* a cross-check where GLPK proves quickly, unless it decides */
		if (!strcmp(s->name, "ilp") && solved->n > opt->ilp_max_n &&
		    strcmp(opt->method, "ilp"))
			continue;
		ret = s->solve(solved, &sopt, &ak->solutions[ak->nr_solutions]);
		if (ret) {
			error_prefix(ret, "kernel '%s' (module %s): %s", k.name, k.module, s->name);
			goto out;
		}
		if (solved != &k.g)
			expand_result(&k.g, group, &ak->solutions[ak->nr_solutions]);
		if (!strcmp(s->name, opt->method))
			ak->chosen = &ak->solutions[ak->nr_solutions];
		ak->nr_solutions++;
	}
	if (!ak->chosen) {
		/* exhaustive asked for on a kernel too large for it */
		for (i = 0; i < ak->nr_solutions; i++)
			if (!strcmp(ak->solutions[i].method, "bnb"))
				ak->chosen = &ak->solutions[i];
		ak->note = "too many loads for exhaustive search: the branch and bound's answer "
			   "is used";
	}
	decide_loads(&k, ak->chosen, plan, ak);
	ak->pairs_missing = k.pairs_missing;
	if (ck->l2_priority && (ret = decide_l2(ck, opt, plan, ak)))
		goto out;
	follow_sites(&k, plan, ak);
	/* the graph moves to the analysis */
	ak->g = k.g;
	graph_init(&k.g);
out:
	if (group)
		graph_release(&sites);
	free(group);
	kernel_release(&k);
	return ret;
}

static void analysis_kernel_release(struct analysis_kernel *k)
{
	size_t i;

	for (i = 0; i < k->nr_solutions; i++)
		solver_result_release(&k->solutions[i]);
	free(k->solutions);
	for (i = 0; i < k->nr_loads; i++) {
		free(k->loads[i].node);
		free(k->loads[i].reason);
	}
	free(k->loads);
	free(k->left_out);
	graph_release(&k->g);
	free(k->module);
	free(k->name);
}

void analysis_init(struct analysis *a)
{
	memset(a, 0, sizeof(*a));
}

void analysis_release(struct analysis *a)
{
	size_t i;

	for (i = 0; i < a->nr_kernels; i++)
		analysis_kernel_release(&a->kernels[i]);
	free(a->kernels);
	analysis_init(a);
}

/* How often advise_capture() ran in this process (tests check "once"). */
static unsigned long advise_capture_calls;

unsigned long advise_capture_count(void)
{
	return advise_capture_calls;
}

int advise_capture(const struct capture *cap, const struct advise_options *opt,
		   struct plan *plan, struct analysis *out)
{
	struct geometry geo;
	size_t i;
	int ret;

	advise_capture_calls++;
	analysis_init(out);
	if (!solver_find(opt->method))
		return error_set(CA_E_USAGE, "unknown solver method '%s': use bnb, ilp, heuristic "
				 "or exhaustive", opt->method);
	get_geometry(cap, &geo);
	out->model = opt->model;
	out->method = solver_find(opt->method)->name;
	out->sector_bytes = geo.sector_bytes;
	out->line_bytes = geo.line_bytes;
	out->kernels = xcalloc(cap->nr_kernels + 1, sizeof(*out->kernels));
	for (i = 0; i < cap->nr_kernels; i++) {
		ret = advise_kernel(&cap->kernels[i], opt, &geo, plan, &out->kernels[i]);
		out->nr_kernels++;
		if (ret) {
			analysis_release(out);
			return ret;
		}
	}
	return 0;
}

const struct analysis_kernel *analysis_find_kernel(const struct analysis *a, const char *module,
						   const char *name)
{
	size_t i;

	for (i = 0; a && i < a->nr_kernels; i++) {
		const struct analysis_kernel *k = &a->kernels[i];

		if (!strcmp(k->name, name) && (!module || !strcmp(k->module, module)))
			return k;
	}
	return NULL;
}

const struct analysis_load *analysis_kernel_load(const struct analysis_kernel *k,
						 unsigned ordinal)
{
	size_t i;

	for (i = 0; k && i < k->nr_loads; i++)
		if (k->loads[i].ordinal == ordinal)
			return &k->loads[i];
	return NULL;
}

const char *analysis_left_out_reason(const struct analysis_kernel *k, unsigned ordinal)
{
	size_t i;

	for (i = 0; k && i < k->nr_left_out; i++)
		if (k->left_out[i].ordinal == ordinal)
			return k->left_out[i].reason;
	return NULL;
}

/* ---- the JSON form (docs/analysis-json.md) ------------------------------ */

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : graph_weight_json(v);
}

static json_t *kernel_to_json(const struct analysis_kernel *k)
{
	json_t *ko = json_object(), *solutions = json_array(), *loads = json_array();
	json_t *left_out = json_array();
	size_t i;

	for (i = 0; i < k->nr_solutions; i++)
		json_array_append_new(solutions, solver_result_to_json(&k->g, &k->solutions[i]));
	for (i = 0; i < k->nr_loads; i++) {
		const struct analysis_load *l = &k->loads[i];
		json_t *jl = json_object();

		json_object_set_new(jl, "ordinal", json_integer(l->ordinal));
		json_object_set_new(jl, "node", json_string(l->node));
		json_object_set_new(jl, "decision", json_string(l->decision));
		json_object_set_new(jl, "action", l->action ? json_string(l->action) : json_null());
		if (l->reason)
			json_object_set_new(jl, "reason", json_string(l->reason));
		json_object_set_new(jl, "hit", num_or_null(l->hit));
		json_object_set_new(jl, "access", num_or_null(l->access));
		json_object_set_new(jl, "hit_rate", isnan(l->hit_rate) ? json_null() :
				    json_real(l->hit_rate));
		json_object_set_new(jl, "weight_bytes", graph_weight_json(l->weight_bytes));
		json_object_set_new(jl, "traffic_saved_bytes",
				    graph_weight_json(l->traffic_saved_bytes));
		if (k->l2_method) {
			json_object_set_new(jl, "l2_action", l->l2_action ? json_string(l->l2_action) :
					    json_null());
			json_object_set_new(jl, "l2_saved_dram_bytes",
					    num_or_null(l->l2_action ? l->l2_saved_dram_bytes : NAN));
		}
		json_array_append_new(loads, jl);
	}
	for (i = 0; i < k->nr_left_out; i++)
		json_array_append_new(left_out, json_pack("{s:i, s:s}", "ordinal",
							  (json_int_t)k->left_out[i].ordinal,
							  "reason", k->left_out[i].reason));
	json_object_set_new(ko, "module", json_string(k->module));
	json_object_set_new(ko, "name", json_string(k->name));
	json_object_set_new(ko, "graph", graph_to_json(&k->g));
	json_object_set_new(ko, "solutions", solutions);
	json_object_set_new(ko, "chosen", json_string(k->chosen->method));
	if (k->note)
		json_object_set_new(ko, "note", json_string(k->note));
	json_object_set_new(ko, "optimal", json_boolean(k->chosen->optimal));
	json_object_set_new(ko, "loads", loads);
	json_object_set_new(ko, "left_out", left_out);
	json_object_set_new(ko, "pairs_missing", json_integer((json_int_t)k->pairs_missing));
	if (k->sites)
		json_object_set_new(ko, "sites", json_pack("{s:I, s:I}", "loads",
			(json_int_t)k->site_loads, "calls", (json_int_t)k->sites));
	json_object_set_new(ko, "expected_l2_traffic_saved_bytes",
			    graph_weight_json(k->chosen->objective));
	if (k->l2_method || k->l2_note)
		json_object_set_new(ko, "l2_priority", json_pack("{s:s?, s:b, s:o, s:s?}", "method",
			k->l2_method, "optimal", k->l2_optimal, "expected_dram_bytes_saved",
			graph_weight_json(k->l2_saved_dram_bytes), "note", k->l2_note));
	return ko;
}

json_t *analysis_to_json(const struct analysis *a)
{
	json_t *doc = json_object(), *kernels = json_array();
	size_t i;

	for (i = 0; i < a->nr_kernels; i++)
		json_array_append_new(kernels, kernel_to_json(&a->kernels[i]));
	json_object_set_new(doc, "schema", json_string(ANALYSIS_SCHEMA));
	json_object_set_new(doc, "model", json_string(a->model == ADVISE_MODEL_CLASSIC ?
						      "classic" : "sector"));
	json_object_set_new(doc, "method", json_string(a->method ? a->method : ""));
	json_object_set_new(doc, "sector_bytes", graph_weight_json(a->sector_bytes));
	json_object_set_new(doc, "l1_line_bytes", graph_weight_json(a->line_bytes));
	json_object_set_new(doc, "kernels", kernels);
	return doc;
}
