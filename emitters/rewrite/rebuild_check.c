#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/ptx.h"
#include "analysis/rebuild_match.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "emitters/rewrite/python_rewrite.h"
#include "emitters/rewrite/rebuild_check.h"
#include "emitters/report.h"

int rebuild_input_load(struct rebuild_input *ri, const char *dir, const char *program,
		       const char *source_root, const char *python)
{
	struct report_input_options iopt = { source_root, python };
	char *patch_path = capture_layout_file(dir, CAPTURE_LAYOUT_SOURCE_PATCH);
	int ret;

	memset(ri, 0, sizeof(*ri));
	intake_init(&ri->rb);
	strbuf_init(&ri->diff, 0);
	strbuf_init(&ri->notes, 0);
	sources_file_init(&ri->written);
	{
		char *path = capture_layout_file(dir, CAPTURE_LAYOUT_SOURCES);

		if (!access(path, R_OK) && sources_file_load(&ri->written, path)) {
			sources_file_release(&ri->written);
			error_clear();
		}
		free(path);
	}
	ret = report_input_load(&ri->in, dir, &iopt);
	if (!ret)
		ret = report_check_input(&ri->in);
	if (ret)
		goto out;
	if (access(patch_path, R_OK) || strbuf_read_file(&ri->diff, patch_path, 0)) {
		error_clear();
		ri->no_patch = 1;
	}
	/* a Python program: its Triton kernels (rebuild_input_read_triton) */
	ri->python = python_program(program);
	if (!ri->python)
		ret = intake_read_file(&ri->rb, program, 0);
out:
	free(patch_path);
	return ret;
}

void rebuild_input_release(struct rebuild_input *ri)
{
	intake_release(&ri->rb);
	report_input_release(&ri->in);
	strbuf_release(&ri->diff);
	strbuf_release(&ri->notes);
	sources_file_release(&ri->written);
}

int rebuild_input_run_triton(struct rebuild_input *ri, const struct rebuild_timing_options *run,
			     char **tmp_left)
{
	struct run_events loaded;
	size_t n;
	int ret = 0, have = 0;

	*tmp_left = NULL;
	free((void *)rebuild_changed_kernels(&ri->in, &n));
	run_events_init(&loaded);
	if (n && run) {
		ret = rebuild_timing_loaded(run, &loaded, tmp_left);
		have = !ret;
		if (ret == CA_E_NOGPU) {
			error_clear();
			ret = 0;
		}
	}
	if (!ret)
		ret = rebuild_input_read_triton(ri, have ? &loaded : NULL);
	run_events_release(&loaded);
	return ret;
}

void rebuild_check_timed_text(const struct report_input *in, const struct rebuild_timing *tr,
			      const struct rebuild_timing_options *t, struct strbuf *out)
{
	double ps = tr->program_speedup, want = report_program_speedup(in);
	size_t i;

	strbuf_addf(out, "\nTIMED CHECK (%u alternating rounds: the original program %s, then "
		    "the rebuilt program as built)\n", t->repeat, t->baseline_as_built ?
		    "as built" : "with the capture's unpatched PTX");
	for (i = 0; i < tr->nr_kernels; i++) {
		const struct rebuild_timing_kernel *k = &tr->kernels[i];
		struct strbuf name = STRBUF_INIT;

		strbuf_add_printable(&name, k->name);    /* the capture's */
		strbuf_addf(out, "  %-40s %.3fx median kernel speedup, baseline spread %.1f%%: %s\n",
			    name.buf, k->median, 100.0 * k->noise, k->kept ? "kept" : "lost");
		strbuf_addf(out, "RESULT kernel=%s rebuilt_speedup=%.4f kept=%d\n", name.buf,
			    k->median, k->kept);
		strbuf_release(&name);
	}
	if (tr->launches_differ) {
		struct strbuf name = STRBUF_INIT;

		strbuf_add_printable(&name, tr->launches_differ);
		strbuf_addf(out, "  the original program launched %s %u times a run, the rebuilt "
			    "one %u times: they did different work (give both the same "
			    "arguments: --baseline 'PROGRAM ARGS...'); the kernel figures "
			    "above compare the mean launch, the program's GPU time is not "
			    "compared\n", name.buf, tr->base_launches, tr->rebuilt_launches);
		strbuf_release(&name);
	} else {
		strbuf_addf(out, "  program GPU time: %.3fx (advice via run --plan, verified: "
			    "%.3fx)%s\n", ps, want, isnan(want) || isnan(ps) ? "" :
			    ps >= 0.95 * want ? ": the rebuilt program delivers it" :
			    ": the rebuilt program falls short of it");
	}
	strbuf_addf(out, "RESULT program rebuilt_speedup=%.4f plan_speedup=%.4f kept=%d\n", ps,
		    want, tr->kept);
}

const char **rebuild_changed_kernels(const struct report_input *in, size_t *nr)
{
	const char **kernels = NULL;
	size_t i, n = 0;

	for (i = 0; i < in->nr_kernels; i++) {
		if (!in->kernels[i].nr_patch_changes)
			continue;
		kernels = xrealloc(kernels, (n + 1) * sizeof(*kernels));
		kernels[n++] = in->kernels[i].name;
	}
	*nr = n;
	return kernels;
}

/* The capture's PTX of module id, parsed (caller frees), or NULL. */
static struct ptx_module *capture_module(const struct report_input *in, const char *id)
{
	const struct capture_module *m = capture_find_module(&in->model, id);
	struct ptx_module *pm = NULL;

	if (m && m->ptx) {
		struct strbuf sb = STRBUF_INIT;
		char *path = xasprintf("%s/%s", in->dir, m->ptx);

		if (!strbuf_read_file(&sb, path, 0) && ptx_parse(path, sb.buf, sb.len, &pm))
			pm = NULL;
		error_clear();
		strbuf_release(&sb);
		free(path);
	}
	return pm;
}

static const struct ptx_function *rebuilt_function(const struct intake *rb, const char *name,
						   const struct ptx_module **module)
{
	size_t i;

	*module = NULL;
	for (i = 0; i < rb->nr_modules; i++) {
		const struct ptx_function *f = rb->modules[i].ptx ?
			ptx_module_find(rb->modules[i].ptx, name) : NULL;
		if (f) {
			*module = rb->modules[i].ptx;
			return f;
		}
	}
	return NULL;
}

/* Whether the check looks for l: a load whose form the plan changes, its
 * action parsed into action and l2. */
static int advised_load(const struct report_load *l, enum load_action *action,
			enum l2_priority *l2)
{
	return l->patch_changes && l->patch_action &&
	       !load_form_parse(l->patch_action, action, l2);
}

/* Whether source.patch rewrites l: by its hint (the sources as they were
 * read), or the patch itself (sources already patched no longer read the
 * parameter directly). */
static int load_in_patch(const struct rebuild_input *ri, const struct report_load *l)
{
	const char *diff = ri->diff.len ? ri->diff.buf : NULL;

	return l->hint.status == SOURCE_HINT_REWRITTEN ||
	       (diff && l->file && l->line > 0 &&
		rebuild_diff_replaces_line(diff, l->file, (size_t)l->line));
}

/* ---- which compile of a Triton kernel the rebuilt program runs ---------- */

/*
 * How many of kernel's advised loads that source.patch rewrites rb carries
 * in the advised form; *of gets how many there are.
 */
static size_t forms_carried(const struct rebuild_input *ri, const char *kernel,
			    const struct intake *rb, size_t *of)
{
	const char *diff = ri->diff.len ? ri->diff.buf : NULL;
	size_t i, j, carried = 0;

	*of = 0;
	for (i = 0; i < ri->in.nr_kernels; i++) {
		const struct report_kernel *k = &ri->in.kernels[i];
		const struct ptx_module *rm;
		const struct ptx_function *fr, *fo;
		struct ptx_module *om;

		if (!k->nr_patch_changes || strcmp(k->name, kernel))
			continue;
		fr = rebuilt_function(rb, kernel, &rm);
		om = capture_module(&ri->in, k->module);
		fo = om ? ptx_module_find(om, kernel) : NULL;
		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];
			struct rebuild_check c;
			enum load_action action;
			enum l2_priority l2;

			if (!advised_load(l, &action, &l2) || !load_in_patch(ri, l))
				continue;
			(*of)++;
			if (!fr || !fo)
				continue;
			rebuild_match_load(fo, l->ordinal, rm, fr, diff, action, l2, &c);
			carried += c.status == REBUILD_FOUND;
		}
		ptx_module_free(om);
	}
	return carried;
}

/*
 * The module id of the kernel a run of the rebuilt program launched, or NULL.
 * NEEDSWORK: a kernel Triton compiled in several specializations is launched
 * from several modules; the events keep the module of its first launch.
 */
static const char *loaded_module(const struct run_events *loaded, const char *kernel)
{
	size_t i;

	for (i = 0; i < loaded->nr_kernels; i++)
		if (loaded->kernels[i].name && !strcmp(loaded->kernels[i].name, kernel))
			return loaded->kernels[i].module;
	return NULL;
}

/* Whether the file at path is the one module id, as the intake reads it
 * (the injection library identifies a loaded cubin the same way). */
static int compile_is(const char *path, const char *id)
{
	struct intake in;
	int same;

	intake_init(&in);
	same = !intake_read_file(&in, path, 0) && in.nr_modules == 1 &&
	       !strcmp(in.modules[0].id, id);
	error_clear();
	intake_release(&in);
	return same;
}

/*
 * Of compiles (Triton's cache, newest first), the one the rebuilt program
 * loaded for kernel: the module its run launched the kernel from (loaded),
 * found by identity (its cubin's bytes, as the module id says), not by
 * time. NULL, with a note saying why, when the run did not launch it or
 * loaded a module the cache does not hold.
 */
static const char *loaded_compile(struct rebuild_input *ri, const char *kernel,
				  char **compiles, size_t n, const struct run_events *loaded)
{
	const char *id = loaded_module(loaded, kernel);
	size_t i;

	if (!id) {
		strbuf_addf(&ri->notes, "  %s: the rebuilt program did not launch it when run "
			    "once under cacheadvise\n", kernel);
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (compile_is(compiles[i], id)) {
			strbuf_addf(&ri->notes, "  %s: reading '%s', the compile the rebuilt "
				    "program loaded (module %s)\n", kernel, compiles[i], id);
			return compiles[i];
		}
	strbuf_addf(&ri->notes, "  %s: the rebuilt program loaded module %s, which none of "
		    "the %zu compile%s of it in Triton's cache is\n", kernel, id, n,
		    n == 1 ? "" : "s");
	return NULL;
}

/*
 * Of several compiles (newest first) and no run to tell, the one that
 * carries every advised form of kernel the patch writes: compiled from the
 * patched source. Several that do check alike; where none does, which one
 * the program loads cannot be told, and the note says so, naming them and
 * how to make it plain. Returns the one chosen (the newest of a tie).
 */
static const char *compile_with_forms(struct rebuild_input *ri, const char *kernel,
				      char **compiles, size_t n)
{
	const char *found = NULL;
	size_t i, nr_found = 0, of = 0;

	for (i = 0; i < n; i++) {
		struct intake rb;
		size_t carried = 0;

		intake_init(&rb);
		if (!intake_read_file(&rb, compiles[i], 0))
			carried = forms_carried(ri, kernel, &rb, &of);
		if (of && carried == of && !nr_found++)
			found = compiles[i];
		error_clear();
		intake_release(&rb);
	}
	if (!of)
		return compiles[0];     /* no load to tell them by: they check alike */
	if (nr_found == 1)
		strbuf_addf(&ri->notes, "  %s: reading '%s', the one of its %zu compiles in "
			    "Triton's cache that carries the advised forms\n", kernel, found, n);
	else if (nr_found)
		strbuf_addf(&ri->notes, "  %s: %zu of its %zu compiles in Triton's cache carry "
			    "the advised forms and check alike; reading the newest of them, '%s'\n",
			    kernel, nr_found, n, found);
	if (found)
		return found;
	strbuf_addf(&ri->notes, "  %s: cannot tell which of its %zu compiles in Triton's cache "
		    "the rebuilt program loads (none carries the advised forms):", kernel, n);
	for (i = 0; i < n; i++)
		strbuf_addf(&ri->notes, "%s '%s'%s", i ? "," : "", compiles[i],
			    i ? "" : " (the newest, read here)");
	strbuf_addf(&ri->notes, "; run check without --static, which runs the program once "
		    "and reads the compile it loaded, or rerun the program with TRITON_CACHE_DIR "
		    "set to an empty folder and check with that TRITON_CACHE_DIR\n");
	return compiles[0];
}

/*
 * Reads into ri->rb the compile of kernel in Triton's cache that the
 * rebuilt program runs: the one a run of it loaded (loaded, NULL without
 * a run), else the only one, else the one with the advised forms.
 */
static int read_triton_kernel(struct rebuild_input *ri, const char *kernel,
			      const struct run_events *loaded)
{
	size_t n;
	char **compiles = intake_triton_compiles(kernel, &n);
	const char *path = NULL;
	int ret = 0;

	if (loaded)
		path = loaded_compile(ri, kernel, compiles, n, loaded);
	if (!path && n)
		path = n == 1 ? compiles[0] : compile_with_forms(ri, kernel, compiles, n);
	if (path)
		ret = intake_read_file(&ri->rb, path, 0);
	intake_triton_compiles_free(compiles);
	return ret;
}

int rebuild_input_read_triton(struct rebuild_input *ri, const struct run_events *loaded)
{
	size_t n, i;
	const char **kernels = rebuild_changed_kernels(&ri->in, &n);
	int ret = 0;

	for (i = 0; !ret && i < n; i++)
		ret = read_triton_kernel(ri, kernels[i], loaded);
	free((void *)kernels);
	return ret;
}

void rebuild_check_static(const struct rebuild_input *ri, struct rebuild_check_counts *sr,
			  struct strbuf *out)
{
	const struct report_input *in = &ri->in;
	const struct intake *rb = &ri->rb;
	const char *diff = ri->diff.len ? ri->diff.buf : NULL;
	size_t i, j;

	memset(sr, 0, sizeof(*sr));
	strbuf_addstr(out, ri->notes.buf);
	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];
		const struct ptx_module *rm;
		const struct ptx_function *fr = rebuilt_function(rb, k->name, &rm), *fo;
		struct ptx_module *om = NULL;
		char *label = report_kernel_label(k);

		if (!k->nr_patch_changes) {
			free(label);
			continue;
		}
		om = capture_module(in, k->module);
		fo = om ? ptx_module_find(om, k->name) : NULL;
		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];
			struct rebuild_check c;
			enum load_action action;
			enum l2_priority l2;

			if (!advised_load(l, &action, &l2))
				continue;
			sr->checked++;
			if (!load_in_patch(ri, l)) {
				const char *why = sources_file_left_out_reason(&ri->written, k->name,
									       l->ordinal);

				sr->left_out++;
				strbuf_addf(out, "  %-16s load %-3u %-24s not in source.patch: %s\n", label,
				       l->ordinal, l->patch_action, why ? why : l->hint.message ?
				       l->hint.message : "?");
				continue;
			}
			if (!fr) {
				sr->lost++;
				strbuf_addf(out, "  %-16s load %-3u %-24s missing: the rebuilt binary has no kernel "
				       "%s with PTX\n", label, l->ordinal, l->patch_action, k->name);
				continue;
			}
			if (!fo) {
				sr->lost++;
				strbuf_addf(out, "  %-16s load %-3u %-24s cannot tell: the capture's PTX of module %s "
				       "is not readable\n", label, l->ordinal, l->patch_action, k->module);
				continue;
			}
			rebuild_match_load(fo, l->ordinal, rm, fr, diff, action, l2, &c);
			if (c.status == REBUILD_FOUND)
				sr->carried++;
			else
				sr->lost++;
			strbuf_addf(out, "  %-16s load %-3u %-24s %s", label, l->ordinal, l->patch_action,
			       rebuild_status_name(c.status));
			if (c.found)
				strbuf_addf(out, " (%s, PTX line %u", c.found->opcode, c.found->ptx_line);
			else
				strbuf_addf(out, " (");
			if (c.column)
				strbuf_addf(out, "%sline %d of the patched source, the tl.load at column "
					    "%d, load %zu of it", c.found ? "; " : "", c.line, c.column,
					    c.order);
			else
				strbuf_addf(out, "%sline %d of the patched source, load %zu of that "
					    "line", c.found ? "; " : "", c.line, c.order);
			strbuf_addstr(out, c.merged ? "; the compiler made fewer loads of it there, "
				      "each in this form)\n" : ")\n");
		}
		ptx_module_free(om);
		free(label);
	}
	strbuf_addf(out, "  %zu advised load%s: %zu carry the advised form, %zu do not, %zu not in "
	       "source.patch\n", sr->checked, sr->checked == 1 ? "" : "s", sr->carried, sr->lost,
	       sr->left_out);
}

int rebuild_check_verdict(const struct rebuild_check_counts *sr, const char *program)
{
	if (!sr->lost)
		return 0;
	return error_set(CA_E_INPUT, "%zu advised load%s of source.patch %s not in the rebuilt "
			 "'%s' in the advised form: was it rebuilt from the patched sources, with "
			 "-lineinfo?", sr->lost, sr->lost == 1 ? "" : "s",
			 sr->lost == 1 ? "is" : "are", program);
}

int rebuild_check_timed(const struct rebuild_input *ri, const struct rebuild_timing_options *t,
			const char *baseline, char *const *original, struct strbuf *out,
			char **tmp_left)
{
	struct rebuild_timing_options topt = *t;
	struct rebuild_timing tr;
	int ret;

	memset(&tr, 0, sizeof(tr));
	*tmp_left = NULL;
	topt.baseline_argv = baseline ? rebuild_timing_baseline_argv(baseline, t->argv) :
			     rebuild_timing_same_argv(original);
	topt.kernels = rebuild_changed_kernels(&ri->in, &topt.nr_kernels);
	ret = rebuild_timing_run(&topt, &tr);
	free((void *)topt.kernels);
	if (topt.baseline_argv)
		free(topt.baseline_argv[0]);
	free(topt.baseline_argv);
	*tmp_left = tr.tmp_left;
	tr.tmp_left = NULL;
	if (!ret)
		rebuild_check_timed_text(&ri->in, &tr, t, out);
	if (ret == CA_E_NOGPU)
		ret = error_prefix(ret, "the static check above passed; timing the rebuilt "
				   "program needs a GPU");
	if (!ret && !tr.kept) {
		strbuf_addstr(out, "  the rebuilt program lost the advice's speedup\n");
		ret = 5;
	}
	rebuild_timing_release(&tr);
	return ret;
}

void rebuild_check_static_printable(const struct rebuild_input *ri,
				    struct rebuild_check_counts *sr, struct strbuf *out)
{
	struct strbuf text = STRBUF_INIT;

	rebuild_check_static(ri, sr, &text);
	strbuf_addstr(out, "STATIC CHECK (the rebuilt binary's PTX)\n");
	/* kernel names and files of the capture and the binary */
	strbuf_add_printable_lines(out, text.buf);
	if (!sr->checked)
		strbuf_addstr(out, "  the plan changes no load: nothing to check\n");
	strbuf_release(&text);
}
