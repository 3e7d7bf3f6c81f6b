/* `cacheadvise patch`'s work (emitters/ptx_patch.h). */
#include "emitters/ptx_patch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/plan.h"
#include "analysis/ptx.h"
#include "analysis/ptx_instrument.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_file.h"

int ptx_patch_write(const char *out_path, const struct strbuf *sb, FILE *fallback,
		    const char *layout_path, json_t *layout)
{
	struct atomic_file ptx = { 0 }, lay = { 0 };
	int ret = 0;

	if (out_path && (ret = atomic_file_open(&ptx, out_path)))
		return ret;
	if (layout_path) {
		char *s;

		if ((ret = atomic_file_open(&lay, layout_path)))
			goto fail;
		s = json_to_string(layout);
		fprintf(lay.fp, "%s\n", s);
		free(s);
		if ((ret = atomic_file_flush(&lay)))
			goto fail;
	}
	if (out_path) {
		fwrite(sb->buf, 1, sb->len, ptx.fp);
		if ((ret = atomic_file_flush(&ptx)))
			goto fail;
		ret = atomic_file_commit(&ptx);
	} else if (sb->len && fwrite(sb->buf, 1, sb->len, fallback) != sb->len) {
		ret = error_set(CA_E_IO, "cannot write to standard output: %s", strerror(errno));
	}
	if (ret)
		goto fail;
	/* NEEDSWORK: a rename that fails after the PTX's leaves the new PTX
	 * beside the old layout; both temporaries are complete by now. */
	return layout_path ? atomic_file_commit(&lay) : 0;
fail:
	if (ptx.fp)
		atomic_file_abort(&ptx);
	if (lay.fp)
		atomic_file_abort(&lay);
	return ret;
}

/* Entries with the module's id naming functions it lacks are mistakes. */
static int check_plan_functions(const struct plan *p, const char *id, const struct ptx_module *m,
				const char *plan_path, const char *ptx_path)
{
	size_t i, j;

	for (i = 0; i < p->nr_modules; i++) {
		const struct plan_module *pm = &p->modules[i];
		if (!pm->id || strcmp(pm->id, id))
			continue;
		for (j = 0; j < pm->nr_functions; j++)
			if (pm->functions[j].nr_loads && !ptx_module_find(m, pm->functions[j].name))
				return error_set(CA_E_INPUT,
						 "plan '%s' names function '%s' for module %s, but '%s' "
						 "has no such function", plan_path, pm->functions[j].name,
						 id, ptx_path);
	}
	return 0;
}

int ptx_patch_plan(const char *plan_path, const char *ptx_name, const struct strbuf *text,
		   struct strbuf *out, char id[MODULE_ID_LEN + 1], size_t *nr_edits)
{
	struct plan plan;
	struct ptx_module *m = NULL;
	struct ptx_load_edit *edits = NULL;
	size_t n;
	int ret;

	plan_init(&plan);
	ret = plan_load_file(&plan, plan_path);
	if (ret)
		goto out;
	ret = ptx_parse(ptx_name, text->buf, text->len, &m);
	if (ret)
		goto out;
	module_id_compute(text->buf, text->len, id);
	ret = check_plan_functions(&plan, id, m, plan_path, ptx_name);
	if (ret)
		goto out;
	n = plan_edits_for_module(&plan, id, m, &edits);
	*nr_edits = n;
	ret = ptx_rewrite_loads(m, edits, n, out);
	if (ret)
		error_prefix(ret, "cannot apply plan '%s' to '%s'", plan_path, ptx_name);
out:
	free(edits);
	ptx_module_free(m);
	plan_release(&plan);
	return ret;
}

int ptx_patch_instrument(unsigned threshold, const char *ptx_name, const struct strbuf *text,
			 struct strbuf *out, json_t **layout)
{
	struct ptx_instrument_options io = { .threshold = threshold };
	struct ptx_module *m = NULL;
	int ret = ptx_parse(ptx_name, text->buf, text->len, &m);

	if (ret)
		return ret;
	ret = ptx_instrument(m, &io, out, layout);
	if (ret)
		error_prefix(ret, "cannot instrument '%s'", ptx_name);
	ptx_module_free(m);
	return ret;
}
