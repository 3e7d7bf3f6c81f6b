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
	if (python_program(program)) {
		/* a Python program: its Triton kernels, as the rerun compiled them */
		size_t n, i;
		const char **kernels = rebuild_changed_kernels(&ri->in, &n);

		for (i = 0; !ret && i < n; i++) {
			char **compiles = intake_triton_compiles(kernels[i], NULL);

			if (compiles[0])
				ret = intake_read_file(&ri->rb, compiles[0], 0);
			intake_triton_compiles_free(compiles);
		}
		free((void *)kernels);
	} else {
		ret = intake_read_file(&ri->rb, program, 0);
	}
out:
	free(patch_path);
	return ret;
}

void rebuild_input_release(struct rebuild_input *ri)
{
	intake_release(&ri->rb);
	report_input_release(&ri->in);
	strbuf_release(&ri->diff);
	sources_file_release(&ri->written);
}

const char **rebuild_changed_kernels(const struct report_input *in, size_t *nr)
{
	const char **kernels = NULL;
	size_t i, n = 0;

	for (i = 0; i < in->nr_kernels; i++) {
		if (!in->kernels[i].nr_changes)
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

void rebuild_check_static(const struct rebuild_input *ri, struct rebuild_check_counts *sr,
			  struct strbuf *out)
{
	const struct report_input *in = &ri->in;
	const struct intake *rb = &ri->rb;
	const char *diff = ri->diff.len ? ri->diff.buf : NULL;
	size_t i, j;

	memset(sr, 0, sizeof(*sr));
	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];
		const struct ptx_module *rm;
		const struct ptx_function *fr = rebuilt_function(rb, k->name, &rm), *fo;
		struct ptx_module *om = NULL;
		char *label = report_kernel_label(k);

		if (!k->nr_changes) {
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
			/* the hint (the sources as they were read), or the patch itself:
			 * sources already patched no longer read the parameter directly */
			int in_patch = l->hint.status == SOURCE_HINT_REWRITTEN ||
				       (diff && l->file && l->line > 0 &&
					rebuild_diff_replaces_line(diff, l->file, (size_t)l->line));

			if (!l->changes || !l->action || load_form_parse(l->action, &action, &l2))
				continue;
			sr->checked++;
			if (!in_patch) {
				const char *why = sources_file_left_out_reason(&ri->written, k->name,
									       l->ordinal);

				sr->left_out++;
				strbuf_addf(out, "  %-16s load %-3u %-24s not in source.patch: %s\n", label,
				       l->ordinal, l->action, why ? why : l->hint.message ?
				       l->hint.message : "?");
				continue;
			}
			if (!fr) {
				sr->lost++;
				strbuf_addf(out, "  %-16s load %-3u %-24s missing: the rebuilt binary has no kernel "
				       "%s with PTX\n", label, l->ordinal, l->action, k->name);
				continue;
			}
			if (!fo) {
				sr->lost++;
				strbuf_addf(out, "  %-16s load %-3u %-24s cannot tell: the capture's PTX of module %s "
				       "is not readable\n", label, l->ordinal, l->action, k->module);
				continue;
			}
			rebuild_match_load(fo, l->ordinal, rm, fr, diff, action, l2, &c);
			if (c.status == REBUILD_FOUND)
				sr->carried++;
			else
				sr->lost++;
			strbuf_addf(out, "  %-16s load %-3u %-24s %s", label, l->ordinal, l->action,
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
