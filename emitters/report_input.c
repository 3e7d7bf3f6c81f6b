#include "emitters/report_input.h"

#include "emitters/rewrite/inductor.h"

#include "emitters/capture_layout.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/advise.h"
#include "analysis/load_sites.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/strbuf.h"
#include "base/path.h"
#include "base/xalloc.h"
#include "emitters/rewrite/source_file.h"
#include "emitters/rewrite/sources_file.h"

#define CAPTURE_SCHEMA "cacheadvise.capture/1"

/* Advice sections shown as recorded: capture.json (top level or per kernel)
 * and plan.json hold them (docs/capture-json.md, docs/monitor.md), in this
 * order. */
static const char *const section_keys[] = { "software_cache", "l2", "l2_windows",
					    "register_cache", "oracle" };

void report_program_command(struct strbuf *out, const struct report_input *in)
{
	const struct capture_program *p = &in->model.program;
	size_t i;

	if (!p->path) {
		strbuf_addstr(out, "(unknown program)");
		return;
	}
	strbuf_add_shell_word(out, p->path);
	for (i = 0; i < p->nr_args; i++) {
		strbuf_addch(out, ' ');
		strbuf_add_shell_word(out, p->args[i]);
	}
}

void report_shell_path(struct strbuf *out, const char *dir, const char *file)
{
	char *path = file ? xasprintf("%s/%s", dir, file) : xstrdup(dir);

	strbuf_add_shell_word(out, path);
	free(path);
}

static int file_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static void add_note(struct report_input *in, char *note)
{
	in->notes = xrealloc(in->notes, (in->nr_notes + 1) * sizeof(*in->notes));
	in->notes[in->nr_notes++] = note;
}

char *report_name_label(const char *name, const char *demangled)
{
	char *base = source_kernel_base_name(name, demangled);

	if (!base && demangled)
		base = source_kernel_base_name(name, NULL);
	return base && *base ? base : (free(base), xstrdup(name ? name : "?"));
}

char *report_kernel_label(const struct report_kernel *k)
{
	return report_name_label(k->name, k->demangled);
}

char *report_label_of(const struct report_input *in, const char *name)
{
	size_t i;

	for (i = 0; name && i < in->nr_kernels; i++)
		if (!strcmp(in->kernels[i].name, name))
			return report_kernel_label(&in->kernels[i]);
	return report_name_label(name, NULL);
}

/*
 * A recorded sentence with the mangled names in it ("kernel _Z9fill_hashPjmjj
 * (0.318 ms) is not measured") shown by their short labels; the mangled
 * names stay in capture.json. Caller frees.
 */
static char *short_names(const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = text;

	while (*p) {
		const char *z = strstr(p, "_Z");
		size_t n;
		char *word, *label;

		if (!z)
			break;
		n = strspn(z, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		if ((z > text && (isalnum((unsigned char)z[-1]) || z[-1] == '_')) || n < 4 ||
		    (!isdigit((unsigned char)z[2]) && z[2] != 'N')) {
			strbuf_add(&sb, p, (size_t)(z - p) + 2);
			p = z + 2;
			continue;
		}
		strbuf_add(&sb, p, (size_t)(z - p));
		word = xstrndup(z, n);
		label = source_kernel_base_name(word, NULL);
		strbuf_addstr(&sb, label && *label ? label : word);
		free(label);
		free(word);
		p = z + n;
	}
	strbuf_addstr(&sb, p);
	return strbuf_detach(&sb, NULL);
}

int report_kernel_verified(const struct report_kernel *k, double *speedup, int *kept)
{
	const struct capture_verdict *v = k->verdict;

	if (!v || isnan(v->speedup.median))
		return 0;
	*speedup = v->speedup.median;
	*kept = v->kept >= 0 ? v->kept : v->speedup.median > 1.0;
	return 1;
}

double report_verification_spread(const struct report_kernel *k)
{
	if (!k->verdict)
		return NAN;
	return isnan(k->verdict->noise) ? k->verdict->spread : k->verdict->noise;
}

double report_program_speedup(const struct report_input *in)
{
	const struct capture_verification *ver = &in->model.verification;

	if (!in->model.has_verification)
		return NAN;
	return isnan(ver->gpu_speedup.median) ? ver->speedup.median : ver->gpu_speedup.median;
}

/*
 * Whether the instruction already has the L1 form the action asks for: no
 * L1 qualifier for "default", .L1::no_allocate for "L1::no_allocate", .cg
 * for "bypass" and so on.
 */
static int l1_action_is_current(const char *action, const char *instruction)
{
	static const struct { const char *action, *part; } forms[] = {
		{ "cache", "ca" }, { "bypass", "cg" }, { "stream", "cs" }, { "last_use", "lu" },
		{ "L1::no_allocate", "L1::no_allocate" }, { "L1::evict_first", "L1::evict_first" },
		{ "L1::evict_last", "L1::evict_last" },
	};
	const char *p;
	size_t i, n;
	int qualified = 0, match = 0;

	for (p = instruction; p && (p = strchr(p, '.')); ) {
		p++;
		n = strcspn(p, ".");
		for (i = 0; i < ARRAY_SIZE(forms); i++) {
			if (strlen(forms[i].part) != n || strncmp(p, forms[i].part, n))
				continue;
			qualified = 1;
			match |= !strcmp(forms[i].action, action);
		}
		if (!strncmp(p, "L1::", 4) && strncmp(p, "L1::evict_normal", n) &&
		    strncmp(p, "L1::evict_unchanged", n))
			qualified = 1;
	}
	return !strcmp(action, "default") ? !qualified : match;
}

/*
 * Whether the instruction already has the whole form the plan's action asks
 * for (docs/plan-json.md): its L1 part as above, and no L2 priority (an L2
 * priority is a policy the plan adds, never one the load has). A plan entry
 * that keeps a load as it is changes nothing.
 */
static int action_is_current(const char *action, const char *instruction)
{
	enum load_action a;
	enum l2_priority l2;

	if (load_form_parse(action, &a, &l2))
		return 0;
	if (l2 != L2_PRIORITY_NONE)
		return 0;
	return a == LOAD_ACTION_AS_BUILT || l1_action_is_current(load_action_name(a), instruction);
}

static const char *plan_action_for(const struct plan *p, const char *module, const char *fn,
				   unsigned ordinal)
{
	const char *generic = NULL, *exact = NULL;
	size_t i, j, l;

	for (i = 0; i < p->nr_modules; i++) {
		const struct plan_module *m = &p->modules[i];

		if (m->id && (!module || strcmp(m->id, module)))
			continue;
		for (j = 0; j < m->nr_functions; j++) {
			const struct plan_function *f = &m->functions[j];

			if (strcmp(f->name, fn))
				continue;
			for (l = 0; l < f->nr_loads; l++) {
				if (f->loads[l].ordinal != ordinal)
					continue;
				if (m->id)
					exact = load_form_name(f->loads[l].action, f->loads[l].l2);
				else
					generic = load_form_name(f->loads[l].action, f->loads[l].l2);
			}
		}
	}
	return exact ? exact : generic;
}

/* The kernel's entry of verification.kernels[], or NULL. */
static const struct capture_verdict *find_verdict(const struct capture *cap, const char *module,
						  const char *name)
{
	size_t i;

	for (i = 0; cap->has_verification && i < cap->verification.nr_kernels; i++) {
		const struct capture_verdict *v = &cap->verification.kernels[i];

		if (v->name && !strcmp(v->name, name) && (!v->module || !strcmp(v->module, module)))
			return v;
	}
	return NULL;
}

/* Whether a plan action (plan.json's spelling) keeps the load out of L1. */
static int action_bypasses_l1(const char *action)
{
	return action && (!strncmp(action, "L1::no_allocate", 15) || !strcmp(action, "bypass"));
}

static void load_from_model(struct report_input *in, struct report_kernel *k,
			    const struct capture_load *cl, struct report_load *l)
{
	const struct analysis_load *al;

	memset(l, 0, sizeof(*l));
	l->hint.source_index = -1;
	l->ordinal = cl->ordinal;
	l->ptx_line = cl->ptx_line > 0 ? (unsigned)cl->ptx_line : 0;
	l->instruction = cl->instruction ? cl->instruction : "";
	l->line = (int)cl->line;
	l->file = l->line ? cl->file : NULL;
	l->param = cl->param;
	l->read_only = cl->read_only;
	l->patchable = cl->patchable != 0;
	l->unpatchable_reason = cl->unpatchable_reason;
	l->measured = cl->measured != 0;

	/* the analysis' numbers are the capture's, as the one reader gave them
	 * to advise_capture(); a load the analysis left out shows the capture's */
	al = analysis_kernel_load(k->analysis, l->ordinal);
	l->hit = cl->hit;
	l->access = cl->access;
	/* hit_i / access_i is a rate only when no other load can hit the
	 * lines this one brings in: set by kernel_from_model. */
	l->hit_rate = NAN;
	l->weight_bytes = al ? al->weight_bytes : NAN;
	l->traffic_saved_bytes = al ? al->traffic_saved_bytes : NAN;
	l->bypass_avoids_bytes = NAN;
	l->decision = al ? al->decision : !l->patchable ? "not patchable" : "not measured";
	l->action = plan_action_for(&in->plan, k->module, k->name, l->ordinal);
	/* the report describes the plan the profile wrote and verified: where an
	 * analysis rule newer than plan.json decides a load otherwise (a close
	 * call kept as built, analysis/close_calls.h), the decision shown is the
	 * plan's, and the close-call line says so */
	if (!in->plan_from_analysis && al && action_bypasses_l1(l->action) &&
	    strcmp(l->decision, "bypass")) {
		l->decision = "bypass";
		l->traffic_saved_bytes = 0;   /* "0 unless cached" (advise.h) */
	}
	l->changes = l->action && !action_is_current(l->action, l->instruction);
	l->patch_action = plan_action_for(&in->source_plan, k->module, k->name, l->ordinal);
	l->patch_changes = l->patch_action && !action_is_current(l->patch_action, l->instruction);
	l->node = al ? al->node : NULL;
	l->reason = al ? al->reason : analysis_left_out_reason(k->analysis, l->ordinal);
}

static const struct report_load *load_of_node(const struct report_kernel *k, const char *id)
{
	size_t i;

	for (i = 0; id && i < k->nr_loads; i++)
		if (k->loads[i].node && !strcmp(k->loads[i].node, id))
			return &k->loads[i];
	return NULL;
}

/* bypass_avoids_bytes of every bypassed load, from the kernel's graph. */
static void bypass_costs(struct report_kernel *k)
{
	const struct graph *g = &k->analysis->g;
	size_t i, u;

	for (i = 0; i < k->nr_loads; i++) {
		struct report_load *l = &k->loads[i];
		long v = l->node ? graph_find(g, l->node) : -1;
		double w;

		if (v < 0 || strcmp(l->decision, "bypass"))
			continue;
		w = g->nodes[v].weight;
		for (u = 0; u < g->n; u++) {
			const struct report_load *o = load_of_node(k, g->nodes[u].id);

			if (u != (size_t)v && o && !strcmp(o->decision, "cache"))
				w += graph_edge(g, (size_t)v, u);
		}
		l->bypass_avoids_bytes = w < 0 ? -w : 0;
	}
}

/*
 * The kernel-wide figures: its L1 hit rate as built (the baseline's
 * counters, or in-run the pass with every load allocating), and the JIT-against-
 * cubin kernel time where both sides are unprofiled kernel times of the
 * same launches (the discovery run times the cubin from activity records;
 * --measure launches times the baseline runs the same way, while
 * --measure runs takes the baseline's time under the range profiler).
 */
static void kernel_figures(struct report_kernel *k)
{
	const struct capture_counters *base = capture_kernel_counters(k->model, "baseline");
	const struct capture_counters *all = capture_kernel_counters(k->model, "in_run_all");
	double hits = base ? base->l1_hits : NAN, sectors = base ? base->l1_sectors : NAN;
	double cubin = k->model->gpu_time_cubin_ns, jit = k->model->gpu_time_baseline_ns;
	double launches = base && base->launches >= 0 ? (double)base->launches : NAN;
	const char *as = base ? base->measured_as : NULL;

	if (isnan(jit) && base)
		jit = base->duration_ns;

	if (isnan(hits) || isnan(sectors)) {
		/* --measure launches: the baseline runs are timed only; the pass
		 * with every load allocating carries the counters. */
		hits = all ? all->l1_hits : NAN;
		sectors = all ? all->l1_sectors : NAN;
	}
	k->l1_hit_rate = !isnan(hits) && !isnan(sectors) && sectors > 0 && hits <= sectors ?
			 hits / sectors : NAN;
	k->jit_vs_cubin = NAN;
	if (isnan(cubin) || cubin <= 0 || isnan(jit) || jit <= 0)
		k->jit_vs_cubin_reason = "not measured: the capture lacks the discovery run's or the "
					 "baseline's kernel time";
	else if (!as || strncmp(as, "kernel time from activity records", 33))
		k->jit_vs_cubin_reason = "not comparable: the baseline's kernel time was measured "
					 "under the range profiler (--measure runs), the cubin's "
					 "without it";
	else if (!isnan(launches) && k->launches >= 0 && launches != (double)k->launches)
		k->jit_vs_cubin_reason = "not comparable: the baseline and discovery runs timed a "
					 "different number of launches";
	else
		k->jit_vs_cubin = jit / cubin - 1;
}

static void kernel_from_model(struct report_input *in, const struct capture_kernel *ck,
			      struct report_kernel *k)
{
	size_t i;

	memset(k, 0, sizeof(*k));
	k->optimal = -1;
	k->launches = -1;
	k->expected_saved_bytes = NAN;
	k->l1_hit_rate = NAN;
	k->jit_vs_cubin = NAN;
	k->model = ck;
	k->module = ck->module;
	k->name = ck->name;
	k->demangled = ck->demangled;
	k->launches = ck->launches;
	k->analysis = analysis_find_kernel(in->analysis, k->module, k->name);
	k->verdict = ck->verification ? ck->verification :
		     find_verdict(&in->model, k->module, k->name);
	k->verification = k->verdict ? capture_section_json(k->verdict->source) : NULL;
	if (k->analysis) {
		k->chosen = k->analysis->chosen->method;
		k->optimal = k->analysis->chosen->optimal;
		k->expected_saved_bytes = k->analysis->chosen->objective;
	}
	k->nr_loads = ck->nr_loads;
	k->loads = xcalloc(k->nr_loads + 1, sizeof(*k->loads));
	for (i = 0; i < k->nr_loads; i++) {
		load_from_model(in, k, &ck->loads[i], &k->loads[i]);
		k->nr_changes += k->loads[i].changes != 0;
		k->nr_patch_changes += k->loads[i].patch_changes != 0;
	}
	if (k->analysis)
		bypass_costs(k);
	if (k->nr_loads == 1 && !isnan(k->loads[0].hit) && !isnan(k->loads[0].access) &&
	    k->loads[0].access > 0 && k->loads[0].hit <= k->loads[0].access)
		k->loads[0].hit_rate = k->loads[0].hit / k->loads[0].access;
	kernel_figures(k);
	if (ck->left_out_loads > 0) {
		char *label = report_kernel_label(k);
		add_note(in, xasprintf("kernel %s: %lld loads beyond --max-loads were not measured",
				       label, ck->left_out_loads));
		free(label);
	}
}

static void add_section(struct report_input *in, const char *key, const char *kernel,
			const char *origin, json_t *value,
			const struct capture_software_cache *sc, const struct capture_oracle *orc)
{
	size_t i;

	if (!value || json_is_null(value))
		return;
	for (i = 0; i < in->nr_sections; i++)
		if (!strcmp(in->sections[i].key, key) &&
		    !!in->sections[i].kernel == !!kernel &&
		    (!kernel || !strcmp(in->sections[i].kernel, kernel)) &&
		    json_equal(in->sections[i].value, value))
			return;
	in->sections = xrealloc(in->sections, (in->nr_sections + 1) * sizeof(*in->sections));
	in->sections[in->nr_sections++] = (struct report_section){ key, kernel, origin, value,
								    sc, orc };
}

static void collect_sections(struct report_input *in)
{
	const struct capture *cap = &in->model;
	size_t i, j;

	for (j = 0; j < ARRAY_SIZE(section_keys); j++) {
		const char *key = section_keys[j];

		if (!strcmp(key, "l2") && cap->has_l2)
			add_section(in, key, NULL, CAPTURE_LAYOUT_CAPTURE,
				    capture_section_json(cap->l2.source), NULL, NULL);
		if (!strcmp(key, "oracle") && cap->oracle)
			add_section(in, key, NULL, CAPTURE_LAYOUT_CAPTURE,
				    capture_section_json(cap->oracle->source), NULL, cap->oracle);
		add_section(in, key, NULL, CAPTURE_LAYOUT_PLAN, plan_extra_section(&in->plan, key), NULL,
			    NULL);
		for (i = 0; i < in->nr_kernels; i++) {
			const struct capture_kernel *ck = in->kernels[i].model;

			if (!strcmp(key, "software_cache") && ck->software_cache)
				add_section(in, key, ck->name, CAPTURE_LAYOUT_CAPTURE,
					    capture_section_json(ck->software_cache->source),
					    ck->software_cache, NULL);
			if (!strcmp(key, "register_cache") && ck->register_cache)
				add_section(in, key, ck->name, CAPTURE_LAYOUT_CAPTURE,
					    capture_section_json(ck->register_cache->source), NULL,
					    NULL);
			if (!strcmp(key, "oracle") && ck->oracle)
				add_section(in, key, ck->name, CAPTURE_LAYOUT_CAPTURE,
					    capture_section_json(ck->oracle->source), NULL, NULL);
		}
	}
}

static void collect_run_notes(struct report_input *in)
{
	size_t i;

	for (i = 0; i < in->model.nr_notes; i++)
		add_note(in, short_names(in->model.notes[i]));
	for (i = 0; i < in->model.nr_runs; i++) {
		const struct capture_run *r = &in->model.runs[i];
		const char *status = r->status, *variant = r->variant, *log = r->log;

		if (!status || !strcmp(status, "ok"))
			continue;
		add_note(in, xasprintf("run %zu (%s) %s%s%s", i, variant ? variant : "?", status,
				       log ? ": see " : "", log ? log : ""));
	}
}

/* The directory every absolute path of paths[] lies in ("/" at worst). */
static char *common_dir(const char *const *paths, size_t n)
{
	char *dir = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *p = paths[i];
		if (!p || p[0] != '/')
			continue;
		if (!dir) {
			const char *slash = strrchr(p, '/');
			dir = xstrndup(p, slash == p ? 1 : (size_t)(slash - p));
			continue;
		}
		while (strcmp(dir, "/") &&
		       !(strncmp(p, dir, strlen(dir)) == 0 && p[strlen(dir)] == '/')) {
			char *slash = strrchr(dir, '/');
			if (slash == dir)
				dir[1] = '\0';
			else
				*slash = '\0';
		}
	}
	return dir;
}

static void choose_roots(struct report_input *in, const struct report_input_options *opt)
{
	char *path = capture_layout_file(in->dir, CAPTURE_LAYOUT_SOURCES);
	const char *cwd = in->model.program.cwd;

	if (file_exists(path)) {
		struct sources_file sf;

		sources_file_init(&sf);
		if (!sources_file_load(&sf, path) && sf.root)
			in->source_root = xstrdup(sf.root);
		else
			add_note(in, xasprintf("'%s' is unreadable or invalid: ignored", path));
		sources_file_release(&sf);
		error_clear();
	}
	free(path);
	if (!in->source_root) {
		/* The directory that holds every source file with a load, system
		 * and toolkit headers aside: the program's own tree. */
		const char **files = NULL;
		size_t i, j, n = 0;

		for (i = 0; i < in->nr_kernels; i++)
			for (j = 0; j < in->kernels[i].nr_loads; j++) {
				const char *f = in->kernels[i].loads[j].file;
				if (!f || !strncmp(f, "/usr/", 5) || !strncmp(f, "/opt/", 5))
					continue;
				files = xrealloc(files, (n + 1) * sizeof(*files));
				files[n++] = f;
			}
		in->source_root = common_dir(files, n);
		free(files);
	}
	if (!in->source_root && cwd && cwd[0] == '/')
		in->source_root = xstrdup(cwd);
	if (in->source_root) {
		/* as the files under it are named (source_index: "k/./a.cu" is "k/a.cu") */
		char *norm = path_normalize(in->source_root);

		free(in->source_root);
		in->source_root = norm;
	}
	if (in->source_root && strlen(in->source_root) > 1 &&
	    in->source_root[strlen(in->source_root) - 1] == '/')
		in->source_root[strlen(in->source_root) - 1] = '\0';
	in->lookup_root = xstrdup(opt && opt->source_root ? opt->source_root :
				  in->source_root ? in->source_root : ".");
}

static int copy_plan(struct plan *dst, const struct plan *src)
{
	json_t *doc = plan_to_json(src);
	int ret = plan_from_json(dst, doc, "plan");

	json_decref(doc);
	return ret;
}

/* The loads of src, without its other sections (L2 windows, ...). */
static int copy_plan_loads(struct plan *dst, const struct plan *src)
{
	int ret = copy_plan(dst, src);

	if (dst->extra)
		json_object_clear(dst->extra);
	return ret;
}

static int check_module_files(struct report_input *in)
{
	size_t i;

	for (i = 0; i < in->model.nr_modules; i++) {
		const char *ptx = in->model.modules[i].ptx;
		char *path;
		int ok;

		if (!ptx)
			continue;
		if (ptx[0] == '/' || strstr(ptx, ".."))
			return error_set(CA_E_INPUT, "'%s/capture.json': modules[%zu].ptx '%s' is not "
					 "a path inside the capture directory", in->dir, i, ptx);
		path = xasprintf("%s/%s", in->dir, ptx);
		ok = file_exists(path);
		free(path);
		if (!ok)
			return error_set(CA_E_INPUT, "capture directory '%s' is missing '%s' (named "
					 "in capture.json): the capture is incomplete or was copied "
					 "in part; run cacheadvise profile again", in->dir, ptx);
	}
	return 0;
}

/* capture.json's modules without PTX (has_ptx false), and why. */
static void collect_no_ptx(struct report_input *in)
{
	const char *cc = in->model.device.cc;
	unsigned major = 0, minor = 0, arch = 90;
	size_t i;

	if (cc && sscanf(cc, "%u.%u", &major, &minor) == 2 && major && major < 100 && minor < 10)
		arch = major * 10 + minor;
	for (i = 0; i < in->model.nr_modules; i++) {
		const struct capture_module *m = &in->model.modules[i];
		struct report_module *rm;

		if (m->has_ptx)
			continue;
		in->no_ptx = xrealloc(in->no_ptx, (in->nr_no_ptx + 1) * sizeof(*in->no_ptx));
		rm = &in->no_ptx[in->nr_no_ptx++];
		rm->id = m->id;
		rm->origin = m->origin;
		rm->library = m->library;
		rm->reason = m->no_ptx_reason ? xstrdup(m->no_ptx_reason) :
			     xasprintf("no PTX, so nothing in it can be patched (the capture does "
				       "not record why): if it is the program's own code, rebuild "
				       "with -gencode arch=compute_%u,code=compute_%u (or "
				       "-arch=sm_%u, which embeds PTX)", arch, arch, arch);
		rm->kernels = (const char *const *)m->kernels;
		rm->nr_kernels = m->nr_kernels;
		rm->has_kernels = m->has_kernels;
		rm->gpu_time_ns = m->gpu_time_ns;
	}
}

static int build(struct report_input *in, const struct report_input_options *opt)
{
	size_t i;
	int ret;

	in->status = in->model.status ? in->model.status : "unknown";
	in->incomplete = strcmp(in->status, "complete") != 0;
	in->verification = in->model.has_verification ?
			   capture_section_json(in->model.verification.source) : NULL;
	ret = check_module_files(in);
	if (ret)
		return ret;
	in->nr_kernels = in->model.nr_kernels;
	in->kernels = xcalloc(in->nr_kernels + 1, sizeof(*in->kernels));
	for (i = 0; i < in->nr_kernels; i++)
		kernel_from_model(in, &in->model.kernels[i], &in->kernels[i]);
	if (in->model.has_device && in->model.device.source == DEVICE_MODEL_DEFAULTS)
		add_note(in, xstrdup("no device model was measured: documented defaults were used "
				     "(run cacheadvise probe once on this GPU)"));
	collect_run_notes(in);
	collect_sections(in);
	collect_no_ptx(in);
	choose_roots(in, opt);
	in->python = opt && opt->python ? xstrdup(opt->python) : NULL;
	source_hints_resolve(in);
	for (i = 0; i < in->nr_kernels; i++) {
		struct report_kernel *k = &in->kernels[i];
		size_t j;

		for (j = 0; j < k->nr_loads && !k->loads[j].file; j++)
			;
		if (j < k->nr_loads && inductor_generated(k->loads[j].file)) {
			k->generated_from = k->loads[j].file;
			k->provenance = inductor_provenance(k->loads[j].file);
		}
		rank_spread_compute(k->model, &k->ranks);
	}
	report_summary_init(&in->summary, in);
	return 0;
}

int report_input_analyse(const struct capture *cap, struct plan *plan, struct plan *source_plan,
			 struct analysis *analysis)
{
	struct advise_options ao;

	advise_options_init(&ao);
	if (cap->options.model && !strcmp(cap->options.model, "classic"))
		ao.model = ADVISE_MODEL_CLASSIC;
	return advise_capture(cap, &ao, plan, source_plan, analysis);
}

/* A --source-root that is not a directory is a mistake to refuse, not an
 * empty tree to rewrite nothing in (report --all would empty source.patch). */
static int check_source_root(const struct report_input_options *opt)
{
	struct stat st;

	if (!opt || !opt->source_root)
		return 0;
	if (stat(opt->source_root, &st) || !S_ISDIR(st.st_mode))
		return error_set(CA_E_INPUT, "the source root '%s' is not a directory: pass "
				 "--source-root with the directory the sources are in",
				 opt->source_root);
	return 0;
}

/*
 * in->source_plan: source-plan.json; where it is missing, the analysis'
 * (asplan, taken) when plan.json was missing too, else the plan's loads (a
 * capture written before source plans: its source patch wrote the plan).
 * asplan is released either way.
 */
static int load_source_plan(struct report_input *in, struct plan *asplan)
{
	char *path = capture_layout_file(in->dir, CAPTURE_LAYOUT_SOURCE_PLAN);
	struct stat st;
	int ret = 0;

	if (!lstat(path, &st)) {
		ret = plan_load_file(&in->source_plan, path);
	} else if (in->plan_from_analysis) {
		plan_release(&in->source_plan);
		in->source_plan = *asplan;
		plan_init(asplan);
	} else {
		ret = copy_plan_loads(&in->source_plan, &in->plan);
	}
	plan_release(asplan);
	free(path);
	return ret;
}

int report_input_load(struct report_input *in, const char *dir,
		      const struct report_input_options *opt)
{
	struct plan aplan, asplan;
	struct stat st;
	char *path = NULL;
	int ret;

	memset(in, 0, sizeof(*in));
	capture_init(&in->model);
	plan_init(&in->plan);
	plan_init(&in->source_plan);
	in->dir = xstrdup(dir);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return error_set(CA_E_INPUT, "'%s' is not a capture directory: %s", dir,
				 stat(dir, &st) ? strerror(errno) : "not a directory");
	ret = check_source_root(opt);
	if (ret)
		return ret;
	path = capture_layout_file(dir, CAPTURE_LAYOUT_CAPTURE);
	/* Only a file that is not there is "missing": a directory, a FIFO or
	 * permission denied is named by json_file_load (issue 16). */
	if (stat(path, &st) && errno == ENOENT) {
		ret = error_set(CA_E_INPUT, "'%s' is not a capture directory: capture.json is "
				"missing (cacheadvise profile writes one)", dir);
		goto out;
	}
	/* the one reader: a capture it refuses is refused here, naming the field */
	ret = capture_load_file(&in->model, path);
	if (ret)
		goto out;
	free(path);
	path = NULL;

	plan_init(&aplan);
	plan_init(&asplan);
	ret = report_input_analyse(&in->model, &aplan, &asplan, &in->own_analysis);
	if (!ret)
		in->analysis = &in->own_analysis;
	if (ret) {
		const char *st_s = in->model.status;

		if (!st_s || strcmp(st_s, "complete")) {
			add_note(in, xasprintf("the capture is incomplete and cannot be analysed: %s",
					       error_message()));
			error_clear();
		} else {
			plan_release(&aplan);
			plan_release(&asplan);
			ret = error_prefix(CA_E_INPUT, "cannot analyse '%s/capture.json'", dir);
			goto out;
		}
	}
	path = capture_layout_file(dir, CAPTURE_LAYOUT_PLAN);
	/* a plan.json that is there but no file (a directory, a FIFO) is named
	 * as such by its reader, never called missing */
	if (!lstat(path, &st)) {
		plan_release(&aplan);
		ret = plan_load_file(&in->plan, path);
		if (ret) {
			plan_release(&asplan);
			goto out;
		}
	} else {
		plan_release(&in->plan);
		in->plan = aplan;
		in->plan_from_analysis = 1;
		add_note(in, xstrdup("plan.json is missing: the plan shown is recomputed from "
				     CAPTURE_LAYOUT_CAPTURE));
	}
	ret = load_source_plan(in, &asplan);
	if (!ret)
		ret = build(in, opt);
out:
	free(path);
	return ret;
}

int report_input_init_from(struct report_input *in, const char *dir, json_t *capture,
			   const struct analysis *analysis, const struct plan *plan,
			   const struct plan *source_plan, const struct report_input_options *opt)
{
	int ret;

	memset(in, 0, sizeof(*in));
	capture_init(&in->model);
	plan_init(&in->plan);
	plan_init(&in->source_plan);
	in->dir = xstrdup(dir);
	ret = check_source_root(opt);
	if (ret)
		return ret;
	if (!json_is_object(capture))
		return error_set(CA_E_INPUT, "capture of '%s' is not a JSON object", dir);
	ret = json_check_schema(capture, CAPTURE_LAYOUT_CAPTURE, CAPTURE_SCHEMA);
	if (!ret)
		ret = capture_from_json(&in->model, capture, CAPTURE_LAYOUT_CAPTURE);
	if (ret)
		return ret;
	in->analysis = analysis;
	if (plan && (ret = copy_plan(&in->plan, plan)))
		return ret;
	if (source_plan || plan)
		ret = copy_plan_loads(&in->source_plan, source_plan ? source_plan : plan);
	if (ret)
		return ret;
	return build(in, opt);
}

void report_input_release(struct report_input *in)
{
	size_t i, j;

	report_summary_release(&in->summary);
	for (i = 0; i < in->nr_kernels; i++) {
		for (j = 0; j < in->kernels[i].nr_loads; j++)
			source_hint_release(&in->kernels[i].loads[j].hint);
		free(in->kernels[i].loads);
		for (j = 0; j < in->kernels[i].nr_async_copies; j++)
			free(in->kernels[i].async_copies[j].file);
		free(in->kernels[i].async_copies);
		free(in->kernels[i].provenance);
		rank_spread_release(&in->kernels[i].ranks);
	}
	free(in->kernels);
	for (i = 0; i < in->nr_sources; i++) {
		free(in->sources[i].path);
		free(in->sources[i].read_path);
		free(in->sources[i].recorded);
		source_file_free(in->sources[i].file);
	}
	free(in->sources);
	for (i = 0; i < in->nr_notes; i++)
		free(in->notes[i]);
	free(in->notes);
	free(in->sections);
	for (i = 0; i < in->nr_no_ptx; i++)
		free(in->no_ptx[i].reason);
	free(in->no_ptx);
	free(in->source_root);
	free(in->lookup_root);
	free(in->python);
	plan_release(&in->plan);
	plan_release(&in->source_plan);
	analysis_release(&in->own_analysis);
	capture_release(&in->model);
	free(in->dir);
	memset(in, 0, sizeof(*in));
}

int report_load_plan_only(const struct report_load *l)
{
	return l->changes && (!l->patch_action || strcmp(l->action, l->patch_action));
}

int report_load_no_triton_form(const struct report_load *l)
{
	enum load_action a;
	enum l2_priority l2;

	return l->action && load_sites_is_python(l->file) &&
	       !load_form_parse(l->action, &a, &l2) && !load_sites_triton_form(a, l2, NULL, NULL);
}

int report_softcache_selected(const struct capture_software_cache *sc,
			      const struct capture_softcache_candidate *cand)
{
	size_t i;

	if (cand->selected >= 0 || !sc->has_selected)
		return cand->selected;
	for (i = 0; i < sc->nr_selected; i++)
		if (sc->selected[i] == cand->param)
			return 1;
	return 0;
}
