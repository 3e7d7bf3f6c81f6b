/* `inspect`'s output: the table and the inspect JSON of an intake. */
#include "emitters/inspect_report.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/ptx.h"
#include "base/json_stream.h"
#include "base/xalloc.h"
#include "collectors/intake.h"

#define INSPECT_SCHEMA "cacheadvise.inspect/1"

static void count_memops(const struct ptx_function *f, unsigned counts[PTX_MEMOP__COUNT])
{
	size_t i;

	memset(counts, 0, PTX_MEMOP__COUNT * sizeof(counts[0]));
	for (i = 0; i < f->nr_memops; i++)
		if ((unsigned)f->memops[i].kind < PTX_MEMOP__COUNT)
			counts[f->memops[i].kind]++;
}

static json_t *json_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* f's async copies by source location: [{file, line, column, copies}] */
static json_t *async_copies_json(const struct ptx_function *f)
{
	struct ptx_async_site *sites;
	size_t i, nr = ptx_async_copy_sites(f, &sites);
	json_t *a = json_array();

	for (i = 0; i < nr; i++)
		json_array_append_new(a, json_pack("{s:o, s:o, s:o, s:I, s:I}", "file",
			json_str_or_null(sites[i].line > 0 ? sites[i].file : NULL), "line",
			sites[i].line > 0 && sites[i].file ? json_integer(sites[i].line) : json_null(),
			"column", sites[i].line > 0 && sites[i].file && sites[i].column > 0 ?
			json_integer(sites[i].column) : json_null(),
			"copies", (json_int_t)sites[i].copies, "ptx_line",
			(json_int_t)sites[i].first_ptx_line));
	free(sites);
	return a;
}

static json_t *archs_json(const char *prefix, const unsigned *v, size_t nr)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < nr; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s_%u", prefix, v[i]);
		json_array_append_new(a, json_string(name));
	}
	return a;
}

json_t *inspect_inlined_at_json(const struct ptx_load *l)
{
	json_t *arr = json_array();
	int i;

	for (i = 0; i < l->inline_depth; i++) {
		const struct ptx_call_site *cs = &l->inlined_at[i];

		json_array_append_new(arr, json_pack("{s:o, s:o, s:o}", "file",
			json_str_or_null(cs->file), "line",
			cs->line > 0 ? json_integer(cs->line) : json_null(), "column",
			cs->column > 0 ? json_integer(cs->column) : json_null()));
	}
	return arr;
}

static json_t *load_json(const struct ptx_load *l)
{
	json_t *o = json_object();

	json_object_set_new(o, "ordinal", json_integer(l->ordinal));
	json_object_set_new(o, "ptx_line", json_integer(l->ptx_line));
	json_object_set_new(o, "instruction", json_string(l->opcode));
	json_object_set_new(o, "space", json_string(l->space == PTX_SPACE_GLOBAL ? "global"
										  : "generic"));
	json_object_set_new(o, "cache_op", json_string(ptx_cache_op_name(l->cache_op)));
	json_object_set_new(o, "l1_eviction", json_string(ptx_l1_eviction_name(l->l1_eviction)));
	json_object_set_new(o, "nc", json_boolean(l->nc));
	json_object_set_new(o, "ldu", json_boolean(l->is_ldu));
	json_object_set_new(o, "strong", json_boolean(l->strong));
	json_object_set_new(o, "vector", json_integer(l->vector));
	json_object_set_new(o, "bits", json_integer(l->bits));
	json_object_set_new(o, "param", l->param >= 0 ? json_integer(l->param) : json_null());
	json_object_set_new(o, "read_only", l->read_only < 0 ? json_null()
							     : json_boolean(l->read_only));
	json_object_set_new(o, "file", json_str_or_null(l->line > 0 ? l->file : NULL));
	json_object_set_new(o, "line", l->line > 0 && l->file ? json_integer(l->line)
							      : json_null());
	json_object_set_new(o, "column", l->line > 0 && l->file && l->column > 0 ?
					 json_integer(l->column) : json_null());
	json_object_set_new(o, "inlined_at", inspect_inlined_at_json(l));
	json_object_set_new(o, "patchable", json_boolean(l->patchable));
	json_object_set_new(o, "unpatchable_reason",
			    json_str_or_null(l->patchable ? NULL : l->unpatchable_reason));
	return o;
}

/*
 * A function, a module and the document are written as they are made
 * (base/json_stream.h), one load's object at a time: a tree of the whole
 * document held about 4 KB per load (issue 36: 4 GB for 10^6 loads).
 */
static void function_json(struct json_stream *js, const struct ptx_function *f)
{
	json_t *params = json_array();
	unsigned counts[PTX_MEMOP__COUNT];
	size_t i;

	count_memops(f, counts);
	json_stream_begin_object(js, NULL);
	json_stream_value(js, "name", json_string(f->name));
	json_stream_value(js, "kind", json_string(f->is_entry ? "entry" : "func"));
	json_stream_value(js, "ptx_line", json_integer(f->decl_line));
	for (i = 0; i < f->nr_params; i++) {
		json_t *p = json_object();
		json_object_set_new(p, "name", json_string(f->params[i].name));
		json_object_set_new(p, "type", json_string(f->params[i].type));
		json_array_append_new(params, p);
	}
	json_stream_value(js, "params", params);
	json_stream_value(js, "stores", json_integer(counts[PTX_MEMOP_STORE]));
	json_stream_value(js, "atomics", json_integer(counts[PTX_MEMOP_ATOMIC]));
	json_stream_value(js, "fences", json_integer(counts[PTX_MEMOP_FENCE]));
	json_stream_value(js, "barriers", json_integer(counts[PTX_MEMOP_BARRIER]));
	json_stream_value(js, "async_copies", async_copies_json(f));
	json_stream_value(js, "static_shared_bytes",
			  json_integer((json_int_t)f->static_shared_bytes));
	json_stream_begin_array(js, "loads");
	for (i = 0; i < f->nr_loads; i++)
		json_stream_value(js, NULL, load_json(&f->loads[i]));
	json_stream_end(js);
	json_stream_end(js);
}

static void module_json(struct json_stream *js, const struct intake_module *m)
{
	char arch[32];
	size_t i;

	snprintf(arch, sizeof(arch), "sm_%u", m->arch);
	json_stream_begin_object(js, NULL);
	json_stream_value(js, "id", json_string(m->id));
	json_stream_value(js, "origin", json_string(m->origin));
	json_stream_value(js, "arch", m->arch ? json_string(arch) : json_null());
	json_stream_value(js, "has_ptx", json_boolean(m->has_ptx));
	json_stream_value(js, "no_ptx_reason", json_str_or_null(m->no_ptx_reason));
	json_stream_value(js, "source", json_str_or_null(m->source_name));
	json_stream_value(js, "ptx_version", m->ptx ? json_string(m->ptx->version) : json_null());
	json_stream_value(js, "ptx_archs", archs_json("compute", m->ptx_archs, m->nr_ptx_archs));
	json_stream_value(js, "cubin_archs", archs_json("sm", m->cubin_archs, m->nr_cubin_archs));
	json_stream_begin_array(js, "functions");
	if (m->ptx) {
		for (i = 0; i < m->ptx->nr_functions; i++)
			function_json(js, &m->ptx->functions[i]);
	} else {
		/* Kernels known from the cubin: nothing to say about their loads. */
		for (i = 0; i < m->nr_cubin_kernels; i++) {
			json_t *f = json_object();
			json_object_set_new(f, "name", json_string(m->cubin_kernels[i]));
			json_object_set_new(f, "kind", json_string("entry"));
			json_object_set_new(f, "loads", json_array());
			json_stream_value(js, NULL, f);
		}
	}
	json_stream_end(js);
	json_stream_end(js);
}

void inspect_report_json(FILE *out, const struct intake *in, const char *path)
{
	struct json_stream js;
	size_t i;

	json_stream_init(&js, out);
	json_stream_begin_object(&js, NULL);
	json_stream_value(&js, "schema", json_string(INSPECT_SCHEMA));
	json_stream_value(&js, "file", json_string(path));
	json_stream_begin_array(&js, "modules");
	for (i = 0; i < in->nr_modules; i++)
		module_json(&js, &in->modules[i]);
	json_stream_end(&js);
	json_stream_end(&js);
	json_stream_finish(&js);
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static void render_loads(struct strbuf *out, const struct ptx_function *f)
{
	int w = 11;
	size_t i;

	for (i = 0; i < f->nr_loads; i++)
		if ((int)strlen(f->loads[i].opcode) > w)
			w = (int)strlen(f->loads[i].opcode);
	strbuf_addf(out, "      %3s %6s  %-*s %-7s %-7s %-3s %-6s %-5s %-3s %-16s %s\n", "#", "line",
		    w, "instruction", "space", "cache", "nc", "width", "param", "ro", "source",
		    "patchable");
	for (i = 0; i < f->nr_loads; i++) {
		const struct ptx_load *l = &f->loads[i];
		char width[16], param[16], source[512];

		if (l->vector > 1)
			snprintf(width, sizeof(width), "%dx%d", l->vector, l->bits);
		else
			snprintf(width, sizeof(width), "%d", l->bits);
		if (l->param >= 0)
			snprintf(param, sizeof(param), "%d", l->param);
		else
			snprintf(param, sizeof(param), "-");
		if (l->file && l->line > 0) {
			/* The JSON has the path as the PTX gives it; the table the name. */
			const char *slash = strrchr(l->file, '/');
			snprintf(source, sizeof(source), "%s:%d", slash ? slash + 1 : l->file,
				 l->line);
		} else {
			snprintf(source, sizeof(source), "-");
		}
		strbuf_addf(out, "      %3u %6u  %-*s %-7s %-7s %-3s %-6s %-5s %-3s %-16s %s%s\n",
			    l->ordinal, l->ptx_line, w, l->opcode,
			    l->space == PTX_SPACE_GLOBAL ? "global" : "generic",
			    ptx_cache_op_name(l->cache_op), l->nc ? "yes" : "no", width, param,
			    l->read_only < 0 ? "?" : l->read_only ? "yes" : "no", source,
			    l->patchable ? "yes" : "no: ",
			    l->patchable ? "" : (l->unpatchable_reason ? l->unpatchable_reason : "?"));
	}
}

static void render_function(struct strbuf *out, const struct ptx_function *f)
{
	unsigned counts[PTX_MEMOP__COUNT];
	size_t i;

	count_memops(f, counts);
	strbuf_addf(out, "  %s %s  (PTX line %u; %zu global %s, %u %s, %u %s",
		    f->is_entry ? "kernel" : "function", f->name, f->decl_line, f->nr_loads,
		    plural(f->nr_loads, "load", "loads"), counts[PTX_MEMOP_STORE],
		    plural(counts[PTX_MEMOP_STORE], "store", "stores"), counts[PTX_MEMOP_ATOMIC],
		    plural(counts[PTX_MEMOP_ATOMIC], "atomic", "atomics"));
	if (counts[PTX_MEMOP_ASYNC_COPY]) {
		struct ptx_async_site *sites;
		size_t nr = ptx_async_copy_sites(f, &sites);

		strbuf_addf(out, ", %u async %s from global to shared memory)\n",
			    counts[PTX_MEMOP_ASYNC_COPY],
			    plural(counts[PTX_MEMOP_ASYNC_COPY], "copy", "copies"));
		strbuf_addstr(out, "    async copies (cp.async, not measured or patched):");
		for (i = 0; i < nr; i++) {
			if (sites[i].file && sites[i].line > 0) {
				const char *slash = strrchr(sites[i].file, '/');

				strbuf_addf(out, "%s %s:%d", i ? "," : "",
					    slash ? slash + 1 : sites[i].file, sites[i].line);
			}
			else
				strbuf_addf(out, "%s PTX line %u", i ? "," : "",
					    sites[i].first_ptx_line);
			strbuf_addf(out, " (%zu)", sites[i].copies);
		}
		strbuf_addch(out, '\n');
		free(sites);
	} else {
		strbuf_addstr(out, ")\n");
	}
	if (f->nr_params) {
		strbuf_addstr(out, "    params:");
		for (i = 0; i < f->nr_params; i++)
			strbuf_addf(out, "%s %zu %s", i ? "," : "", i, f->params[i].type);
		strbuf_addch(out, '\n');
	}
	if (f->nr_loads)
		render_loads(out, f);
}

static void render_text(struct strbuf *out, const struct intake *in, const char *path)
{
	size_t i, j, with_ptx = 0, kernels = 0, loads = 0;

	for (i = 0; i < in->nr_modules; i++) {
		const struct intake_module *m = &in->modules[i];
		with_ptx += m->has_ptx;
		if (!m->ptx) {
			kernels += m->nr_cubin_kernels;
			continue;
		}
		for (j = 0; j < m->ptx->nr_functions; j++) {
			kernels += m->ptx->functions[j].is_entry;
			loads += m->ptx->functions[j].nr_loads;
		}
	}
	strbuf_addf(out, "%s: %zu %s (%zu with PTX), %zu %s, %zu global %s\n", path,
		    in->nr_modules, plural(in->nr_modules, "module", "modules"), with_ptx, kernels,
		    plural(kernels, "kernel", "kernels"), loads, plural(loads, "load", "loads"));
	for (i = 0; i < in->nr_modules; i++) {
		const struct intake_module *m = &in->modules[i];

		strbuf_addf(out, "\nmodule %s  %s  sm_%u", m->id, m->origin, m->arch);
		if (m->source_name)
			strbuf_addf(out, "  source %s", m->source_name);
		strbuf_addch(out, '\n');
		if (!m->has_ptx) {
			strbuf_addf(out, "  %s\n", m->no_ptx_reason);
			for (j = 0; j < m->nr_cubin_kernels; j++)
				strbuf_addf(out, "  kernel %s  (in the cubin only)\n",
					    m->cubin_kernels[j]);
			continue;
		}
		if (!m->ptx->nr_functions)
			strbuf_addstr(out, "  no kernels or functions\n");
		for (j = 0; j < m->ptx->nr_functions; j++)
			render_function(out, &m->ptx->functions[j]);
	}
}

/* The table as a terminal may show it: names and paths come from the file
 * (a .file name of the PTX, a kernel name), so their control characters
 * are written as \xHH (issue 36). */
void inspect_report_text(struct strbuf *out, const struct intake *in, const char *path)
{
	struct strbuf text = STRBUF_INIT;

	render_text(&text, in, path);
	strbuf_add_printable_lines(out, text.buf);
	strbuf_release(&text);
}
