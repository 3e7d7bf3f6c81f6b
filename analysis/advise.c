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
#include "analysis/graph.h"
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
	json_t *json;
	int node;                   /* index in the graph, -1 when left out */
	const char *left_out;       /* why it is not a node (static) */
	double hit, access;         /* NAN when not measured */
	int has_operator;           /* already carries a cache operator / L1 eviction */
	char *operator_name;        /* that qualifier, for the reason text (owned) */
};

struct kernel_in {
	size_t index;
	const char *module, *name;
	struct load_in *loads;
	size_t nr_loads;
	struct graph g;
	size_t pairs_missing;
};

static int get_geometry(json_t *capture, struct geometry *geo)
{
	json_t *dev = json_object_get(capture, "device");
	static const struct { const char *key; double def; } fields[] = {
		{ "sector_bytes", 32 }, { "l1_line_bytes", 128 },
	};
	double v[2];
	size_t i;

	if (dev && !json_is_object(dev) && !json_is_null(dev))
		return error_set(CA_E_INPUT, "capture: device: not an object");
	for (i = 0; i < 2; i++) {
		json_t *f = json_is_object(dev) ? json_object_get(dev, fields[i].key) : NULL;

		v[i] = fields[i].def;
		if (!f || json_is_null(f))
			continue;
		if (!json_is_number(f) || !(json_number_value(f) > 0) ||
		    !isfinite(json_number_value(f)))
			return error_set(CA_E_INPUT, "capture: device.%s: not a positive number",
					 fields[i].key);
		v[i] = json_number_value(f);
	}
	geo->sector_bytes = v[0];
	geo->line_bytes = v[1];
	return 0;
}

/* An optional non-negative count: NAN when absent or null. */
static int get_count(json_t *obj, const char *key, const char *path, double *out)
{
	json_t *v = json_object_get(obj, key);

	*out = NAN;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
		return error_set(CA_E_INPUT, "capture: %s.%s: not a non-negative number", path, key);
	*out = json_number_value(v);
	return 0;
}

/*
 * Whether the load already has an L1 cache operator or eviction priority:
 * from "cache_op" / "l1_eviction" when the capture has them, else from the
 * qualifiers of "instruction".
 */
static int load_operator(json_t *load, char **name)
{
	const char *op = json_string_value(json_object_get(load, "cache_op"));
	const char *ev = json_string_value(json_object_get(load, "l1_eviction"));
	const char *ins = json_string_value(json_object_get(load, "instruction"));
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

static struct load_in *find_load(struct kernel_in *k, json_int_t ordinal)
{
	size_t i;

	for (i = 0; i < k->nr_loads; i++)
		if ((json_int_t)k->loads[i].ordinal == ordinal)
			return &k->loads[i];
	return NULL;
}

static int read_loads(struct kernel_in *k, json_t *jk, const char *kpath)
{
	json_t *loads = json_object_get(jk, "loads"), *jl;
	size_t i;
	int ret;

	if (loads && !json_is_array(loads))
		return error_set(CA_E_INPUT, "capture: %s.loads: not an array", kpath);
	k->loads = xcalloc(json_array_size(loads) + 1, sizeof(*k->loads));
	json_array_foreach(loads, i, jl) {
		struct load_in *l = &k->loads[k->nr_loads];
		char path[256];
		json_t *ord, *patchable, *measured;

		snprintf(path, sizeof(path), "%s.loads[%zu]", kpath, i);
		if (!json_is_object(jl))
			return error_set(CA_E_INPUT, "capture: %s: not an object", path);
		ord = json_object_get(jl, "ordinal");
		if (!json_is_integer(ord) || json_integer_value(ord) < 0 ||
		    json_integer_value(ord) > 0x7fffffff)
			return error_set(CA_E_INPUT, "capture: %s.ordinal: missing or not a "
					 "non-negative integer", path);
		if (find_load(k, json_integer_value(ord)))
			return error_set(CA_E_INPUT, "capture: %s.ordinal: load %lld listed twice",
					 path, (long long)json_integer_value(ord));
		l->ordinal = (unsigned)json_integer_value(ord);
		l->json = jl;
		l->node = -1;
		k->nr_loads++;
		if ((ret = get_count(jl, "hit", path, &l->hit)) ||
		    (ret = get_count(jl, "access", path, &l->access)))
			return ret;
		l->has_operator = load_operator(jl, &l->operator_name);
		patchable = json_object_get(jl, "patchable");
		measured = json_object_get(jl, "measured");
		if (json_is_false(patchable))
			l->left_out = "not patchable";
		else if (json_is_false(measured) || isnan(l->hit))
			l->left_out = "not measured";
	}
	return 0;
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

static int read_efficiency(const struct kernel_in *k, json_t *jk, double *e_on, double *e_off)
{
	json_t *eff = json_object_get(jk, "efficiency");
	json_t *on = json_object_get(eff, "on"), *off = json_object_get(eff, "off");

	if (!json_is_number(on) || !json_is_number(off) || !(json_number_value(on) > 0) ||
	    !(json_number_value(off) > 0) || !isfinite(json_number_value(on)) ||
	    !isfinite(json_number_value(off)))
		return error_set(CA_E_INPUT,
				 "kernel '%s' (module %s): the classic model needs the load "
				 "efficiency E_on/E_off (\"efficiency\": {\"on\", \"off\"} from the "
				 "monitor run), which the capture lacks: use the sector model",
				 k->name, k->module);
	*e_on = json_number_value(on);
	*e_off = json_number_value(off);
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

static int build_graph(struct kernel_in *k, json_t *jk, const char *kpath,
		       enum advise_model model, const struct geometry *geo)
{
	json_t *pairs = json_object_get(jk, "pairs"), *jp;
	double e_on = 1, e_off = 1, unit;
	unsigned char *seen;
	size_t i, n, listed_null = 0;
	int ret = 0;

	if (model == ADVISE_MODEL_CLASSIC) {
		size_t nodes = 0;

		for (i = 0; i < k->nr_loads; i++)
			nodes += !k->loads[i].left_out;
		if (nodes && (ret = read_efficiency(k, jk, &e_on, &e_off)))
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
	if (pairs && !json_is_array(pairs))
		return error_set(CA_E_INPUT, "capture: %s.pairs: not an array", kpath);
	n = k->g.n;
	seen = xcalloc(n * n + 1, 1);
	json_array_foreach(pairs, i, jp) {
		json_t *ji = json_object_get(jp, "i"), *jj = json_object_get(jp, "j");
		struct load_in *a, *b;
		char path[256];
		double hit;

		snprintf(path, sizeof(path), "%s.pairs[%zu]", kpath, i);
		if (!json_is_object(jp)) {
			ret = error_set(CA_E_INPUT, "capture: %s: not an object", path);
			break;
		}
		if (!json_is_integer(ji) || !json_is_integer(jj)) {
			ret = error_set(CA_E_INPUT, "capture: %s: \"i\" and \"j\" must be load "
					"ordinals", path);
			break;
		}
		a = find_load(k, json_integer_value(ji));
		b = find_load(k, json_integer_value(jj));
		if (!a || !b) {
			ret = error_set(CA_E_INPUT, "capture: %s.%s: no load with ordinal %lld",
					path, a ? "j" : "i",
					(long long)json_integer_value(a ? jj : ji));
			break;
		}
		if (a == b) {
			ret = error_set(CA_E_INPUT, "capture: %s: a pair of load %u with itself",
					path, a->ordinal);
			break;
		}
		if ((ret = get_count(jp, "hit", path, &hit)))
			break;
		if (a->node < 0 || b->node < 0)
			continue;
		if (seen[(size_t)a->node * n + (size_t)b->node]) {
			ret = error_set(CA_E_INPUT, "capture: %s: pair (%u, %u) listed twice",
					path, a->ordinal, b->ordinal);
			break;
		}
		seen[(size_t)a->node * n + (size_t)b->node] = 1;
		seen[(size_t)b->node * n + (size_t)a->node] = 1;
		if (never_ran(a) || never_ran(b))
			continue;
		if (isnan(hit)) {
			listed_null++;
			continue;
		}
		graph_set_edge(&k->g, (size_t)a->node, (size_t)b->node,
			       unit * (hit - a->hit - b->hit));
	}
	if (!ret) {
		size_t u, v;

		for (u = 0; u < n; u++)
			for (v = u + 1; v < n; v++)
				k->pairs_missing += !seen[u * n + v];
		k->pairs_missing += listed_null;
	}
	free(seen);
	return ret;
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

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : graph_weight_json(v);
}

static json_t *decide_loads(struct kernel_in *k, const struct solver_result *chosen,
			    struct plan *plan)
{
	json_t *out = json_array();
	const struct graph *g = &k->g;
	size_t i;

	for (i = 0; i < k->nr_loads; i++) {
		struct load_in *l = &k->loads[i];
		json_t *jl;
		const char *decision, *action = NULL;
		char *reason = NULL;
		double saved = 0;
		size_t v, u;

		if (l->left_out)
			continue;
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
		jl = json_object();
		json_object_set_new(jl, "ordinal", json_integer(l->ordinal));
		json_object_set_new(jl, "node", json_string(g->nodes[v].id));
		json_object_set_new(jl, "decision", json_string(decision));
		json_object_set_new(jl, "action", action ? json_string(action) : json_null());
		if (reason)
			json_object_set_new(jl, "reason", json_string(reason));
		json_object_set_new(jl, "hit", num_or_null(l->hit));
		json_object_set_new(jl, "access", num_or_null(l->access));
		json_object_set_new(jl, "hit_rate", !isnan(l->access) && l->access > 0 ?
				    json_real(l->hit / l->access) : json_null());
		json_object_set_new(jl, "weight_bytes", graph_weight_json(g->nodes[v].weight));
		json_object_set_new(jl, "traffic_saved_bytes", graph_weight_json(saved));
		json_array_append_new(out, jl);
		free(reason);
	}
	return out;
}

static json_t *left_out_json(const struct kernel_in *k)
{
	json_t *out = json_array();
	size_t i;

	for (i = 0; i < k->nr_loads; i++) {
		if (!k->loads[i].left_out)
			continue;
		json_array_append_new(out, json_pack("{s:i, s:s}", "ordinal",
						     (json_int_t)k->loads[i].ordinal, "reason",
						     k->loads[i].left_out));
	}
	return out;
}

static int advise_kernel(json_t *jk, size_t index, const struct advise_options *opt,
			 const struct geometry *geo, struct plan *plan, json_t **out)
{
	struct kernel_in k;
	struct solver_options sopt;
	struct solver_result res[8];
	const struct solver_result *chosen = NULL;
	const char *note = NULL;
	json_t *jname, *jmod, *solutions, *ko;
	char kpath[64];
	size_t nr = 0, i;
	int ret;

	memset(&k, 0, sizeof(k));
	graph_init(&k.g);
	snprintf(kpath, sizeof(kpath), "kernels[%zu]", index);
	*out = NULL;
	if (!json_is_object(jk))
		return error_set(CA_E_INPUT, "capture: %s: not an object", kpath);
	jname = json_object_get(jk, "name");
	jmod = json_object_get(jk, "module");
	if (!json_is_string(jname))
		return error_set(CA_E_INPUT, "capture: %s.name: missing or not a string", kpath);
	if (jmod && !json_is_string(jmod) && !json_is_null(jmod))
		return error_set(CA_E_INPUT, "capture: %s.module: not a string", kpath);
	k.index = index;
	k.name = json_string_value(jname);
	k.module = json_is_string(jmod) ? json_string_value(jmod) : "";
	if ((ret = read_loads(&k, jk, kpath)) ||
	    (ret = build_graph(&k, jk, kpath, opt->model, geo)))
		goto out;

	solver_options_init(&sopt);
	sopt.time_limit_seconds = opt->time_limit_seconds;
	sopt.exhaustive_max_n = opt->exhaustive_max_n;
	for (i = 0; solver_table[i] && nr < ARRAY_SIZE(res); i++) {
		const struct solver *s = solver_table[i];

		if (!strcmp(s->name, "exhaustive") && k.g.n > opt->exhaustive_max_n)
			continue;
		/* a cross-check where GLPK proves quickly, unless it decides */
		if (!strcmp(s->name, "ilp") && k.g.n > opt->ilp_max_n && strcmp(opt->method, "ilp"))
			continue;
		ret = s->solve(&k.g, &sopt, &res[nr]);
		if (ret) {
			error_prefix(ret, "kernel '%s' (module %s): %s", k.name, k.module, s->name);
			goto out;
		}
		if (!strcmp(s->name, opt->method))
			chosen = &res[nr];
		nr++;
	}
	if (!chosen) {
		/* exhaustive asked for on a kernel too large for it */
		for (i = 0; i < nr; i++)
			if (!strcmp(res[i].method, "bnb"))
				chosen = &res[i];
		note = "too many loads for exhaustive search: the branch and bound's answer is used";
	}
	solutions = json_array();
	for (i = 0; i < nr; i++)
		json_array_append_new(solutions, solver_result_to_json(&k.g, &res[i]));
	ko = json_object();
	json_object_set_new(ko, "module", json_string(k.module));
	json_object_set_new(ko, "name", json_string(k.name));
	json_object_set_new(ko, "graph", graph_to_json(&k.g));
	json_object_set_new(ko, "solutions", solutions);
	json_object_set_new(ko, "chosen", json_string(chosen->method));
	if (note)
		json_object_set_new(ko, "note", json_string(note));
	json_object_set_new(ko, "optimal", json_boolean(chosen->optimal));
	json_object_set_new(ko, "loads", decide_loads(&k, chosen, plan));
	json_object_set_new(ko, "left_out", left_out_json(&k));
	json_object_set_new(ko, "pairs_missing", json_integer((json_int_t)k.pairs_missing));
	json_object_set_new(ko, "expected_l2_traffic_saved_bytes",
			    graph_weight_json(chosen->objective));
	*out = ko;
out:
	for (i = 0; i < nr; i++)
		solver_result_release(&res[i]);
	kernel_release(&k);
	return ret;
}

/* How often advise_capture() ran in this process (tests check "once"). */
static unsigned long advise_capture_calls;

unsigned long advise_capture_count(void)
{
	return advise_capture_calls;
}

int advise_capture(json_t *capture, const struct advise_options *opt,
		   struct plan *plan, json_t **analysis)
{
	struct geometry geo;
	json_t *kernels, *jk, *doc, *out;
	size_t i;
	int ret;

	advise_capture_calls++;
	*analysis = NULL;
	if (!json_is_object(capture))
		return error_set(CA_E_INPUT, "capture: not a JSON object");
	if (!solver_find(opt->method))
		return error_set(CA_E_USAGE, "unknown solver method '%s': use bnb, ilp, heuristic "
				 "or exhaustive", opt->method);
	if ((ret = get_geometry(capture, &geo)))
		return ret;
	kernels = json_object_get(capture, "kernels");
	if (!kernels)
		return error_set(CA_E_INPUT, "capture: kernels: missing");
	if (!json_is_array(kernels))
		return error_set(CA_E_INPUT, "capture: kernels: not an array");
	out = json_array();
	json_array_foreach(kernels, i, jk) {
		json_t *ko;

		ret = advise_kernel(jk, i, opt, &geo, plan, &ko);
		if (ret) {
			json_decref(out);
			return ret;
		}
		json_array_append_new(out, ko);
	}
	doc = json_object();
	json_object_set_new(doc, "schema", json_string(ANALYSIS_SCHEMA));
	json_object_set_new(doc, "model", json_string(opt->model == ADVISE_MODEL_CLASSIC ?
						      "classic" : "sector"));
	json_object_set_new(doc, "method", json_string(opt->method));
	json_object_set_new(doc, "sector_bytes", graph_weight_json(geo.sector_bytes));
	json_object_set_new(doc, "l1_line_bytes", graph_weight_json(geo.line_bytes));
	json_object_set_new(doc, "kernels", out);
	*analysis = doc;
	return 0;
}
