#include "emitters/patched_ptx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/module_id.h"
#include "analysis/ptx.h"
#include "base/xalloc.h"
#include "collectors/intake.h"
#include "emitters/capture_layout.h"
#include "emitters/report_input.h"

#define PTX_MAX_BYTES (1u << 30)

int patched_ptx_render_module(const struct ptx_module *pm, const char *id,
			      const struct plan *plan, struct strbuf *out)
{
	struct ptx_load_edit *edits = NULL;
	size_t nr = plan ? plan_edits_for_module(plan, id, pm, &edits) : 0;
	int ret = 0;

	if (nr) {
		ret = ptx_rewrite_loads(pm, edits, nr, out);
		if (!ret)
			ret = (int)nr;
	}
	free(edits);
	return ret;
}

int patched_ptx_write_module(const struct ptx_module *pm, const char *id,
			     const struct plan *plan, const char *path, const char *unpatched)
{
	struct strbuf sb = STRBUF_INIT;
	int ret = patched_ptx_render_module(pm, id, plan, &sb);

	if (ret > 0) {
		/* a link left by an earlier write of this substitute leads to the
		 * unpatched module: write_file_atomic replaces the link, never
		 * writes through it */
		int w = write_file_atomic(path, sb.buf, sb.len);

		if (w)
			ret = w;
	} else if (!ret && unpatched) {
		unlink(path);
		if (symlink(unpatched, path))
			ret = error_set(CA_E_IO, "cannot link '%s': %s", path, strerror(errno));
	}
	strbuf_release(&sb);
	return ret;
}

int patched_ptx_render(const char *name, const char *text, size_t len, const char *id,
		       const struct plan *plan, struct strbuf *out)
{
	struct ptx_module *m = NULL;
	int ret = ptx_parse(name, text, len, &m);

	if (ret)
		return ret;
	ret = patched_ptx_render_module(m, id, plan, out);
	if (!ret)
		strbuf_add(out, text, len);
	else if (ret < 0)
		ret = error_prefix(ret, "cannot apply the plan to '%s'", name);
	ptx_module_free(m);
	return ret;
}

int patched_ptx_write_all(const struct report_input *in, const char *out_dir)
{
	char *dir = capture_layout_patched_dir(out_dir);
	size_t i;
	int ret = 0, written = 0;

	for (i = 0; i < in->model.nr_modules; i++) {
		const char *id = in->model.modules[i].id, *ptx = in->model.modules[i].ptx;
		struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;
		char actual[MODULE_ID_LEN + 1], *src, *dst;

		if (!id || !ptx)
			continue;
		if (!written && (ret = mkdir_p(dir)))
			break;
		src = capture_layout_file(in->dir, ptx);
		ret = strbuf_read_file(&text, src, PTX_MAX_BYTES);
		if (!ret) {
			module_id_compute(text.buf, text.len, actual);
			if (strcmp(actual, id))
				ret = error_set(CA_E_INPUT, "'%s' does not match its module id %s (its "
						"content hashes to %s): was it edited?", src, id, actual);
		}
		if (!ret)
			ret = patched_ptx_render(src, text.buf, text.len, id, &in->plan, &out);
		if (ret >= 0) {
			dst = capture_layout_patched_ptx(out_dir, id);
			ret = write_file_atomic(dst, out.buf, out.len);
			free(dst);
		}
		free(src);
		strbuf_release(&text);
		strbuf_release(&out);
		if (ret < 0)
			break;
		written++;
	}
	free(dir);
	return ret < 0 ? ret : written;
}

int patched_ptx_write_intake(const struct intake *in, const struct plan *plan, const char *dir,
			     size_t *patched)
{
	size_t i;
	int ret = 0;

	*patched = 0;
	for (i = 0; i < in->nr_modules && !ret; i++) {
		const struct intake_module *m = &in->modules[i];
		char *path;
		int n;

		if (!m->has_ptx || !m->ptx)
			continue;
		/* the injection library substitutes <dir>/<id>.ptx (docs/injection.md) */
		path = xasprintf("%s/%s.ptx", dir, m->id);
		n = patched_ptx_write_module(m->ptx, m->id, plan, path, NULL);
		free(path);
		if (n > 0)
			(*patched)++;
		else if (n < 0)
			ret = n;
	}
	return ret;
}

int patched_ptx_write_l2_windows(const struct plan *plan, const char *dir, char **path)
{
	json_t *w = plan_extra_section(plan, "l2_windows");

	*path = NULL;
	if (!w || !json_is_object(w))
		return 0;
	*path = xasprintf("%s/l2_windows.json", dir);
	return json_file_write(*path, w);
}
