/*
 * From capture.json to advice: per kernel, the traffic reduction graph of
 * its measured loads (sector or classic model, docs/model.md), every solver
 * that applies, and the chosen plan with the numbers behind each decision
 * (docs/analysis-json.md).
 */
#include "analysis/advise.h"
#include "analysis/advise_l2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "analysis/capture_model.h"
#include "analysis/close_calls.h"
#include "analysis/graph.h"
#include "analysis/load_sites.h"
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
	double counter_spread;      /* the baseline's L1 counter noise, a fraction; NAN unknown */
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
	/* the kernel's L1 hits with every measured load bypassing (its
	 * all_bypassed counters; 0 without): the hits of the loads that
	 * allocate in every variant, which each hit_i and hit_ij include */
	double base_hits;
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
	geo->counter_spread = cap->has_baseline_check ?
			      cap->baseline_check.max_counter_spread : NAN;
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
	const struct capture_counters *none = capture_kernel_counters(k->ck, "all_bypassed");
	size_t i;

	k->base_hits = none && isfinite(none->l1_hits) && none->l1_hits > 0 ? none->l1_hits : 0;
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
	t_on = (l->access - (l->hit - k->base_hits)) * geo->line_bytes;
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
			w = geo->sector_bytes * (l->hit - k->base_hits);
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
			       unit * (p->hit - a->hit - b->hit + k->base_hits));
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

/*
 * The L1 entry a node's load gets in a plan whose L1 answer is cached[]:
 * "L1::no_allocate" when bypassed, "default" when cached without a
 * qualifier of its own; -1 for none (a load that never ran or is a tie
 * keeps its current form, as does a cached load with a qualifier).
 */
static int l1_entry(const struct kernel_in *k, const struct load_in *l,
		    const unsigned char *cached)
{
	size_t v = (size_t)l->node;

	if (never_ran(l) || is_tie(&k->g, v))
		return -1;
	if (!cached[v])
		return LOAD_ACTION_NO_ALLOCATE;
	return l->has_operator ? -1 : LOAD_ACTION_DEFAULT;
}

/* The L1 entries of an answer, into plan. */
static void l1_plan_set(const struct kernel_in *k, const unsigned char *cached, struct plan *plan)
{
	size_t i;

	for (i = 0; i < k->nr_loads; i++) {
		const struct load_in *l = &k->loads[i];
		int a = l->left_out ? -1 : l1_entry(k, l, cached);

		if (a >= 0)
			plan_set(plan, *k->module ? k->module : NULL, k->name, l->ordinal,
				 (enum load_action)a);
	}
}

/*
 * Load v's share of the plan's objective: its site's weight and half of
 * each edge to another cached site, on the solved graph (the sites', group
 * giving each load's, or the loads' own when group is NULL), shared among
 * the site's loads by their weights (equally where those do not sum to
 * more than 0).
 */
static double saved_share(const struct graph *g, const struct graph *solved, const size_t *group,
			  const unsigned char *cached, size_t v)
{
	size_t site = group ? group[v] : v, u, members = 0;
	double saved = solved->nodes[site].weight, sum = 0;

	for (u = 0; u < solved->n; u++)
		if (u != site && cached[u])
			saved += graph_edge(solved, site, u) / 2;
	if (!group)
		return saved;
	for (u = 0; u < g->n; u++)
		if (group[u] == site) {
			members++;
			sum += g->nodes[u].weight;
		}
	return sum > 0 ? saved * g->nodes[v].weight / sum : saved / (double)members;
}

static void decide_loads(struct kernel_in *k, const struct solver_result *chosen,
			 const struct graph *solved, const size_t *group, struct plan *plan,
			 struct analysis_kernel *ak)
{
	const struct graph *g = &k->g;
	unsigned char *site_cached = xcalloc(solved->n + 1, 1);
	size_t i;

	for (i = 0; i < g->n; i++)
		site_cached[group ? group[i] : i] |= chosen->cached[i];

	ak->loads = xcalloc(k->nr_loads + 1, sizeof(*ak->loads));
	ak->left_out = xcalloc(k->nr_loads + 1, sizeof(*ak->left_out));
	for (i = 0; i < k->nr_loads; i++) {
		struct load_in *l = &k->loads[i];
		struct analysis_load *al;
		const char *decision, *action = NULL;
		char *reason = NULL;
		double saved = 0;
		size_t v;

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
			saved = saved_share(g, solved, group, site_cached, v);
			if (l->has_operator)
				reason = xasprintf("cached: keeps its %s", l->operator_name);
			else
				action = "default";
		} else {
			decision = "bypass";
			action = "L1::no_allocate";
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
	free(site_cached);
	l1_plan_set(k, chosen->cached, plan);
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

/* A result on the sites' graph given to every load of each site (its
 * objective stays the sites' graph's: load_sites_merge_graph counts the
 * hits a site's copies share once, the per-load graph once per pair). */
static void expand_result(const struct graph *g, const size_t *group, struct solver_result *res)
{
	unsigned char *cached = xcalloc(g->n + 1, 1);
	size_t v;

	for (v = 0; v < g->n; v++)
		cached[v] = res->cached[group[v]];
	free(res->cached);
	res->cached = cached;
}

/* Why a load beyond --max-loads takes its site's decision. */
static const char *follows_site_reason(const struct capture_load *l)
{
	return load_sites_is_python(l->file) ?
	       "not measured: takes its call's decision (a tl.load carries one form)" :
	       "not measured: takes its expression's decision (an expression carries one "
	       "form)";
}

/* Whether a measured load keeps its form for want of a decision: it
 * never ran in the launches measured, or it is a tie. */
static int keeps_form(const struct kernel_in *k, const struct load_in *l)
{
	return l->node >= 0 && (never_ran(l) || is_tie(&k->g, (size_t)l->node));
}

/* A load that kept its form for want of a decision takes its site's
 * (action a, -1 none): the analysis says so. */
static void follow_site_decision(struct analysis_kernel *ak, const struct load_in *l, int a,
				 const struct capture_load *cl)
{
	size_t o;

	for (o = 0; o < ak->nr_loads; o++) {
		struct analysis_load *al = &ak->loads[o];

		if (al->ordinal != l->ordinal)
			continue;
		if (a >= 0 && a != LOAD_ACTION_AS_BUILT) {
			al->action = load_action_name((enum load_action)a);
			al->decision = a == LOAD_ACTION_NO_ALLOCATE ? "bypass" : "cache";
		}
		free(al->reason);
		al->reason = xasprintf("%s, and %s", never_ran(l) ?
				       "never ran in the launches measured (no accesses)" :
				       "weight 0 and no reuse or conflict with other loads",
				       load_sites_is_python(cl->file) ?
				       "takes its call's decision (a tl.load carries one form)" :
				       "takes its expression's decision (an expression carries "
				       "one form)");
	}
}

/*
 * A source site's loads beyond --max-loads (not measured) take the
 * decision its measured loads got in plan: the site, a Triton call or a
 * CUDA expression, can carry only one form (load_sites.h), and a site half
 * rewritten is no source the user can write. So do its loads that keep
 * their form for want of a decision (never ran, or a tie) beside a load
 * that has one (decode_iter's and deposit's unrolled tails on the H200).
 * Where ak is not NULL, their reasons say so.
 */
static void follow_sites(struct kernel_in *k, struct plan *plan, struct analysis_kernel *ak)
{
	const struct capture_kernel *ck = k->ck;
	const char *mod = *k->module ? k->module : NULL;
	unsigned *ords = xcalloc(ck->nr_loads + 1, sizeof(*ords));
	size_t *group = xcalloc(ck->nr_loads + 1, sizeof(*group)), i, j, o;

	for (i = 0; i < ck->nr_loads; i++)
		ords[i] = ck->loads[i].ordinal;
	if (load_sites_group(ck, ords, ck->nr_loads, group) == ck->nr_loads)
		goto out;
	for (i = 0; i < ck->nr_loads; i++) {
		const struct load_in *lo = find_load(k, ords[i]);
		int unmeasured = lo && lo->left_out && !strcmp(lo->left_out, "not measured");

		if (!lo || (!unmeasured && !keeps_form(k, lo)))
			continue;
		for (j = 0; j < ck->nr_loads; j++) {
			const struct load_in *n = find_load(k, ords[j]);
			int a, l2;

			if (j == i || group[j] != group[i] || !n || n->node < 0 || keeps_form(k, n))
				continue;
			a = plan_action(plan, mod ? mod : "", k->name, n->ordinal);
			l2 = plan_l2(plan, mod ? mod : "", k->name, n->ordinal);
			if (a >= 0 && a != LOAD_ACTION_AS_BUILT)
				plan_set(plan, mod, k->name, lo->ordinal, (enum load_action)a);
			if (l2 > 0)
				plan_set_l2(plan, mod, k->name, lo->ordinal, (enum l2_priority)l2);
			if (ak && unmeasured)
				for (o = 0; o < ak->nr_left_out; o++)
					if (ak->left_out[o].ordinal == lo->ordinal)
						ak->left_out[o].reason =
							follows_site_reason(&ck->loads[i]);
			if (ak && !unmeasured)
				follow_site_decision(ak, lo, a, &ck->loads[i]);
			break;
		}
	}
out:
	free(group);
	free(ords);
}

/* Whether a load of the kernel is a Triton .py's. */
static int load_is_python(const struct kernel_in *k, unsigned ordinal)
{
	const struct capture_load *cl = capture_kernel_find_load(k->ck, ordinal);

	return cl && load_sites_is_python(cl->file);
}

/* Whether a load bypasses L1 as built (.cg, .cv, L1::no_allocate). */
static int bypasses_as_built(const struct load_in *l)
{
	const char *op = l->operator_name;

	return op && (!strcmp(op, ".cg") || !strcmp(op, ".cv") || !strcmp(op, ".L1::no_allocate"));
}

/* The measured ordinals of the kernel's site `site` (the loads whose node
 * is in it: group[node], or the node itself when group is NULL) into
 * ordinals[], and "file:line" of the first (caller frees, NULL unknown). */
static size_t site_ordinals(const struct kernel_in *k, const size_t *group, size_t site,
			    unsigned *ordinals, char **where)
{
	size_t i, n = 0;

	*where = NULL;
	for (i = 0; i < k->nr_loads; i++) {
		const struct load_in *l = &k->loads[i];
		const struct capture_load *cl;

		if (l->node < 0 || (group ? group[l->node] : (size_t)l->node) != site)
			continue;
		ordinals[n++] = l->ordinal;
		cl = capture_kernel_find_load(k->ck, l->ordinal);
		if (!*where && cl && cl->file && cl->line > 0)
			*where = xasprintf("%s:%ld", cl->file, cl->line);
	}
	return n;
}

/* An L1 close call of site v into ak: the answer was cached[v]. */
static void l1_record(const struct kernel_in *k, const size_t *group, size_t v, int cached,
		      int as_built, double margin, double noise, double total,
		      struct analysis_kernel *ak)
{
	static const char *const name[] = { "L1::no_allocate", "default" };
	unsigned *ords = xcalloc(k->nr_loads + 1, sizeof(*ords));
	struct close_call_site c = { "L1", ords, 0, NULL, NULL, NULL, "as built",
				     margin, noise, total };
	char *where;

	c.nr_ordinals = site_ordinals(k, group, v, ords, &where);
	c.where = where;
	c.chosen = cached == as_built ? "as built" : name[cached];
	c.other = cached != as_built ? "as built" : name[!cached];
	close_calls_record(ak, &c);
	free(where);
	free(ords);
}

/*
 * The L1 close calls (docs/model.md "Close calls") of the chosen answer on
 * the solved graph: fixed[] (solved->n, zeroed by the caller) gets each
 * close site's state as built, and where one moves, the method solves the
 * rest again with them fixed (ak->stable, chosen). Nothing without the
 * baseline's counter spread. Returns 0 or the solver's error.
 */
static int l1_close_calls(struct kernel_in *k, const struct graph *solved, const size_t *group,
			  const struct solver_options *sopt, double spread,
			  struct analysis_kernel *ak, unsigned char *fixed)
{
	size_t n = solved->n, i, v;
	unsigned char *cached = xcalloc(n + 1, 1), *as_built = xcalloc(n + 1, 1);
	unsigned char *close = xcalloc(n + 1, 1), *tie = xcalloc(n + 1, 1);
	double *margin = xcalloc(n + 1, sizeof(*margin)), total = 0;
	int ret = 0;

	for (v = 0; v < k->g.n; v++)
		total += fabs(k->g.nodes[v].weight);
	if (isnan(spread) || !(total > 0))
		goto out;
	memset(tie, 1, n);
	for (i = 0; i < k->nr_loads; i++) {
		const struct load_in *l = &k->loads[i];

		if (l->node < 0)
			continue;
		v = group ? group[l->node] : (size_t)l->node;
		cached[v] = ak->chosen->cached[l->node];
		as_built[v] |= !bypasses_as_built(l);
		tie[v] &= is_tie(&k->g, (size_t)l->node);
	}
	if (close_calls_graph(solved, cached, as_built, spread * total, margin, close, fixed)) {
		ret = solver_solve_fixed(solver_find(ak->chosen->method), solved, fixed, sopt,
					 &ak->stable);
		if (ret) {
			error_prefix(ret, "kernel '%s' (module %s): the close calls", k->name,
				     k->module);
			goto out;
		}
		if (group)
			expand_result(&k->g, group, &ak->stable);
		ak->has_stable = 1;
		ak->chosen = &ak->stable;
	}
	for (v = 0; v < n; v++)
		if (close[v] && !tie[v])
			l1_record(k, group, v, cached[v], as_built[v], margin[v], spread * total,
				  total, ak);
out:
	free(cached);
	free(as_built);
	free(close);
	free(tie);
	free(margin);
	return ret;
}

/*
 * The L1 half of the source plan (analysis_kernel's source_*): the nodes
 * of the solved graph (the sites' graph, group[] giving each load's, or
 * the loads' own when group is NULL) that are Triton calls stay cached,
 * as built, as do the close calls (close_fixed, on the solved graph:
 * l1_close_calls), and the method that chose the plan solves the rest
 * (solver_solve_fixed). *cached gets the answer on k's graph (caller
 * frees). Returns 0 or the solver's error.
 */
static int source_l1(struct kernel_in *k, const struct graph *solved, const size_t *group,
		     const struct solver_options *sopt, const unsigned char *close_fixed,
		     struct analysis_kernel *ak, unsigned char **cached)
{
	unsigned char *fixed = xcalloc(solved->n + 1, 1);
	struct solver_result res;
	size_t i, nr_fixed = 0;
	int ret;

	for (i = 0; i < k->nr_loads; i++) {
		const struct load_in *l = &k->loads[i];
		size_t v;

		if (l->node < 0 || !load_is_python(k, l->ordinal))
			continue;
		v = group ? group[l->node] : (size_t)l->node;
		nr_fixed += !fixed[v];
		fixed[v] = SOLVER_FIXED_CACHED;
	}
	/* the close calls keep their form as built here too */
	for (i = 0; i < solved->n; i++)
		if (!fixed[i])
			fixed[i] = close_fixed[i];
	if (!nr_fixed) {
		free(fixed);
		*cached = xcalloc(k->g.n + 1, 1);
		memcpy(*cached, ak->chosen->cached, k->g.n);
		ak->source_objective = ak->chosen->objective;
		ak->source_optimal = ak->chosen->optimal;
		return 0;
	}
	ret = solver_solve_fixed(solver_find(ak->chosen->method), solved, fixed, sopt, &res);
	free(fixed);
	if (ret)
		return error_prefix(ret, "kernel '%s' (module %s): the source plan", k->name,
				    k->module);
	if (solved != &k->g)
		expand_result(&k->g, group, &res);
	ak->source_objective = res.objective;
	ak->source_optimal = res.optimal;
	*cached = res.cached;
	return 0;
}

/* Each load's form in the source plan, for the analysis. */
static void record_source(const struct kernel_in *k, const struct plan *source_plan,
			  struct analysis_kernel *ak)
{
	const char *mod = *k->module ? k->module : "";
	size_t i;

	for (i = 0; i < ak->nr_loads; i++) {
		struct analysis_load *al = &ak->loads[i];
		int a = plan_action(source_plan, mod, k->name, al->ordinal);
		int l2 = plan_l2(source_plan, mod, k->name, al->ordinal);

		if (a >= 0)
			al->source_action = load_form_name((enum load_action)a,
				l2 > 0 ? (enum l2_priority)l2 : L2_PRIORITY_NONE);
	}
	for (i = 0; i < k->nr_loads && !ak->source_constrained; i++)
		ak->source_constrained = load_is_python(k, k->loads[i].ordinal);
}

/* Every solver that applies on the solved graph (the sites' when group is
 * not NULL), each answer on k's graph; opt->method's is ak->chosen. */
static int solve_all(struct kernel_in *k, const struct graph *solved, const size_t *group,
		     const struct advise_options *opt, const struct solver_options *sopt,
		     struct analysis_kernel *ak)
{
	size_t i;
	int ret;

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
		ret = s->solve(solved, sopt, &ak->solutions[ak->nr_solutions]);
		if (ret)
			return error_prefix(ret, "kernel '%s' (module %s): %s", k->name, k->module,
					    s->name);
		if (group)
			expand_result(&k->g, group, &ak->solutions[ak->nr_solutions]);
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
	return 0;
}

static int advise_kernel(const struct capture_kernel *ck, const struct advise_options *opt,
			 const struct geometry *geo, struct plan *plan, struct plan *source_plan,
			 struct analysis_kernel *ak)
{
	struct kernel_in k;
	struct solver_options sopt;
	struct graph sites;
	const struct graph *solved;
	unsigned char *source_cached = NULL, *close_fixed = NULL;
	size_t nr_sites, *group = NULL;
	int ret;

	memset(&k, 0, sizeof(k));
	graph_init(&k.g);
	graph_init(&sites);
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
	if (nr_sites < k.g.n) {
		load_sites_merge_graph(&k.g, group, nr_sites, &sites);
		ak->site_loads = k.g.n;
		ak->sites = nr_sites;
	}
	solved = nr_sites < k.g.n ? &sites : &k.g;
	ret = solve_all(&k, solved, solved != &k.g ? group : NULL, opt, &sopt, ak);
	if (ret)
		goto out;
	close_fixed = xcalloc(solved->n + 1, 1);
	ret = l1_close_calls(&k, solved, solved != &k.g ? group : NULL, &sopt,
			     geo->counter_spread, ak, close_fixed);
	if (ret)
		goto out;
	decide_loads(&k, ak->chosen, solved, solved != &k.g ? group : NULL, plan, ak);
	ak->pairs_missing = k.pairs_missing;
	if (source_plan) {
		ret = source_l1(&k, solved, solved != &k.g ? group : NULL, &sopt, close_fixed, ak,
				&source_cached);
		if (ret)
			goto out;
		l1_plan_set(&k, source_cached, source_plan);
	}
	if (ck->l2_priority && (ret = advise_l2_priorities(ck, opt, plan, source_plan, ak)))
		goto out;
	follow_sites(&k, plan, ak);
	if (source_plan) {
		follow_sites(&k, source_plan, NULL);
		record_source(&k, source_plan, ak);
	}
	/* the graph moves to the analysis */
	ak->g = k.g;
	graph_init(&k.g);
out:
	graph_release(&sites);
	free(source_cached);
	free(close_fixed);
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
	if (k->has_stable)
		solver_result_release(&k->stable);
	close_calls_release(k);
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
		   struct plan *plan, struct plan *source_plan, struct analysis *out)
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
		ret = advise_kernel(&cap->kernels[i], opt, &geo, plan, source_plan,
				    &out->kernels[i]);
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

const struct analysis_close_call *analysis_close_call(const struct analysis_kernel *k,
						      const char *layer, unsigned ordinal)
{
	size_t i, m;

	for (i = 0; k && i < k->nr_close_calls; i++)
		for (m = 0; m < k->close_calls[i].nr_ordinals; m++)
			if (k->close_calls[i].ordinals[m] == ordinal &&
			    !strcmp(k->close_calls[i].layer, layer))
				return &k->close_calls[i];
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

/* A close call's margin, with its units (docs/analysis-json.md). */
static json_t *margin_json(const struct analysis_close_call *c)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:s, s:s, s:s, s:s}", "fraction",
		num_or_null(c->margin), "noise_fraction", num_or_null(c->noise), "bytes",
		graph_weight_json(c->margin_bytes), "noise_bytes", graph_weight_json(c->noise_bytes),
		"of", strcmp(c->layer, "L1") ? "baseline DRAM bytes" :
		"the kernel's L1 total (sum of |W(v)|)", "chosen", c->chosen, "other", c->other,
		"kept", c->kept);
}

/* A load's close calls, L1 then L2, into its JSON object. */
static void close_call_json(const struct analysis_kernel *k, unsigned ordinal, json_t *jl)
{
	static const char *const layers[] = { "L1", "L2" };
	json_t *margins = json_object();
	size_t i;

	for (i = 0; i < ARRAY_SIZE(layers); i++) {
		const struct analysis_close_call *c = analysis_close_call(k, layers[i], ordinal);

		if (c)
			json_object_set_new(margins, layers[i], margin_json(c));
	}
	if (!json_object_size(margins)) {
		json_decref(margins);
		return;
	}
	json_object_set_new(jl, "close_call", json_true());
	json_object_set_new(jl, "margin", margins);
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
		if (k->source_constrained)
			json_object_set_new(jl, "source_action", l->source_action ?
					    json_string(l->source_action) : json_null());
		close_call_json(k, l->ordinal, jl);
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
	if (k->source_constrained)
		json_object_set_new(ko, "source_plan", json_pack("{s:o, s:b, s:o}",
			"expected_l2_traffic_saved_bytes", graph_weight_json(k->source_objective),
			"optimal", k->source_optimal, "expected_dram_bytes_saved",
			graph_weight_json(k->source_l2_saved_dram_bytes)));
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
