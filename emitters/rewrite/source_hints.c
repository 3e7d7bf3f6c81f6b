/*
 * Source hints (emitters/rewrite/source_hints.h): every load located in
 * the source (source_locate.h), what the advice means where the source is
 * or is not there, then the language back-ends (rewrite_backend.h).
 */
#include "emitters/rewrite/source_hints.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/ptx.h"
#include "base/xalloc.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/rewrite_backend.h"
#include "emitters/rewrite/source_locate.h"

const char *source_hint_status_name(enum source_hint_status s)
{
	switch (s) {
	case SOURCE_HINT_NONE: return "none";
	case SOURCE_HINT_REWRITTEN: return "rewritten";
	case SOURCE_HINT_NO_LINEINFO: return "no_lineinfo";
	case SOURCE_HINT_NO_SOURCE: return "no_source";
	case SOURCE_HINT_OUTSIDE_ROOT: return "outside_root";
	case SOURCE_HINT_NOT_REWRITTEN: return "not_rewritten";
	case SOURCE_HINT_NO_SOURCE_FORM: return "no_source_form";
	}
	return "none";
}

void source_hint_release(struct source_hint *h)
{
	free(h->message);
	free(h->path);
	free(h->source_text);
	free(h->rewritten);
	free(h->ptx_path);
	free(h->ptx_text);
	free(h->elem_type);
	free(h->inlined_in);
	free(h->insert_text);
	while (h->nr_edits)
		free(h->edits[--h->nr_edits].text);
	free(h->edits);
	memset(h, 0, sizeof(*h));
	h->source_index = -1;
}

size_t source_hint_patch_line(const struct source_hint *h, int line)
{
	return h->rewrite_line ? h->rewrite_line : (size_t)line;
}

static void set_unchanged_message(struct rewrite_cand *c)
{
	struct report_load *l = c->l;
	int decided = !strcmp(l->decision, "cache") || !strcmp(l->decision, "bypass");

	if (decided && !l->patch_action) {
		double speedup;
		int kept = 1;
		const char *reason = c->k->verdict ? c->k->verdict->reason : NULL;

		if (report_kernel_verified(c->k, &speedup, &kept) && !kept)
			l->hint.message = xasprintf("the analysis advises to %s, but the verification "
						    "rejected this kernel's advice (%.3gx%s%s): left as is",
						    !strcmp(l->decision, "bypass") ? "bypass L1" :
						    "cache in L1", speedup, reason ? ", " : "",
						    reason ? reason : "");
		else
			l->hint.message = xasprintf("the analysis advises to %s, but the plan leaves "
						    "the load as is", !strcmp(l->decision, "bypass") ?
						    "bypass L1" : "cache in L1");
	} else if (!strcmp(l->decision, "cache")) {
		l->hint.message = xstrdup("keep as is: caching in L1 pays");
	} else if (!strcmp(l->decision, "bypass")) {
		l->hint.message = xstrdup("already bypasses L1 as advised");
	} else if (!strcmp(l->decision, "keep")) {
		l->hint.message = l->reason ? xasprintf("keep as is: %s", l->reason) :
			xstrdup("keep as is: caching or bypassing makes no measured difference");
	} else if (!strcmp(l->decision, "not patchable")) {
		l->hint.message = xasprintf("not advised: the load is never rewritten (%s)",
					    l->unpatchable_reason ? l->unpatchable_reason :
					    l->reason ? l->reason : "a strong load or an ldu");
	} else if (l->reason) {
		l->hint.message = xasprintf("not advised: %s", l->reason);
	} else {
		l->hint.message = xstrdup(l->measured ? "not advised: the load was not measured" :
					  "not advised: the load was not measured (beyond --max-loads)");
	}
}

/*
 * The origin of a module the program loaded from memory at run time
 * ("cuModuleLoadData#2", "cuLibraryLoadData#0": NVRTC's output, a JIT of
 * the program's own), NULL for one of the program's fatbins or a file.
 */
static const char *loaded_from_memory(const struct report_input *in, const char *module)
{
	static const char *const apis[] = { "cuModuleLoadData#", "cuModuleLoadDataEx#",
					    "cuModuleLoadFatBinary#", "cuLibraryLoadData#" };
	const struct capture_module *m = capture_find_module(&in->model, module);
	size_t i;

	for (i = 0; m && m->origin && i < ARRAY_SIZE(apis); i++)
		if (!strncmp(m->origin, apis[i], strlen(apis[i])))
			return m->origin;
	return NULL;
}

/* A load the plan changes and the source plan leaves as it is: only
 * `run --plan` applies that (issue 38). */
static void plan_only_hint(struct report_load *l)
{
	struct source_hint *h = &l->hint;

	if (report_load_no_triton_form(l)) {
		h->status = SOURCE_HINT_NO_SOURCE_FORM;
		h->message = xasprintf("only through cacheadvise run --plan: '%s' has no "
				       "Triton form (tl.load sets eviction_policy evict_first "
				       "or evict_last, for L1 and L2 at once, and cache_modifier "
				       ".ca or .cg), so the source plan, solved without it, "
				       "leaves the load as built", l->action);
		return;
	}
	h->status = SOURCE_HINT_NONE;
	h->message = xasprintf("only through cacheadvise run --plan: '%s'; the source plan, "
			       "solved on its own, leaves the load as it is", l->action);
}

/* Where the load's source is not there to rewrite (no change, no line info,
 * a Toolkit header, outside the root, unreadable): its hint; 0. Otherwise
 * 1: the back-end decides. */
static int decide(struct rewrite_resolver *r, struct rewrite_cand *c)
{
	struct report_load *l = c->l;
	struct source_hint *h = &l->hint;
	struct report_source *src = h->source_index >= 0 ? &r->in->sources[h->source_index] : NULL;
	const char *lib, *mem = loaded_from_memory(r->in, c->k->module);

	if (!l->patch_changes && l->changes) {
		plan_only_hint(l);
	} else if (!l->patch_changes) {
		h->status = SOURCE_HINT_NONE;
		set_unchanged_message(c);
	} else if (!l->file) {
		h->status = SOURCE_HINT_NO_LINEINFO;
		h->message = mem ?
			xasprintf("no source line: the program loaded this module from memory at run "
				  "time (%s) without line info; compiled by NVRTC, pass \"-lineinfo\" "
				  "to nvrtcCompileProgram to map loads to source lines; meanwhile "
				  "cacheadvise run --plan applies the advice (here: PTX line %u of %s)",
				  mem, l->ptx_line, h->ptx_path ? h->ptx_path : "?") :
			xasprintf("no source line: the PTX was built without -lineinfo; rebuild "
				  "with nvcc -lineinfo to map loads to source lines (here: PTX "
				  "line %u of %s)", l->ptx_line, h->ptx_path ? h->ptx_path : "?");
	} else if ((lib = ptx_toolkit_library(l->file))) {
		enum load_action a;
		enum l2_priority l2;
		const char *cub = NULL;

		/* CUB's own spelling of a load's cache operator, for its algorithms' inputs */
		if (!strcmp(lib, "CUB") && !load_form_parse(l->patch_action, &a, &l2) &&
		    l2 == L2_PRIORITY_NONE)
			cub = a == LOAD_ACTION_CACHE ? "LOAD_CA" : a == LOAD_ACTION_BYPASS ? "LOAD_CG" :
			      a == LOAD_ACTION_STREAM ? "LOAD_CS" : NULL;
		h->status = SOURCE_HINT_OUTSIDE_ROOT;
		h->message = xasprintf("in %s, a header of the CUDA Toolkit (%s:%d): the library's "
				       "code, not yours, so not rewritten; cacheadvise run --plan applies "
				       "it without a change%s%s%s", lib, ptx_toolkit_include_name(l->file), l->line,
				       cub ? " (for a CUB algorithm's input, cub::CacheModifiedInputIterator<cub::" : "",
				       cub ? cub : "", cub ? ", T> gives its loads this form)" : "");
	} else if (!src->under_root) {
		h->status = SOURCE_HINT_OUTSIDE_ROOT;
		h->message = xasprintf("'%s' is outside the source root '%s' (a library's header, "
				       "not yours): not rewritten; cacheadvise run --plan applies it "
				       "without a change", src->path,
				       r->in->source_root ? r->in->source_root : "?");
	} else if (!src->file) {
		h->status = SOURCE_HINT_NO_SOURCE;
		h->message = mem ?
			xasprintf("cannot read '%s': the program loaded this module from memory at "
				  "run time (%s), as it does NVRTC's output: where '%s' is the name "
				  "of a source string, there is no file to patch and cacheadvise run "
				  "--plan applies the advice; where it is a file, pass --source-root "
				  "with its directory", src->read_path, mem, src->path) :
			xasprintf("cannot read '%s': pass --source-root with the directory that "
				  "holds '%s'", src->read_path, src->path);
	} else {
		return 1;
	}
	return 0;
}

void source_hints_resolve(struct report_input *in)
{
	struct rewrite_resolver r;
	struct rewrite_cand *cands;
	size_t i, j, n = 0, at = 0;

	source_locate_init(&r, in);

	for (i = 0; i < in->nr_kernels; i++)
		n += in->kernels[i].nr_loads;
	cands = xcalloc(n + 1, sizeof(*cands));
	for (i = 0; i < in->nr_kernels; i++)
		source_locate_async_copies(&r, &in->kernels[i]);
	for (i = 0; i < in->nr_kernels; i++) {
		struct report_kernel *k = &in->kernels[i];

		for (j = 0; j < k->nr_loads; j++) {
			struct rewrite_cand *c = &cands[at++];

			c->k = k;
			c->l = &k->loads[j];
			source_locate_load(&r, c);
			c->backend = rewrite_backend_for(c->l->file);
			c->py = c->backend == &rewrite_backend_triton;
			if (c->backend->find)
				c->backend->find(&r, c);
		}
	}
	for (i = 0; i < n; i++)
		if (decide(&r, &cands[i]))
			cands[i].backend->decide(&r, &cands[i]);
	for (i = 0; rewrite_backends[i]; i++)
		if (rewrite_backends[i]->rewrite)
			rewrite_backends[i]->rewrite(&r, cands, n);

	for (i = 0; i < n; i++) {
		source_rewrite_release(&cands[i].rw);
		source_kernel_release(&cands[i].fn);
		free(cands[i].why);
		free(cands[i].alias);
		free(cands[i].alias_type);
		free(cands[i].alias_of);
	}
	free(cands);
	source_locate_release(&r);
}
