/*
 * Source rewriting's Triton back-end (emitters/rewrite/rewrite_backend.h):
 * a tl.load call in a Python kernel gets the keyword arguments of the form
 * the plan wants, rewritten by the helper tl_load_rewrite.py
 * (python_rewrite.h) with the user's own interpreter; torch.compile's
 * generated kernels are told apart (inductor.h).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/load_sites.h"
#include "analysis/ptx.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/inductor.h"
#include "emitters/rewrite/python_rewrite.h"
#include "emitters/rewrite/rewrite_backend.h"
#include "emitters/rewrite/source_locate.h"

/* What a Triton form sets, for the user: eviction_policy="evict_last". */
static char *tl_form_text(const struct tl_load_edit *e)
{
	if (e->eviction_policy)
		return xasprintf("eviction_policy=\"%s\"", e->eviction_policy);
	if (e->cache_modifier)
		return xasprintf("cache_modifier=\"%s\"", e->cache_modifier);
	return xstrdup("no eviction_policy or cache_modifier");
}

static void set_hint(struct source_hint *h, enum source_hint_status st, char *message)
{
	h->status = st;
	free(h->message);
	h->message = message;
}

/*
 * The loads of Triton kernels: a tl.load compiles to several PTX loads
 * with its line and column, which are one decision. Each call whose loads
 * the plan changes, all to one form Triton can write, gets its keyword
 * arguments rewritten by emitters/rewrite/tl_load_rewrite.py; loads of the call the
 * plan leaves alone follow it.
 */
static void python_hints(struct rewrite_resolver *r, struct rewrite_cand *cands, size_t n)
{
	/* the user's choice or python3 from PATH; never the capture's program */
	const char *python = python_rewrite_interpreter(r->in->python);
	size_t i, j, s;

	for (i = 0; i < r->in->nr_sources; i++) {
		const struct report_source *src = &r->in->sources[i];
		struct site { int line, column; const char *action; int mixed, formless;
			      struct tl_load_edit e; } *sites = NULL;
		struct tl_load_edit *edits;
		struct tl_load_result *res;
		size_t ns = 0;

		if (!src->file || !src->under_root || !load_sites_is_python(src->path))
			continue;
		/* the calls, by line and column, and the form their advised loads want */
		for (j = 0; j < n; j++) {
			const struct report_load *l = cands[j].l;

			if (!cands[j].py || l->hint.source_index != (long)i || !l->patch_changes ||
			    !l->patch_action || !l->line)
				continue;
			for (s = 0; s < ns; s++)
				if (sites[s].line == l->line && sites[s].column == l->column)
					break;
			if (s == ns) {
				sites = xrealloc(sites, (ns + 1) * sizeof(*sites));
				memset(&sites[ns], 0, sizeof(*sites));
				sites[ns].line = l->line;
				sites[ns].column = l->column;
				sites[ns].action = l->patch_action;
				sites[ns].formless = !tl_load_form_of_action(l->patch_action,
									     &sites[ns].e);
				ns++;
			} else if (strcmp(sites[s].action, l->patch_action)) {
				sites[s].mixed = 1;
			}
		}
		edits = xcalloc(ns + 1, sizeof(*edits));
		res = xcalloc(ns + 1, sizeof(*res));
		for (s = 0; s < ns; s++) {
			edits[s] = sites[s].e;
			edits[s].line = sites[s].line;
			edits[s].column = sites[s].column;
			if (sites[s].mixed || sites[s].formless ||
			    inductor_generated(r->in->sources[i].read_path)) {
				/* not asked of the helper: a call that is not there */
				edits[s].line = 0;
			}
		}
		if (ns && tl_load_rewrite(python, src->file->text, edits, ns, res)) {
			for (s = 0; s < ns; s++) {
				res[s].status = TL_LOAD_NOT_FOUND;
				res[s].why = xstrdup(error_message());
			}
			error_clear();
		}
		for (j = 0; j < n; j++) {
			struct report_load *l = cands[j].l;
			struct source_hint *h = &l->hint;
			char *form;

			if (!cands[j].py || h->source_index != (long)i || !l->line)
				continue;
			for (s = 0; s < ns; s++)
				if (sites[s].line == l->line && sites[s].column == l->column)
					break;
			if (s == ns)
				continue;   /* a call the plan does not change */
			form = tl_form_text(&sites[s].e);
			if (inductor_generated(l->file)) {
				set_hint(h, SOURCE_HINT_NOT_REWRITTEN, xasprintf(
					"not rewritten: torch.compile generated this kernel (%s), so "
					"it is not your source to patch; apply the advice without a "
					"change with cacheadvise run --plan", l->file));
			} else if (sites[s].mixed) {
				set_hint(h, SOURCE_HINT_NOT_REWRITTEN, xasprintf(
					"not rewritten: the PTX loads of the tl.load at %s:%d:%d are "
					"advised different forms; apply them without a change with "
					"cacheadvise run --plan", src->path, l->line, l->column));
			} else if (sites[s].formless) {
				set_hint(h, SOURCE_HINT_NO_SOURCE_FORM, xasprintf(
					"'%s' has no Triton form (tl.load sets eviction_policy "
					"evict_first or evict_last, for L1 and L2 at once, and "
					"cache_modifier .ca or .cg): apply it without a change with "
					"cacheadvise run --plan", sites[s].action));
			} else if (res[s].status == TL_LOAD_REWRITTEN) {
				h->status = SOURCE_HINT_REWRITTEN;
				h->rewrite_line = res[s].first;
				h->rewrite_last = res[s].last;
				free(h->rewritten);
				h->rewritten = xstrdup(res[s].text);
				if (!l->patch_changes)
					h->follows = sites[s].action;
				set_hint(h, SOURCE_HINT_REWRITTEN, xasprintf(
					"%s in source.patch: the tl.load at %s:%d:%d (Triton)", form,
					src->path, l->line, l->column));
			} else if (res[s].status == TL_LOAD_UNCHANGED) {
				set_hint(h, SOURCE_HINT_NONE, xasprintf(
					"the tl.load at %s:%d:%d already has %s", src->path, l->line,
					l->column, form));
			} else {
				set_hint(h, SOURCE_HINT_NOT_REWRITTEN, xasprintf("not rewritten: %s",
					 res[s].why ? res[s].why : "the call was not found"));
			}
			free(form);
		}
		for (s = 0; s < ns; s++)
			tl_load_result_release(&res[s]);
		free(res);
		free(edits);
		free(sites);
	}
}


/* A Triton load whose source is there: python_hints() decides, per call. */
static void triton_decide(struct rewrite_resolver *r, struct rewrite_cand *c)
{
	(void)r;
	c->l->hint.status = SOURCE_HINT_NONE;
}

const struct rewrite_backend rewrite_backend_triton = {
	.name = "triton",
	.language = "Triton (Python)",
	.recognises = load_sites_is_python,
	.find = NULL,
	.decide = triton_decide,
	.rewrite = python_hints,
	.patch = NULL,
};
