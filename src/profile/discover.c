/*
 * `profile`'s discovery step: the first run under the injection library
 * saves every module's PTX and times the program's own cubins; the modules
 * move to modules/<id>.ptx and the busiest kernels are chosen to measure,
 * with the loads to measure in each (analysis/load_choice.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/load_choice.h"
#include "analysis/load_sites.h"
#include "analysis/monitor_counts.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "collectors/intake.h"
#include "src/profile/internal.h"

static struct profile_module *find_module(struct profile_ctx *c, const char *id)
{
	size_t i;

	for (i = 0; id && i < c->nr_modules; i++)
		if (!strcmp(c->modules[i].id, id))
			return &c->modules[i];
	return NULL;
}

/*
 * The library a module without PTX comes from, told by its kernels' names
 * (NVIDIA's libraries and PyTorch ship cubin only); NULL: none known, most
 * likely the program's own code built without PTX.
 */
static const char *library_of(const char *const *names, size_t n)
{
	static const struct { const char *part, *library; } libs[] = {
		{ "cublasLt", "cuBLASLt" }, { "cublas", "cuBLAS" }, { "xmma_", "cuBLAS" },
		{ "cudnn", "cuDNN" }, { "cufft", "cuFFT" }, { "curand", "cuRAND" },
		{ "cusparse", "cuSPARSE" }, { "cusolver", "cuSOLVER" }, { "nccl", "NCCL" },
		{ "_ZN2at6native", "PyTorch" }, { "_ZN2at4cuda", "PyTorch" }, { "_ZN3c10", "PyTorch" },
	};
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < ARRAY_SIZE(libs); j++)
			if (strcasestr(names[i], libs[j].part))
				return libs[j].library;
	return NULL;
}

/*
 * Records in capture.json why a module has no PTX and what would make it
 * patchable, with the kernels the program launched from it and their GPU
 * time, so that reports list it (issue 14).
 */
static void describe_no_ptx(struct profile_ctx *c, struct profile_module *m,
			    const struct run_events *ev)
{
	json_t *mj = m->json;
	const char *id = m->id;
	const char **names = xcalloc(ev->nr_kernels + 1, sizeof(*names));
	json_t *kernels = json_array();
	unsigned arch = 90, major = 0, minor = 0;
	uint64_t ns = 0;
	const char *library, *path = m->load_path;
	size_t i, n = 0;

	if (c->dm.cc && sscanf(c->dm.cc, "%u.%u", &major, &minor) == 2 && major && major < 100 &&
	    minor < 10)
		arch = major * 10 + minor;
	for (i = 0; i < ev->nr_kernels; i++) {
		if (!ev->kernels[i].module || strcmp(ev->kernels[i].module, id))
			continue;
		names[n++] = ev->kernels[i].name;
		json_array_append_new(kernels, json_string(ev->kernels[i].name));
		ns += ev->kernels[i].gpu_time_ns;
	}
	library = m->library = library_of(names, n);
	json_object_set_new(mj, "library", library ? json_string(library) : json_null());
	if (library) {
		json_object_set_new(mj, "no_ptx_reason", json_sprintf(
			"a library shipped as cubin (%s): not patchable; L2 windows and carve-out "
			"checks still apply", library));
	} else if (path) {
		/* a cubin file loaded at run time: JIT-compiled by a framework
		 * (Triton, torch.compile), not a build the user can change */
		char *why = intake_cubin_file_reason(path);

		json_object_set_new(mj, "no_ptx_reason", json_string(why));
		free(why);
	} else {
		json_object_set_new(mj, "no_ptx_reason", json_sprintf(
			"built without PTX for sm_%u: rebuild with -gencode arch=compute_%u,"
			"code=compute_%u (or -arch=sm_%u, which embeds PTX); device code linked "
			"with -rdc=true has none either: build without -rdc=true",
			arch, arch, arch, arch));
	}
	json_object_set_new(mj, "kernels", kernels);
	json_object_set_new(mj, "gpu_time_ns", json_integer((json_int_t)ns));
	free(names);
}

int profile_adopt_module(struct profile_ctx *c, const struct event_module *em, const char *seen_dir)
{
	struct profile_module *m;
	char *from, *to;
	struct strbuf sb = STRBUF_INIT;
	int ret = 0;

	if (find_module(c, em->id))
		return 0;
	c->modules = xrealloc(c->modules, (c->nr_modules + 1) * sizeof(*c->modules));
	m = &c->modules[c->nr_modules++];
	memset(m, 0, sizeof(*m));
	m->id = xstrdup(em->id);
	m->origin = em->origin ? xstrdup(em->origin) : NULL;
	m->has_ptx = em->has_ptx;
	m->load_path = em->path ? xstrdup(em->path) : NULL;
	m->json = json_pack("{s:s, s:s?, s:b, s:s?, s:s?, s:O?}", "id", em->id, "origin", em->origin,
			    "has_ptx", em->has_ptx, "path", em->path, "ptx_file", em->ptx_file,
			    "triton", em->triton);
	json_array_append_new(c->modules_json, m->json);
	if (!em->has_ptx)
		return 0;
	from = capture_layout_subst_ptx(seen_dir, em->id);
	to = capture_layout_module_ptx(c->dir, em->id);
	if (rename(from, to) && errno != ENOENT) {
		ret = error_set(CA_E_IO, "cannot move '%s' to '%s': %s", from, to, strerror(errno));
		goto out;
	}
	ret = strbuf_read_file(&sb, to, 0);
	if (ret) {
		error_prefix(ret, "module %s (%s) was seen but its PTX was not saved", em->id,
			     em->origin ? em->origin : "?");
		goto out;
	}
	ret = ptx_parse(to, sb.buf, sb.len, &m->pm);
	if (ret) {
		/* Unusual PTX: keep going without this module's kernels. */
		profile_note(c, "module %s: its PTX could not be parsed, its kernels are not measured: %s",
			     em->id, error_message());
		ret = 0;
		goto out;
	}
	m->path = realpath(to, NULL);
	{
		char *rel = capture_layout_module_ptx(NULL, em->id);
		json_object_set_new(m->json, "ptx", json_string(rel));
		free(rel);
		json_object_set_new(m->json, "arch", json_string(m->pm->target));
	}
out:
	strbuf_release(&sb);
	free(from);
	free(to);
	return ret;
}

static int by_rank(const void *a, const void *b)
{
	const struct profile_job_rank *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int by_gpu_time(const void *a, const void *b)
{
	const struct event_kernel *x = *(const struct event_kernel *const *)a;
	const struct event_kernel *y = *(const struct event_kernel *const *)b;

	if (x->gpu_time_ns != y->gpu_time_ns)
		return x->gpu_time_ns < y->gpu_time_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The source site of each of k's patchable loads (load_choice_pick's
 * site[]; caller frees). */
static size_t *patchable_sites(const struct profile_kernel *k)
{
	size_t *site = xcalloc(k->vk.nr_patchable + 1, sizeof(*site));

	load_sites_group_ptx(k->fn, k->vk.patchable, k->vk.nr_patchable, site);
	return site;
}

int profile_take_kernel(struct profile_ctx *c, struct event_kernel *ek, const struct run_events *ev)
{
	struct profile_module *m = find_module(c, ek->module);
	const struct ptx_function *fn = m && m->pm ? ptx_module_find(m->pm, ek->name) : NULL;
	struct profile_kernel *k;
	struct load_choice lc;
	size_t i, n, *site;

	if (!fn) {
		profile_note(c, "kernel %s: %s, so its loads cannot be measured", ek->name,
		     !m ? "its module is unknown" : !m->pm ? "its module has no PTX (see the module's "
		     "no_ptx_reason in capture.json and the report)" : "not found in its module's PTX");
		return 0;
	}
	c->kernels = xrealloc(c->kernels, (c->nr_kernels + 1) * sizeof(*c->kernels));
	k = &c->kernels[c->nr_kernels++];
	memset(k, 0, sizeof(*k));
	k->name = xstrdup(ek->name);
	k->module = m;
	k->fn = fn;
	k->allocs_used = run_events_allocs_used(ev, ek->name);
	k->launches_per_process = run_events_launches_per_process(ev, ek->name);
	if (!k->launches_per_process)   /* ek is not among ev's kernels */
		k->launches_per_process = ek->launches;
	k->disc = *ek;
	memset(ek, 0, sizeof(*ek)); /* ownership moves to k->disc */
	k->vk.module_id = xstrdup(m->id);
	k->vk.function = xstrdup(fn->name);
	k->vk.patchable = xcalloc(fn->nr_loads + 1, sizeof(unsigned));
	k->vk.measured = xcalloc(fn->nr_loads + 1, sizeof(unsigned));
	for (i = 0; i < fn->nr_loads; i++)
		if (fn->loads[i].patchable)
			k->vk.patchable[k->vk.nr_patchable++] = fn->loads[i].ordinal;
	/* the first in the text, one of every source site before a second of any;
	 * profile_choose_measured_loads() may pick the busiest */
	site = patchable_sites(k);
	load_choice_pick(k->vk.patchable, NULL, site, k->vk.nr_patchable, c->opt->max_loads,
			 k->vk.measured, &lc);
	free(site);
	k->vk.nr_measured = lc.nr_measured;
	k->left_out = lc.left_out;
	n = k->vk.nr_measured;
	k->counters = json_object();
	k->hit = xcalloc(n + 1, sizeof(double));
	k->hit_run = xcalloc(n + 1, sizeof(int));
	k->pair_hit = xcalloc(n * n + 1, sizeof(double));
	k->pair_run = xcalloc(n * n + 1, sizeof(int));
	k->pair_noise = xcalloc(n * n + 1, sizeof(double));
	for (i = 0; i < n; i++) {
		k->hit[i] = NAN;
		k->hit_run[i] = -1;
	}
	for (i = 0; i < n * n; i++) {
		k->pair_hit[i] = NAN;
		k->pair_run[i] = -1;
		k->pair_noise[i] = NAN;
	}
	return 1;
}

/*
 * For kernels with more patchable loads than --max-loads: the loads to
 * measure are, one source site after another, the ones with the most
 * sector traffic in the monitor run (profile_monitor() before the variant
 * runs; analysis/load_choice.h), not the first ones in the text. Without
 * monitor counts the text order stays. Notes what was left out and how
 * much of the kernel's traffic that is.
 */
void profile_choose_measured_loads(struct profile_ctx *c)
{
	size_t i, j, l;

	for (i = 0; i < c->nr_kernels; i++) {
		struct profile_kernel *k = &c->kernels[i];
		struct monitor_counts mc;
		const struct monitor_function *mf = NULL;
		struct load_choice lc;
		uint64_t *sectors;
		size_t *site;

		if (!k->left_out)
			continue;
		monitor_counts_init(&mc);
		if (k->layout && !monitor_counts_read(&mc, k->layout, k->mon, k->nr_mon))
			mf = monitor_counts_find(&mc, k->vk.function);
		if (!mf) {
			profile_note(c, "kernel %s: %zu patchable loads beyond --max-loads %u are not measured; "
			     "without monitor counts (--no-monitor, or the monitor run failed) the first %zu "
			     "in the PTX were chosen; the others stay L1::no_allocate in the variants and "
			     "keep their form in the advice", k->name, k->left_out, c->opt->max_loads,
			     k->vk.nr_measured);
			monitor_counts_release(&mc);
			continue;
		}
		sectors = xcalloc(k->vk.nr_patchable + 1, sizeof(*sectors));
		for (j = 0; j < k->vk.nr_patchable; j++)
			for (l = 0; l < mf->nr_loads; l++)
				if (mf->loads[l].ordinal == k->vk.patchable[j])
					sectors[j] = mf->loads[l].sectors;
		site = patchable_sites(k);
		load_choice_pick(k->vk.patchable, sectors, site, k->vk.nr_patchable,
				 c->opt->max_loads, k->vk.measured, &lc);
		free(site);
		profile_note(c, "kernel %s: %zu patchable loads beyond --max-loads %u are not measured; the %zu "
		     "measured are one load of every source site first, then more, each site's busiest "
		     "in the monitor run first (%.1f%% of the "
		     "kernel's load sectors); the others stay L1::no_allocate in the variants and keep "
		     "their form in the advice", k->name, k->left_out, c->opt->max_loads,
		     k->vk.nr_measured, lc.total_sectors ? 100.0 * (double)lc.kept_sectors /
		     (double)lc.total_sectors : 0.0);
		free(sectors);
		monitor_counts_release(&mc);
	}
}

int profile_discover(struct profile_ctx *c)
{
	const struct run_request req = { .save_modules = 1, .timing = 1 };
	struct run_events ev;
	struct run_result res;
	struct event_kernel **order = NULL;
	regex_t re;
	int ret, have_re = 0;
	size_t i, taken = 0;
	double total_ns = 0;
	char *seen;

	run_events_init(&ev);
	profile_progress(c, "discovery run");
	ret = profile_run_program(c, "discovery", &req, &ev, &res, NULL);
	if (ret)
		goto out;
	if (res.status == RUN_INTERRUPTED) {
		ret = error_set(CA_E_INTERRUPTED, "interrupted during the discovery run");
		goto out;
	}
	if (res.status != RUN_OK) {
		ret = profile_run_failed(c, "discovery", &res);
		goto out;
	}
	if (!ev.saw_start) {
		profile_note(c, "the program never initialised CUDA: no kernel to measure");
		profile_message(c, "'%s' never initialised CUDA, so there is nothing "
			"to measure (is it a CUDA program? is it statically linked against an old "
			"cudart?)", c->opt->argv[0]);
		goto out;
	}
	if (ev.nr_ranks) {
		/* an MPI or Slurm job: the ranks whose events were read (issue 29) */
		json_t *ranks = json_array();

		for (i = 0; i < ev.nr_ranks; i++)
			json_array_append_new(ranks, json_integer(ev.ranks[i]));
		json_object_set_new(c->capture, "ranks", json_pack("{s:s, s:o, s:s}", "measured",
			c->ranks ? c->ranks : "all", "seen", ranks, "merged",
			"the measured ranks' counters are summed per kernel (SPMD)"));
		/* each rank's GPU: ranks that share one are measured in turns */
		c->job_ranks = xcalloc(ev.nr_rank_events + 1, sizeof(*c->job_ranks));
		for (i = 0; i < ev.nr_rank_events; i++) {
			const struct run_events_rank *r = &ev.rank_events[i];

			c->job_ranks[c->nr_job_ranks].rank = r->rank;
			c->job_ranks[c->nr_job_ranks++].gpu = r->ev->gpu ? xstrdup(r->ev->gpu) : NULL;
		}
		qsort(c->job_ranks, c->nr_job_ranks, sizeof(*c->job_ranks), by_rank);
	}
	{
		char *evdir = capture_layout_run_events_dir(c->dir, 0);
		seen = run_request_seen_dir(evdir);
		free(evdir);
	}
	for (i = 0; i < ev.nr_modules && !ret; i++)
		ret = profile_adopt_module(c, &ev.modules[i], seen);
	free(seen);
	for (i = 0; i < c->nr_modules; i++)
		if (!c->modules[i].has_ptx)
			describe_no_ptx(c, &c->modules[i], &ev);
	if (ret)
		goto out;
	json_object_set(c->capture, "allocations", ev.allocations);
	if (!ev.launches) {
		profile_note(c, "the program launched no kernel");
		profile_message(c, "'%s' launched no CUDA kernel: nothing to measure", c->opt->argv[0]);
		goto out;
	}
	if (c->opt->kernels_regex) {
		if (regcomp(&re, c->opt->kernels_regex, REG_EXTENDED | REG_NOSUB)) {
			ret = error_set(CA_E_USAGE, "--kernels '%s' is not a valid regular expression",
					c->opt->kernels_regex);
			goto out;
		}
		have_re = 1;
	}
	order = xcalloc(ev.nr_kernels + 1, sizeof(*order));
	for (i = 0; i < ev.nr_kernels; i++)
		order[i] = &ev.kernels[i];
	qsort(order, ev.nr_kernels, sizeof(*order), by_gpu_time);
	{
		json_t *all = json_array();
		/* allocs_used for every kernel, with PTX or not: the L2 advice needs no PTX */
		c->launched = xcalloc(ev.nr_kernels + 1, sizeof(*c->launched));
		for (i = 0; i < ev.nr_kernels; i++) {
			json_array_append_new(all, json_pack("{s:s, s:i, s:I, s:o}", "name",
				order[i]->name, "launches", order[i]->launches, "gpu_time_ns",
				(json_int_t)order[i]->gpu_time_ns, "allocs_used",
				run_events_allocs_used(&ev, order[i]->name)));
			c->launched[c->nr_launched].name = xstrdup(order[i]->name);
			c->launched[c->nr_launched++].launches = order[i]->launches;
		}
		json_object_set_new(c->capture, "all_kernels", all);
	}
	for (i = 0; i < ev.nr_kernels; i++)
		total_ns += (double)order[i]->gpu_time_ns;
	for (i = 0; i < ev.nr_kernels; i++) {
		double share = total_ns > 0 ? 100.0 * (double)order[i]->gpu_time_ns / total_ns : 100;

		if (have_re && regexec(&re, order[i]->name, 0, NULL, 0))
			continue;
		/* advice on a kernel this small cannot move the program's time
		 * beyond noise, and measuring it costs as much as a big one */
		if (!have_re && share < c->opt->min_share) {
			profile_note(c, "kernel %s (%.3f ms, %.2f%% of the kernels' GPU time) is not "
				     "measured: under --min-share %g%%", order[i]->name,
				     order[i]->gpu_time_ns / 1e6, share, c->opt->min_share);
			continue;
		}
		if (taken >= c->opt->top) {
			profile_note(c, "kernel %s (%.3f ms) is not measured: beyond --top %u", order[i]->name,
			     order[i]->gpu_time_ns / 1e6, c->opt->top);
			continue;
		}
		/* --top counts the kernels that can be measured: a library's cubin-only
		 * kernels (cuBLAS, PyTorch) do not take the places of the program's own */
		taken += profile_take_kernel(c, order[i], &ev);
	}
	if (have_re && !taken)
		profile_note(c, "no kernel matches --kernels '%s'", c->opt->kernels_regex);
	if (!c->nr_kernels)
		profile_message(c, "no kernel of '%s' can be measured (see the "
			"notes in capture.json)", c->opt->argv[0]);
out:
	if (have_re)
		regfree(&re);
	free(order);
	run_events_release(&ev);
	return ret;
}
