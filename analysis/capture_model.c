/*
 * capture.json's one reader and one writer (analysis/capture_model.h).
 *
 * Reading: every field the model knows is read by a typed getter that
 * names the field's JSON path in its refusal; cross-references are checked
 * once the whole document is read. Writing: each object starts from its
 * source (the object as read) and gets the typed fields written over it.
 */
#include "analysis/capture_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/ptx.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"

/* A section is a jansson value; the cast hides jansson from the header's users. */
#define SEC(j) ((const struct capture_section *)(j))
#define JS(s) ((json_t *)(s))

json_t *capture_section_json(const struct capture_section *sec)
{
	return sec && !json_is_null(JS(sec)) ? JS(sec) : NULL;
}

json_t *capture_members_json(const struct capture_section *sec, const char *const *keys)
{
	json_t *out = json_object(), *v;
	size_t i;

	for (i = 0; keys[i]; i++) {
		v = sec && json_is_object(JS(sec)) ? json_object_get(JS(sec), keys[i]) : NULL;
		json_object_set_new(out, keys[i], v ? json_deep_copy(v) : json_null());
	}
	return out;
}

/* ---- reading ---------------------------------------------------------- */

struct rd {
	const char *name;           /* the file, for messages */
};

static int fail(const struct rd *r, const char *path, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(const struct rd *r, const char *path, const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_set(CA_E_INPUT, "capture '%s': %s%s%s: %s", r->name, path,
			 *path && key ? "." : "", key ? key : "", msg);
}

/* A member, or NULL when absent or null. */
static json_t *member(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return v && !json_is_null(v) ? v : NULL;
}

static int rd_str(const struct rd *r, json_t *o, const char *path, const char *key,
		  char **out, int required)
{
	json_t *v = member(o, key);

	*out = NULL;
	if (!v)
		return required ? fail(r, path, key, "missing: a string is required") : 0;
	if (!json_is_string(v))
		return fail(r, path, key, "not a string");
	*out = xstrdup(json_string_value(v));
	return 0;
}

enum num_kind {
	NUM_COUNT,                  /* 0 <= v <= CAPTURE_COUNT_MAX */
	NUM_POSITIVE,               /* 0 < v <= CAPTURE_COUNT_MAX */
	NUM_FINITE,                 /* any finite number */
};

static int check_num(const struct rd *r, const char *path, const char *key, double d,
		     enum num_kind kind)
{
	if (!isfinite(d))
		return fail(r, path, key, "not a finite number");
	if (kind == NUM_COUNT && d < 0)
		return fail(r, path, key, "%g is not a count: counts are non-negative", d);
	if (kind == NUM_POSITIVE && !(d > 0))
		return fail(r, path, key, "%g is not a size: sizes are positive", d);
	if (kind != NUM_FINITE && d > CAPTURE_COUNT_MAX)
		return fail(r, path, key, "%g is out of range: at most %.0f is accepted", d,
			    CAPTURE_COUNT_MAX);
	return 0;
}

/* A number, NAN when absent or null. */
static int rd_num(const struct rd *r, json_t *o, const char *path, const char *key,
		  double *out, enum num_kind kind)
{
	json_t *v = member(o, key);

	*out = NAN;
	if (!v)
		return 0;
	if (!json_is_number(v))
		return fail(r, path, key, "not a number");
	*out = json_number_value(v);
	return check_num(r, path, key, *out, kind);
}

/* An integer in [lo, hi]; `unknown` when absent or null. */
static int rd_int(const struct rd *r, json_t *o, const char *path, const char *key,
		  long long *out, long long lo, long long hi, long long unknown)
{
	json_t *v = member(o, key);

	*out = unknown;
	if (!v)
		return 0;
	if (!json_is_integer(v))
		return fail(r, path, key, "not an integer");
	*out = json_integer_value(v);
	if (*out < lo || *out > hi)
		return fail(r, path, key, "%lld is out of range [%lld, %lld]", *out, lo, hi);
	return 0;
}

static int rd_intv(const struct rd *r, json_t *o, const char *path, const char *key,
		   int *out, long long lo, long long hi, int unknown)
{
	long long v;
	int ret = rd_int(r, o, path, key, &v, lo, hi, unknown);

	*out = (int)v;
	return ret;
}

/* A boolean: 1, 0, or -1 when absent or null. */
static int rd_bool(const struct rd *r, json_t *o, const char *path, const char *key, int *out)
{
	json_t *v = member(o, key);

	*out = -1;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return fail(r, path, key, "not true or false");
	*out = json_is_true(v);
	return 0;
}

/* An array member: *arr is NULL when absent or null. */
static int rd_array(const struct rd *r, json_t *o, const char *path, const char *key,
		    json_t **arr)
{
	json_t *v = member(o, key);

	*arr = v;
	if (!v)
		return 0;
	if (!json_is_array(v))
		return fail(r, path, key, "not an array");
	if (json_array_size(v) > CAPTURE_LIST_MAX)
		return fail(r, path, key, "%zu items: at most %d are accepted",
			    json_array_size(v), CAPTURE_LIST_MAX);
	return 0;
}

static int rd_strings(const struct rd *r, json_t *o, const char *path, const char *key,
		      char ***out, size_t *nr, int *has)
{
	json_t *arr, *v;
	size_t i;
	int ret;

	*out = NULL;
	*nr = 0;
	if (has)
		*has = json_object_get(o, key) != NULL;
	if ((ret = rd_array(r, o, path, key, &arr)) || !arr)
		return ret;
	*out = xcalloc(json_array_size(arr) + 1, sizeof(**out));
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v))
			return fail(r, path, key, "item %zu is not a string", i);
		(*out)[(*nr)++] = xstrdup(json_string_value(v));
	}
	return 0;
}

static int read_speedup(const struct rd *r, json_t *o, const char *path, const char *key,
			struct capture_speedup *sp);
static int read_verdict(const struct rd *r, json_t *o, const char *path,
			struct capture_verdict *v);

static int item_object(const struct rd *r, json_t *v, const char *path)
{
	return json_is_object(v) ? 0 : fail(r, path, NULL, "not an object");
}

static int read_program(const struct rd *r, json_t *o, struct capture_program *p)
{
	int ret;

	p->source = SEC(o);
	if ((ret = item_object(r, o, "program")) ||
	    (ret = rd_str(r, o, "program", "path", &p->path, 0)) ||
	    (ret = rd_str(r, o, "program", "cwd", &p->cwd, 0)))
		return ret;
	return rd_strings(r, o, "program", "args", &p->args, &p->nr_args, NULL);
}

static int read_options(const struct rd *r, json_t *o, struct capture_options *p)
{
	int ret;

	p->source = SEC(o);
	if ((ret = item_object(r, o, "options")) ||
	    (ret = rd_intv(r, o, "options", "top", &p->top, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_num(r, o, "options", "min_share", &p->min_share, NUM_COUNT)) ||
	    (ret = rd_intv(r, o, "options", "max_loads", &p->max_loads, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_str(r, o, "options", "model", &p->model, 0)) ||
	    (ret = rd_str(r, o, "options", "bypass_form", &p->bypass_form, 0)) ||
	    (ret = rd_str(r, o, "options", "kernels_regex", &p->kernels_regex, 0)) ||
	    (ret = rd_intv(r, o, "options", "repeat", &p->repeat, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_num(r, o, "options", "timeout", &p->timeout, NUM_COUNT)) ||
	    (ret = rd_bool(r, o, "options", "l2_priority", &p->l2_priority)))
		return ret;
	if (p->model && strcmp(p->model, "sector") && strcmp(p->model, "classic"))
		return fail(r, "options", "model", "\"%s\" is not a model: sector or classic",
			    p->model);
	return 0;
}

static int read_module(const struct rd *r, json_t *o, const char *path, struct capture_module *m)
{
	int ret, has_ptx;

	m->source = SEC(o);
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_str(r, o, path, "id", &m->id, 1)) ||
	    (ret = rd_str(r, o, path, "origin", &m->origin, 0)) ||
	    (ret = rd_str(r, o, path, "arch", &m->arch, 0)) ||
	    (ret = rd_bool(r, o, path, "has_ptx", &has_ptx)) ||
	    (ret = rd_str(r, o, path, "ptx", &m->ptx, 0)) ||
	    (ret = rd_str(r, o, path, "library", &m->library, 0)) ||
	    (ret = rd_str(r, o, path, "no_ptx_reason", &m->no_ptx_reason, 0)) ||
	    (ret = rd_strings(r, o, path, "kernels", &m->kernels, &m->nr_kernels,
			      &m->has_kernels)) ||
	    (ret = rd_num(r, o, path, "gpu_time_ns", &m->gpu_time_ns, NUM_COUNT)))
		return ret;
	m->has_ptx = has_ptx < 0 ? m->ptx != NULL : has_ptx;
	if (!*m->id)
		return fail(r, path, "id", "empty: a module id is required");
	return 0;
}

static int read_file(const struct rd *r, json_t *o, const char *path, struct capture_file *f)
{
	int ret, removed;

	f->source = SEC(o);
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_str(r, o, path, "path", &f->path, 1)) ||
	    (ret = rd_bool(r, o, path, "removed", &removed)) ||
	    (ret = rd_num(r, o, path, "size", &f->size, NUM_COUNT)) ||
	    (ret = rd_str(r, o, path, "sha256", &f->sha256, 0)) ||
	    (ret = rd_str(r, o, path, "copy", &f->copy, 0)))
		return ret;
	f->removed = removed > 0;
	if (f->copy && (f->copy[0] == '/' || strstr(f->copy, "..")))
		return fail(r, path, "copy", "'%s' is not a path inside the capture directory",
			    f->copy);
	return 0;
}

static int read_run(const struct rd *r, json_t *o, const char *path, struct capture_run *run)
{
	json_t *files, *v;
	char sub[160];
	long long exit_status;
	size_t i;
	int ret;

	run->source = SEC(o);
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_intv(r, o, path, "index", &run->index, 0, CAPTURE_LIST_MAX, -2)) ||
	    (ret = rd_str(r, o, path, "variant", &run->variant, 0)) ||
	    (ret = rd_str(r, o, path, "description", &run->description, 0)) ||
	    (ret = rd_str(r, o, path, "log", &run->log, 0)) ||
	    (ret = rd_str(r, o, path, "stdout", &run->stdout_path, 0)) ||
	    (ret = rd_str(r, o, path, "stderr", &run->stderr_path, 0)) ||
	    (ret = rd_str(r, o, path, "events", &run->events, 0)) ||
	    (ret = rd_str(r, o, path, "status", &run->status, 0)) ||
	    (ret = rd_int(r, o, path, "exit_status", &exit_status, -2147483648LL, 2147483647LL, 1LL << 40)) ||
	    (ret = rd_num(r, o, path, "wall_seconds", &run->wall_seconds, NUM_COUNT)) ||
	    (ret = rd_intv(r, o, path, "gpu", &run->gpu, 0, 1023, -1)) ||
	    (ret = rd_str(r, o, path, "stdout_sha256", &run->stdout_sha256, 0)) ||
	    (ret = rd_bool(r, o, path, "files_walk_truncated", &run->files_walk_truncated)) ||
	    (ret = rd_bool(r, o, path, "files_compared", &run->files_compared)) ||
	    (ret = rd_array(r, o, path, "files", &files)))
		return ret;
	if (run->index == -2)
		return fail(r, path, "index", "missing: every run has an index");
	run->has_gpu = run->gpu >= 0;
	run->has_exit_status = exit_status != 1LL << 40;
	run->exit_status = run->has_exit_status ? (int)exit_status : 0;
	run->has_files = files != NULL;
	if (!files)
		return 0;
	run->files = xcalloc(json_array_size(files) + 1, sizeof(*run->files));
	json_array_foreach(files, i, v) {
		snprintf(sub, sizeof(sub), "%s.files[%zu]", path, i);
		if ((ret = read_file(r, v, sub, &run->files[run->nr_files++])))
			return ret;
	}
	return 0;
}

const char *const capture_counter_keys[CAPTURE_NR_COUNTER_KEYS] = {
	"l1_requests", "l1_sectors", "l1_hits", "l1_misses", "l2_sectors_from_l1",
	"dram_bytes_read", "duration_ns",
};

static double *counter_field(struct capture_counters *c, size_t i)
{
	double *f[] = { &c->l1_requests, &c->l1_sectors, &c->l1_hits, &c->l1_misses,
			&c->l2_sectors_from_l1, &c->dram_bytes_read, &c->duration_ns };
	return f[i];
}

static double counter_value(const struct capture_counters *c, size_t i)
{
	return *counter_field((struct capture_counters *)c, i);
}

static int read_counters(const struct rd *r, json_t *o, const char *path,
			 struct capture_counters *c)
{
	size_t i;
	int ret;

	c->source = SEC(o);
	if ((ret = item_object(r, o, path)))
		return ret;
	for (i = 0; i < ARRAY_SIZE(capture_counter_keys); i++)
		if ((ret = rd_num(r, o, path, capture_counter_keys[i], counter_field(c, i), NUM_COUNT)))
			return ret;
	if ((ret = rd_int(r, o, path, "launches", &c->launches, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = rd_int(r, o, path, "run", &c->run, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_int(r, o, path, "sampled_launches", &c->sampled_launches, 0,
			  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = rd_int(r, o, path, "timed_launches", &c->timed_launches, 0,
			  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = rd_str(r, o, path, "measured_as", &c->measured_as, 0)))
		return ret;
	return 0;
}

static int read_load(const struct rd *r, json_t *o, const char *path, struct capture_load *l)
{
	long long ord, ptx_line, line;
	int ret;

	l->source = SEC(o);
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_int(r, o, path, "ordinal", &ord, 0, 0x7fffffff, -1)) ||
	    (ret = rd_int(r, o, path, "ptx_line", &ptx_line, 0, 0x7fffffff, -1)) ||
	    (ret = rd_str(r, o, path, "instruction", &l->instruction, 0)) ||
	    (ret = rd_str(r, o, path, "space", &l->space, 0)) ||
	    (ret = rd_str(r, o, path, "cache_op", &l->cache_op, 0)) ||
	    (ret = rd_bool(r, o, path, "nc", &l->nc)) ||
	    (ret = rd_intv(r, o, path, "vector", &l->vector, 0, 64, -1)) ||
	    (ret = rd_intv(r, o, path, "bits", &l->bits, 0, 4096, -1)) ||
	    (ret = rd_str(r, o, path, "file", &l->file, 0)) ||
	    (ret = rd_int(r, o, path, "line", &line, 1, 0x7fffffff, 0)) ||
	    (ret = rd_intv(r, o, path, "column", &l->column, 1, 0x7fffffff, 0)) ||
	    (ret = rd_intv(r, o, path, "param", &l->param, 0, 0xffff, -1)) ||
	    (ret = rd_bool(r, o, path, "read_only", &l->read_only)) ||
	    (ret = rd_bool(r, o, path, "patchable", &l->patchable)) ||
	    (ret = rd_str(r, o, path, "unpatchable_reason", &l->unpatchable_reason, 0)) ||
	    (ret = rd_str(r, o, path, "l1_eviction", &l->l1_eviction, 0)) ||
	    (ret = rd_bool(r, o, path, "measured", &l->measured)) ||
	    (ret = rd_intv(r, o, path, "node", &l->node, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_num(r, o, path, "hit", &l->hit, NUM_COUNT)) ||
	    (ret = rd_intv(r, o, path, "run", &l->run, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_num(r, o, path, "access", &l->access, NUM_COUNT)) ||
	    (ret = rd_num(r, o, path, "requests", &l->requests, NUM_COUNT)) ||
	    (ret = rd_num(r, o, path, "lines", &l->lines, NUM_COUNT)) ||
	    (ret = rd_num(r, o, path, "bytes", &l->bytes, NUM_COUNT)))
		return ret;
	if (ord < 0)
		return fail(r, path, "ordinal", "missing: every load has an ordinal");
	l->ordinal = (unsigned)ord;
	l->ptx_line = (long)ptx_line;
	l->line = (long)line;
	return 0;
}

static int read_pair(const struct rd *r, json_t *o, const char *path, struct capture_pair *p)
{
	long long i, j;
	json_t *noise;
	int ret;

	p->source = SEC(o);
	p->noise_measured = NAN;
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_int(r, o, path, "i", &i, 0, 0x7fffffff, -1)) ||
	    (ret = rd_int(r, o, path, "j", &j, 0, 0x7fffffff, -1)) ||
	    (ret = rd_num(r, o, path, "hit", &p->hit, NUM_COUNT)) ||
	    (ret = rd_intv(r, o, path, "run", &p->run, 0, CAPTURE_LIST_MAX, -1)))
		return ret;
	if (i < 0 || j < 0)
		return fail(r, path, i < 0 ? "i" : "j", "missing: a pair names two load ordinals");
	if (i == j)
		return fail(r, path, "j", "the pair names load %lld twice", i);
	p->i = (unsigned)i;
	p->j = (unsigned)j;
	noise = member(o, "noise");
	if (noise) {
		char sub[256];

		snprintf(sub, sizeof(sub), "%s.noise", path);
		if ((ret = item_object(r, noise, sub)) ||
		    (ret = rd_num(r, noise, sub, "measured", &p->noise_measured, NUM_FINITE)) ||
		    (ret = rd_str(r, noise, sub, "resolution", &p->noise_resolution, 1)))
			return ret;
	}
	return 0;
}

static int read_alloc_uses(const struct rd *r, json_t *o, const char *path,
			   struct capture_alloc_use **out, size_t *nr, int *has)
{
	json_t *arr, *v;
	char sub[200];
	size_t i;
	int ret;

	*has = json_object_get(o, "allocs_used") != NULL;
	if ((ret = rd_array(r, o, path, "allocs_used", &arr)) || !arr)
		return ret;
	*out = xcalloc(json_array_size(arr) + 1, sizeof(**out));
	json_array_foreach(arr, i, v) {
		struct capture_alloc_use *u = &(*out)[(*nr)++];

		snprintf(sub, sizeof(sub), "%s.allocs_used[%zu]", path, i);
		u->source = SEC(v);
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_intv(r, v, sub, "param", &u->param, 0, 0xffff, -1)) ||
		    (ret = rd_int(r, v, sub, "alloc", &u->alloc, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = rd_int(r, v, sub, "launches", &u->launches, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = rd_int(r, v, sub, "offset", &u->offset, 0, (long long)CAPTURE_COUNT_MAX, -1)))
			return ret;
		if (u->alloc < 0)
			return fail(r, sub, "alloc", "missing: an allocation seq is required");
	}
	return 0;
}

/* An array of integers in [lo, hi]; *out NULL (and *has 0) when absent or null. */
static int rd_ints(const struct rd *r, json_t *o, const char *path, const char *key,
		   long long **out, size_t *nr, int *has, long long lo, long long hi)
{
	json_t *arr, *v;
	size_t i;
	int ret;

	*out = NULL;
	*nr = 0;
	if (has)
		*has = 0;
	if ((ret = rd_array(r, o, path, key, &arr)) || !arr)
		return ret;
	if (has)
		*has = 1;
	*out = xcalloc(json_array_size(arr) + 1, sizeof(**out));
	json_array_foreach(arr, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
			return fail(r, path, key, "item %zu is not an integer in [%lld, %lld]", i,
				    lo, hi);
		(*out)[(*nr)++] = json_integer_value(v);
	}
	return 0;
}

static int read_softcache_verification(const struct rd *r, json_t *o, const char *path,
				       struct capture_softcache_verification *v)
{
	json_t *rw, *out;
	char sub[256];              /* path (a caller's 240) and ".rewrite" */
	int ret;

	v->noise = NAN;
	v->speedup.min = v->speedup.median = v->speedup.max = NAN;
	v->rewrite_loads = v->rewrite_shared_bytes = -1;
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_str(r, o, path, "status", &v->status, 0)) ||
	    (ret = rd_str(r, o, path, "reason", &v->reason, 0)) ||
	    (ret = rd_bool(r, o, path, "kept", &v->kept)) ||
	    (ret = rd_int(r, o, path, "repeat", &v->repeat, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_num(r, o, path, "noise", &v->noise, NUM_COUNT)) ||
	    (ret = read_speedup(r, o, path, "speedup", &v->speedup)))
		return ret;
	if ((out = member(o, "output"))) {
		snprintf(sub, sizeof(sub), "%s.output", path);
		if ((ret = item_object(r, out, sub)) ||
		    (ret = rd_str(r, out, sub, "status", &v->output_status, 0)))
			return ret;
	}
	if (!(rw = member(o, "rewrite")))
		return 0;
	v->has_rewrite = 1;
	snprintf(sub, sizeof(sub), "%s.rewrite", path);
	if ((ret = item_object(r, rw, sub)) ||
	    (ret = rd_ints(r, rw, sub, "params", &v->rewrite_params, &v->nr_rewrite_params, NULL,
			   0, 4096)) ||
	    (ret = rd_int(r, rw, sub, "loads", &v->rewrite_loads, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_int(r, rw, sub, "shared_bytes", &v->rewrite_shared_bytes, 0, 1LL << 32, -1)) ||
	    (ret = rd_str(r, rw, sub, "ptx", &v->rewrite_ptx, 0)) ||
	    (ret = rd_str(r, rw, sub, "note", &v->rewrite_note, 0)))
		return ret;
	return 0;
}

static int read_software_cache(const struct rd *r, json_t *o, const char *path,
			       struct capture_software_cache *sc)
{
	struct capture_softcache_occupancy *occ = &sc->occupancy;
	json_t *arr, *v;
	char sub[240];
	size_t i;
	int ret;

	sc->source = SEC(o);
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_bool(r, o, path, "enabled", &sc->enabled)) ||
	    (ret = rd_int(r, o, path, "cln", &sc->cln, 0, 1LL << 32, -1)) ||
	    (ret = rd_int(r, o, path, "line_bytes", &sc->line_bytes, 1, 1LL << 32, -1)) ||
	    (ret = rd_str(r, o, path, "reason", &sc->reason, 0)) ||
	    (ret = rd_ints(r, o, path, "selected", &sc->selected, &sc->nr_selected,
			   &sc->has_selected, 0, 4096)) ||
	    (ret = rd_array(r, o, path, "candidates", &arr)))
		return ret;
	sc->candidates = xcalloc(json_array_size(arr) + 1, sizeof(*sc->candidates));
	json_array_foreach(arr, i, v) {
		struct capture_softcache_candidate *c = &sc->candidates[sc->nr_candidates++];

		snprintf(sub, sizeof(sub), "%s.candidates[%zu]", path, i);
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_int(r, v, sub, "param", &c->param, 0, 4096, -1)) ||
		    (ret = rd_bool(r, v, sub, "read_only", &c->read_only)) ||
		    (ret = rd_num(r, v, sub, "sim_hits", &c->sim_hits, NUM_COUNT)) ||
		    (ret = rd_num(r, v, sub, "sim_accesses", &c->sim_accesses, NUM_COUNT)) ||
		    (ret = rd_num(r, v, sub, "hit_rate", &c->hit_rate, NUM_COUNT)) ||
		    (ret = rd_bool(r, v, sub, "selected", &c->selected)) ||
		    (ret = rd_str(r, v, sub, "why", &c->why, 0)))
			return ret;
	}
	occ->threads_per_block = occ->blocks_per_sm = occ->threads_per_sm = -1;
	occ->cln_per_sm = occ->cln_per_block = -1;
	occ->shared_per_block = occ->shared_used_per_sm = occ->shared_free_per_sm = NAN;
	if ((v = member(o, "occupancy"))) {
		snprintf(sub, sizeof(sub), "%s.occupancy", path);
		sc->has_occupancy = 1;
		occ->source = SEC(v);
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_int(r, v, sub, "threads_per_block", &occ->threads_per_block, 0,
				  1 << 20, -1)) ||
		    (ret = rd_int(r, v, sub, "blocks_per_sm", &occ->blocks_per_sm, 0, 1 << 20, -1)) ||
		    (ret = rd_int(r, v, sub, "threads_per_sm", &occ->threads_per_sm, 0, 1 << 20,
				  -1)) ||
		    (ret = rd_int(r, v, sub, "cln_per_sm", &occ->cln_per_sm, 0, 1LL << 32, -1)) ||
		    (ret = rd_int(r, v, sub, "cln_per_block", &occ->cln_per_block, 0, 1LL << 32,
				  -1)) ||
		    (ret = rd_num(r, v, sub, "shared_per_block", &occ->shared_per_block,
				  NUM_COUNT)) ||
		    (ret = rd_num(r, v, sub, "shared_used_per_sm", &occ->shared_used_per_sm,
				  NUM_COUNT)) ||
		    (ret = rd_num(r, v, sub, "shared_free_per_sm", &occ->shared_free_per_sm,
				  NUM_COUNT)) ||
		    (ret = rd_str(r, v, sub, "limited_by", &occ->limited_by, 0)) ||
		    (ret = rd_str(r, v, sub, "registers", &occ->registers, 0)))
			return ret;
	}
	if ((v = member(o, "verification"))) {
		snprintf(sub, sizeof(sub), "%s.verification", path);
		sc->has_verification = 1;
		if ((ret = read_softcache_verification(r, v, sub, &sc->verification)))
			return ret;
	}
	return 0;
}

static int read_register_cache(const struct rd *r, json_t *o, const char *path,
			       struct capture_register_cache *rc)
{
	json_t *arr, *v;
	char sub[240];
	size_t i;
	int ret;

	rc->source = SEC(o);
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_str(r, o, path, "status", &rc->status, 0)) ||
	    (ret = rd_array(r, o, path, "hints", &arr)))
		return ret;
	rc->hints = xcalloc(json_array_size(arr) + 1, sizeof(*rc->hints));
	json_array_foreach(arr, i, v) {
		struct capture_regcache_hint *h = &rc->hints[rc->nr_hints++];

		snprintf(sub, sizeof(sub), "%s.hints[%zu]", path, i);
		h->source = SEC(v);
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_int(r, v, sub, "param", &h->param, 0, 4096, -1)) ||
		    (ret = rd_int(r, v, sub, "k", &h->k, 0, 1 << 20, 0)) ||
		    (ret = rd_bool(r, v, sub, "k_exact", &h->k_exact)) ||
		    (ret = rd_ints(r, v, sub, "loads", &h->loads, &h->nr_loads, NULL, 0,
				   (long long)CAPTURE_COUNT_MAX)))
			return ret;
	}
	return 0;
}

static int read_measure(const struct rd *r, json_t *doc, struct capture *cap)
{
	struct capture_measure *m = &cap->measure;
	json_t *o = member(doc, "measure"), *kernels, *k, *variants, *v;
	const char *kname, *vname;
	char sub[400];
	double s;
	int ret;

	if (!o)
		return 0;
	cap->has_measure = 1;
	m->source = SEC(o);
	if ((ret = item_object(r, o, "measure")) ||
	    (ret = rd_str(r, o, "measure", "method", &m->method, 0)))
		return ret;
	if (!(kernels = member(o, "kernels")))
		return 0;
	if ((ret = item_object(r, kernels, "measure.kernels")))
		return ret;
	json_object_foreach(kernels, kname, k) {
		snprintf(sub, sizeof(sub), "measure.kernels.%.300s", kname);
		if ((ret = item_object(r, k, sub)))
			return ret;
		if (!(variants = member(k, "variants")))
			continue;
		snprintf(sub, sizeof(sub), "measure.kernels.%.300s.variants", kname);
		if ((ret = item_object(r, variants, sub)))
			return ret;
		json_object_foreach(variants, vname, v) {
			snprintf(sub, sizeof(sub), "measure.kernels.%.200s.variants.%.150s", kname,
				 vname);
			if ((ret = item_object(r, v, sub)) ||
			    (ret = rd_num(r, v, sub, "samples", &s, NUM_COUNT)))
				return ret;
			if (!isnan(s))
				m->samples += floor(s);
		}
	}
	return 0;
}

/* kernels[].ranks (issue 29). */
static int read_ranks(const struct rd *r, json_t *arr, const char *path, struct capture_kernel *k)
{
	json_t *v, *loads, *x;
	char sub[240], lsub[280];
	size_t i, j, a;
	int ret;

	if (!json_is_array(arr))
		return fail(r, path, NULL, "not an array");
	k->ranks = xcalloc(json_array_size(arr) + 1, sizeof(*k->ranks));
	json_array_foreach(arr, i, v) {
		struct capture_kernel_rank *rk = &k->ranks[k->nr_ranks++];
		long long rank;

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		rk->source = SEC(v);
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_int(r, v, sub, "rank", &rank, 0, 1 << 30, -1)) ||
		    (ret = rd_str(r, v, sub, "gpu", &rk->gpu, 0)) ||
		    (ret = rd_int(r, v, sub, "launches", &rk->launches, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = rd_array(r, v, sub, "loads", &loads)))
			return ret;
		if (rank < 0)
			return fail(r, sub, "rank", "missing: the rank of the job");
		rk->rank = (int)rank;
		for (a = 0; a + 1 < k->nr_ranks; a++)
			if (k->ranks[a].rank == rk->rank)
				return fail(r, sub, "rank", "rank %d is listed twice", rk->rank);
		rk->loads = xcalloc(json_array_size(loads) + 1, sizeof(*rk->loads));
		json_array_foreach(loads, j, x) {
			struct capture_rank_load *l = &rk->loads[rk->nr_loads++];
			long long ord;

			snprintf(lsub, sizeof(lsub), "%s.loads[%zu]", sub, j);
			l->source = SEC(x);
			if ((ret = item_object(r, x, lsub)) ||
			    (ret = rd_int(r, x, lsub, "ordinal", &ord, 0, 0x7fffffff, -1)) ||
			    (ret = rd_num(r, x, lsub, "hit_per_launch", &l->hit_per_launch, NUM_COUNT)) ||
			    (ret = rd_num(r, x, lsub, "samples", &l->samples, NUM_POSITIVE)))
				return ret;
			if (ord < 0 || !capture_kernel_find_load(k, (unsigned)ord))
				return fail(r, lsub, "ordinal", "not a load of the kernel");
			if (isnan(l->hit_per_launch) || isnan(l->samples))
				return fail(r, lsub, NULL, "hit_per_launch and samples are required");
			l->ordinal = (unsigned)ord;
			for (a = 0; a + 1 < rk->nr_loads; a++)
				if (rk->loads[a].ordinal == l->ordinal)
					return fail(r, lsub, "ordinal", "load %u is listed twice",
						    l->ordinal);
		}
	}
	return 0;
}

/*
 * An l2_priority entry's loads: "ordinals" (a site measured as one, its
 * "ordinal" first) or the one "ordinal"; each a load of the kernel, and no
 * load in two entries of the section.
 */
static int read_l2_site(const struct rd *r, json_t *v, const char *sub,
			const struct capture_kernel *k, const struct capture_l2_priority *lp,
			struct capture_l2_load *l)
{
	long long *ords = NULL;
	size_t n = 0, i, a, b;
	int has, ret;

	if ((ret = rd_ints(r, v, sub, "ordinals", &ords, &n, &has, 0, 0x7fffffff))) {
		free(ords);
		return ret;
	}
	if (has && (!n || (unsigned)ords[0] != l->ordinal)) {
		free(ords);
		return fail(r, sub, "ordinals", "must start with the entry's ordinal (%u)",
			    l->ordinal);
	}
	l->ordinals = xcalloc(n + 2, sizeof(*l->ordinals));
	if (!has)
		l->ordinals[l->nr_ordinals++] = l->ordinal;
	for (i = 0; i < n; i++) {
		if (!capture_kernel_find_load(k, (unsigned)ords[i])) {
			long long bad = ords[i];

			free(ords);
			return fail(r, sub, "ordinals", "item %zu (%lld) is not a load of the "
				    "kernel", i, bad);
		}
		l->ordinals[l->nr_ordinals++] = (unsigned)ords[i];
	}
	free(ords);
	/* this entry's loads against every entry's, this one's included */
	for (a = 0; a < lp->nr_loads; a++) {
		const struct capture_l2_load *o = &lp->loads[a];

		for (i = 0; i < l->nr_ordinals; i++)
			for (b = 0; b < o->nr_ordinals; b++) {
				if (o == l && b >= i)
					break;
				if (o->ordinals[b] == l->ordinals[i])
					return fail(r, sub, has ? "ordinals" : "ordinal",
						    "load %u is listed twice", l->ordinals[i]);
			}
	}
	return 0;
}

static int read_l2_priority(const struct rd *r, json_t *o, const char *path,
			    const struct capture_kernel *k, struct capture_l2_priority *lp)
{
	json_t *arr, *v, *d, *x;
	char sub[240];
	size_t i, f;
	int ret;

	lp->source = SEC(o);
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_strings(r, o, path, "forms", &lp->forms, &lp->nr_forms, NULL)) ||
	    (ret = rd_num(r, o, path, "baseline_dram_bytes", &lp->baseline_dram_bytes,
			  NUM_COUNT)) ||
	    (ret = rd_num(r, o, path, "noise_dram_bytes", &lp->noise_dram_bytes, NUM_COUNT)))
		return ret;
	if (!lp->nr_forms)
		return fail(r, path, "forms", "missing or empty: the L2 priorities measured");
	for (f = 0; f < lp->nr_forms; f++) {
		enum load_action act;
		enum l2_priority pr;

		/* an L2 priority, an L1 form with one (Triton's eviction_policy),
		 * or "default" (a Triton load without one) */
		if (load_form_parse(lp->forms[f], &act, &pr) || !load_form_is_l2_choice(act, pr))
			return fail(r, path, "forms", "item %zu, '%s', is not an L2 priority "
				    "(L2::evict_first, ..., an L1 form and one: "
				    "L1::evict_first+L2::evict_first, or default)", f, lp->forms[f]);
	}
	if (isnan(lp->baseline_dram_bytes))
		return fail(r, path, "baseline_dram_bytes", "missing: every gain is against it");
	if ((ret = rd_array(r, o, path, "loads", &arr)))
		return ret;
	lp->loads = xcalloc(json_array_size(arr) + 1, sizeof(*lp->loads));
	json_array_foreach(arr, i, v) {
		struct capture_l2_load *l = &lp->loads[lp->nr_loads++];
		long long ord;

		snprintf(sub, sizeof(sub), "%s.loads[%zu]", path, i);
		l->dram_bytes = xcalloc(lp->nr_forms + 1, sizeof(double));
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_int(r, v, sub, "ordinal", &ord, 0, 0x7fffffff, -1)))
			return ret;
		if (ord < 0 || !capture_kernel_find_load(k, (unsigned)ord))
			return fail(r, sub, "ordinal", "not a load of the kernel");
		l->ordinal = (unsigned)ord;
		if ((ret = read_l2_site(r, v, sub, k, lp, l)))
			return ret;
		d = member(v, "dram_bytes");
		if (!json_is_array(d) || json_array_size(d) != lp->nr_forms)
			return fail(r, sub, "dram_bytes", "not an array of one count per form (%zu)",
				    lp->nr_forms);
		json_array_foreach(d, f, x) {
			l->dram_bytes[f] = NAN;
			if (json_is_null(x))
				continue;
			if (!json_is_number(x))
				return fail(r, sub, "dram_bytes", "item %zu is not a number", f);
			l->dram_bytes[f] = json_number_value(x);
			if ((ret = check_num(r, sub, "dram_bytes", l->dram_bytes[f], NUM_COUNT)))
				return ret;
		}
	}
	if ((ret = rd_array(r, o, path, "pairs", &arr)))
		return ret;
	lp->pairs = xcalloc(json_array_size(arr) + 1, sizeof(*lp->pairs));
	json_array_foreach(arr, i, v) {
		struct capture_l2_pair *p = &lp->pairs[lp->nr_pairs++];
		long long pi, pj, fi, fj;
		json_t *forms;

		snprintf(sub, sizeof(sub), "%s.pairs[%zu]", path, i);
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_int(r, v, sub, "i", &pi, 0, 0x7fffffff, -1)) ||
		    (ret = rd_int(r, v, sub, "j", &pj, 0, 0x7fffffff, -1)) ||
		    (ret = rd_num(r, v, sub, "dram_bytes", &p->dram_bytes, NUM_COUNT)))
			return ret;
		forms = member(v, "forms");
		if (!json_is_array(forms) || json_array_size(forms) != 2 ||
		    !json_is_integer(json_array_get(forms, 0)) ||
		    !json_is_integer(json_array_get(forms, 1)))
			return fail(r, sub, "forms", "not two form indices");
		fi = json_integer_value(json_array_get(forms, 0));
		fj = json_integer_value(json_array_get(forms, 1));
		if (pi < 0 || pj < 0 || pi == pj || !capture_kernel_find_load(k, (unsigned)pi) ||
		    !capture_kernel_find_load(k, (unsigned)pj))
			return fail(r, sub, NULL, "i and j must be two loads of the kernel");
		if (fi < 0 || fj < 0 || (size_t)fi >= lp->nr_forms || (size_t)fj >= lp->nr_forms)
			return fail(r, sub, "forms", "an index beyond the section's %zu forms",
				    lp->nr_forms);
		if (isnan(p->dram_bytes))
			return fail(r, sub, "dram_bytes", "missing");
		p->i = (unsigned)pi;
		p->j = (unsigned)pj;
		p->form_i = (unsigned)fi;
		p->form_j = (unsigned)fj;
	}
	return 0;
}

/* An L2 oracle plan's "l2": [{"ordinal", "form"}], each form an L2
 * priority (with or without an L1 part), each load once. */
static int read_oracle_l2(const struct rd *r, json_t *p, const char *psub,
			  struct capture_oracle_plan *pl)
{
	json_t *arr, *v;
	char sub[340];
	size_t i, a;
	int ret;

	if ((ret = rd_array(r, p, psub, "l2", &arr)) || !arr)
		return ret;
	pl->l2 = xcalloc(json_array_size(arr) + 1, sizeof(*pl->l2));
	json_array_foreach(arr, i, v) {
		struct capture_oracle_l2 *e = &pl->l2[pl->nr_l2++];
		enum load_action act;
		enum l2_priority pr;
		long long ord;

		snprintf(sub, sizeof(sub), "%s.l2[%zu]", psub, i);
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_int(r, v, sub, "ordinal", &ord, 0, 0x7fffffff, -1)) ||
		    (ret = rd_str(r, v, sub, "form", &e->form, 1)))
			return ret;
		if (ord < 0)
			return fail(r, sub, "ordinal", "missing");
		if (load_form_parse(e->form, &act, &pr) || !load_form_is_l2_choice(act, pr))
			return fail(r, sub, "form", "'%s' is not an L2 priority (or default)",
				    e->form);
		e->ordinal = (unsigned)ord;
		for (a = 0; a + 1 < pl->nr_l2; a++)
			if (pl->l2[a].ordinal == e->ordinal)
				return fail(r, sub, "ordinal", "load %u is listed twice", e->ordinal);
	}
	return 0;
}

/* An oracle's kernel: oracle.kernels[] and a kernel's own "oracle". */
static int read_oracle_kernel(const struct rd *r, json_t *v, const char *sub,
			      struct capture_oracle_kernel *k)
{
	json_t *plans, *p;
	char psub[300];
	size_t j;
	int ret;

	k->source = SEC(v);
	k->best_speedup = k->advised_speedup = k->ratio = NAN;
	if ((ret = item_object(r, v, sub)) ||
	    (ret = rd_str(r, v, sub, "kernel", &k->kernel, 1)) ||
	    (ret = rd_str(r, v, sub, "dimension", &k->dimension, 0)) ||
	    (ret = rd_int(r, v, sub, "loads", &k->loads, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_int(r, v, sub, "rounds", &k->rounds, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_num(r, v, sub, "best_speedup", &k->best_speedup, NUM_COUNT)) ||
	    (ret = rd_num(r, v, sub, "advised_speedup", &k->advised_speedup, NUM_COUNT)) ||
	    (ret = rd_num(r, v, sub, "ratio", &k->ratio, NUM_COUNT)) ||
	    (ret = rd_array(r, v, sub, "plans", &plans)))
		return ret;
	k->plans = xcalloc(json_array_size(plans) + 1, sizeof(*k->plans));
	json_array_foreach(plans, j, p) {
		struct capture_oracle_plan *pl = &k->plans[k->nr_plans++];

		snprintf(psub, sizeof(psub), "%s.plans[%zu]", sub, j);
		if ((ret = item_object(r, p, psub)) ||
		    (ret = rd_ints(r, p, psub, "cached", &pl->cached, &pl->nr_cached, NULL, 0,
				   CAPTURE_LIST_MAX)) ||
		    (ret = rd_num(r, p, psub, "median_ns", &pl->median_ns, NUM_COUNT)) ||
		    (ret = rd_num(r, p, psub, "speedup", &pl->speedup, NUM_COUNT)) ||
		    (ret = rd_str(r, p, psub, "output", &pl->output, 0)) ||
		    (ret = read_oracle_l2(r, p, psub, pl)))
			return ret;
	}
	if ((ret = rd_int(r, v, sub, "best_plan", &k->best_plan, 0, (long long)k->nr_plans - 1, -1)))
		return ret;
	return rd_int(r, v, sub, "advised_plan", &k->advised_plan, 0, (long long)k->nr_plans - 1,
		      -1);
}

/* "baseline_check" (its "output" is read with the other output checks). */
static int read_baseline_check(const struct rd *r, json_t *o, struct capture_baseline_check *bc)
{
	int ret;

	bc->source = SEC(o);
	if ((ret = item_object(r, o, "baseline_check")) ||
	    (ret = rd_ints(r, o, "baseline_check", "runs", &bc->runs, &bc->nr_runs, NULL, 0,
			   0x7fffffff)) ||
	    (ret = rd_bool(r, o, "baseline_check", "output_identical", &bc->output_identical)) ||
	    (ret = rd_num(r, o, "baseline_check", "max_counter_spread", &bc->max_counter_spread,
			  NUM_COUNT)))
		return ret;
	return rd_strings(r, o, "baseline_check", "notes", &bc->notes, &bc->nr_notes,
			  &bc->has_notes);
}

static int read_oracle(const struct rd *r, json_t *o, struct capture_oracle *orc)
{
	json_t *arr, *v;
	char sub[64];
	size_t i;
	int ret;

	orc->source = SEC(o);
	orc->has_kernels = member(o, "kernels") != NULL;
	if ((ret = item_object(r, o, "oracle")) ||
	    (ret = rd_str(r, o, "oracle", "status", &orc->status, 0)) ||
	    (ret = rd_int(r, o, "oracle", "rounds", &orc->rounds, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_int(r, o, "oracle", "plans_output_rejected", &orc->plans_output_rejected, 0,
			  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = rd_array(r, o, "oracle", "kernels", &arr)))
		return ret;
	orc->kernels = xcalloc(json_array_size(arr) + 1, sizeof(*orc->kernels));
	json_array_foreach(arr, i, v) {
		snprintf(sub, sizeof(sub), "oracle.kernels[%zu]", i);
		if ((ret = read_oracle_kernel(r, v, sub, &orc->kernels[orc->nr_kernels++])))
			return ret;
	}
	return 0;
}

static int read_kernel(const struct rd *r, json_t *o, const char *path, struct capture_kernel *k)
{
	json_t *arr, *v, *gt, *eff;
	char sub[200];
	const char *key;
	size_t i, a;
	int ret;

	k->source = SEC(o);
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_str(r, o, path, "module", &k->module, 1)) ||
	    (ret = rd_str(r, o, path, "name", &k->name, 1)) ||
	    (ret = rd_str(r, o, path, "demangled", &k->demangled, 0)) ||
	    (ret = rd_int(r, o, path, "launches", &k->launches, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = rd_int(r, o, path, "dynamic_shared_bytes", &k->dynamic_shared_bytes, 0,
			  1LL << 32, -1)) ||
	    (ret = rd_int(r, o, path, "static_shared_bytes", &k->static_shared_bytes, 0,
			  1LL << 32, -1)) ||
	    (ret = rd_intv(r, o, path, "registers", &k->registers, 0, 65536, -1)) ||
	    (ret = rd_int(r, o, path, "left_out_loads", &k->left_out_loads, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_num(r, o, path, "monitor_gpu_time_ns", &k->monitor_gpu_time_ns, NUM_COUNT)))
		return ret;
	if ((v = member(o, "oracle"))) {
		snprintf(sub, sizeof(sub), "%s.oracle", path);
		k->oracle = xcalloc(1, sizeof(*k->oracle));
		if ((ret = read_oracle_kernel(r, v, sub, k->oracle)))
			return ret;
	}
	if ((v = member(o, "software_cache"))) {
		snprintf(sub, sizeof(sub), "%s.software_cache", path);
		k->software_cache = xcalloc(1, sizeof(*k->software_cache));
		if ((ret = read_software_cache(r, v, sub, k->software_cache)))
			return ret;
	}
	if ((v = member(o, "register_cache"))) {
		snprintf(sub, sizeof(sub), "%s.register_cache", path);
		k->register_cache = xcalloc(1, sizeof(*k->register_cache));
		if ((ret = read_register_cache(r, v, sub, k->register_cache)))
			return ret;
	}
	if (!*k->name)
		return fail(r, path, "name", "empty: a kernel name is required");
	if ((v = member(o, "verification"))) {
		snprintf(sub, sizeof(sub), "%s.verification", path);
		k->verification = xcalloc(1, sizeof(*k->verification));
		if ((ret = read_verdict(r, v, sub, k->verification)))
			return ret;
	}
	for (a = 0; a < 2; a++) {
		const char *dim = a ? "block" : "grid";
		long long *out = a ? k->block : k->grid;

		if ((ret = rd_array(r, o, path, dim, &arr)))
			return ret;
		if (!arr)
			continue;
		k->has_extents |= 1 << a;
		if (json_array_size(arr) != 3)
			return fail(r, path, dim, "not three extents");
		json_array_foreach(arr, i, v) {
			/* 0: the launch did not say (never a launched extent) */
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > 0x7fffffff)
				return fail(r, path, dim, "extent %zu is not a non-negative integer", i);
			out[i] = json_integer_value(v);
		}
	}
	k->gpu_time_baseline_ns = k->gpu_time_cubin_ns = NAN;
	gt = member(o, "gpu_time_ns");
	k->has_gpu_time = gt != NULL;
	if (gt) {
		snprintf(sub, sizeof(sub), "%s.gpu_time_ns", path);
		if ((ret = item_object(r, gt, sub)) ||
		    (ret = rd_num(r, gt, sub, "baseline", &k->gpu_time_baseline_ns, NUM_COUNT)) ||
		    (ret = rd_num(r, gt, sub, "cubin", &k->gpu_time_cubin_ns, NUM_COUNT)))
			return ret;
	}
	k->efficiency_on = k->efficiency_off = NAN;
	eff = member(o, "efficiency");
	k->has_efficiency = eff != NULL;
	if (eff) {
		snprintf(sub, sizeof(sub), "%s.efficiency", path);
		if ((ret = item_object(r, eff, sub)) ||
		    (ret = rd_num(r, eff, sub, "on", &k->efficiency_on, NUM_COUNT)) ||
		    (ret = rd_num(r, eff, sub, "off", &k->efficiency_off, NUM_COUNT)))
			return ret;
	}

	v = member(o, "counters");
	k->has_counters = v != NULL;
	if (v) {
		json_t *c;

		if (!json_is_object(v))
			return fail(r, path, "counters", "not an object");
		k->counters = xcalloc(json_object_size(v) + 1, sizeof(*k->counters));
		json_object_foreach(v, key, c) {
			struct capture_counters *cc = &k->counters[k->nr_counters++];

			cc->variant = xstrdup(key);
			snprintf(sub, sizeof(sub), "%s.counters.%s", path, key);
			if ((ret = read_counters(r, c, sub, cc)))
				return ret;
		}
	}

	if ((ret = rd_array(r, o, path, "loads", &arr)))
		return ret;
	k->has_loads = arr != NULL;
	if (arr) {
		k->loads = xcalloc(json_array_size(arr) + 1, sizeof(*k->loads));
		json_array_foreach(arr, i, v) {
			struct capture_load *l = &k->loads[k->nr_loads];

			snprintf(sub, sizeof(sub), "%s.loads[%zu]", path, i);
			k->nr_loads++;
			if ((ret = read_load(r, v, sub, l)))
				return ret;
			for (a = 0; a + 1 < k->nr_loads; a++)
				if (k->loads[a].ordinal == l->ordinal)
					return fail(r, sub, "ordinal", "load %u is listed twice",
						    l->ordinal);
		}
	}

	k->has_pairs = json_object_get(o, "pairs") != NULL;
	if ((ret = rd_array(r, o, path, "pairs", &arr)))
		return ret;
	if (arr) {
		k->pairs = xcalloc(json_array_size(arr) + 1, sizeof(*k->pairs));
		json_array_foreach(arr, i, v) {
			struct capture_pair *p = &k->pairs[k->nr_pairs];

			snprintf(sub, sizeof(sub), "%s.pairs[%zu]", path, i);
			k->nr_pairs++;
			if ((ret = read_pair(r, v, sub, p)))
				return ret;
			if (!capture_kernel_find_load(k, p->i) || !capture_kernel_find_load(k, p->j))
				return fail(r, sub, NULL, "names load %u, which the kernel does not have",
					    capture_kernel_find_load(k, p->i) ? p->j : p->i);
			for (a = 0; a + 1 < k->nr_pairs; a++) {
				const struct capture_pair *q = &k->pairs[a];

				if ((q->i == p->i && q->j == p->j) || (q->i == p->j && q->j == p->i))
					return fail(r, sub, NULL, "the pair {%u, %u} is listed twice",
						    p->i, p->j);
			}
		}
	}

	if ((v = member(o, "l2_priority"))) {
		snprintf(sub, sizeof(sub), "%s.l2_priority", path);
		k->l2_priority = xcalloc(1, sizeof(*k->l2_priority));
		k->l2_priority->noise_dram_bytes = NAN;
		if ((ret = read_l2_priority(r, v, sub, k, k->l2_priority)))
			return ret;
	}
	if ((v = member(o, "ranks"))) {
		snprintf(sub, sizeof(sub), "%s.ranks", path);
		if ((ret = read_ranks(r, v, sub, k)))
			return ret;
	}
	if ((ret = read_alloc_uses(r, o, path, &k->allocs_used, &k->nr_allocs_used,
				   &k->has_allocs_used)))
		return ret;

	k->has_data_structures = json_object_get(o, "data_structures") != NULL;
	if ((ret = rd_array(r, o, path, "data_structures", &arr)))
		return ret;
	if (arr) {
		k->data_structures = xcalloc(json_array_size(arr) + 1, sizeof(*k->data_structures));
		json_array_foreach(arr, i, v) {
			struct capture_data_structure *d = &k->data_structures[k->nr_data_structures++];

			snprintf(sub, sizeof(sub), "%s.data_structures[%zu]", path, i);
			d->source = SEC(v);
			if ((ret = item_object(r, v, sub)) ||
			    (ret = rd_intv(r, v, sub, "param", &d->param, 0, 0xffff, -1)) ||
			    (ret = rd_bool(r, v, sub, "read_only", &d->read_only)) ||
			    (ret = rd_num(r, v, sub, "sim_hits", &d->sim_hits, NUM_COUNT)) ||
			    (ret = rd_num(r, v, sub, "sim_accesses", &d->sim_accesses, NUM_COUNT)))
				return ret;
		}
	}
	return 0;
}

static int read_device(const struct rd *r, json_t *o, struct capture *cap)
{
	json_t *copy;
	char *name;
	int ret;

	if (!json_is_object(o))
		return fail(r, "device", NULL, "not an object");
	/* device.json's reader checks the sizes; the capture's copy may
	 * predate its "schema" member */
	copy = json_copy(o);
	if (!json_object_get(copy, "schema"))
		json_object_set_new(copy, "schema", json_string(DEVICE_MODEL_SCHEMA));
	name = xasprintf("%s: device", r->name);
	ret = device_model_from_json(&cap->device, copy, name);
	free(name);
	json_decref(copy);
	if (ret) {
		/* device.json's message, said of the capture's field */
		const char *m = error_message(), *p = strstr(m, "': ");
		char *why = xstrdup(p ? p + 3 : m);

		ret = fail(r, "device", NULL, "%s", why);
		free(why);
		return ret;
	}
	/* the capture says where the model came from as the profile saw it */
	{
		const char *src = json_string_value(json_object_get(o, "source"));

		if (src && !strcmp(src, "defaults"))
			cap->device.source = DEVICE_MODEL_DEFAULTS;
	}
	cap->has_device = 1;
	cap->device_json = SEC(o);
	return rd_str(r, o, "device", "partitioned", &cap->device_partitioned, 0);
}

/* In this order: analysis/capture_cost.c names the steps by index. */
const char *const capture_steps[CAPTURE_NR_STEPS] = {
	"discover", "monitor", "capture", "baseline", "verify", "l2", "oracle", "other",
};

/* A step -> number object (runs_by_step, seconds_by_step): known steps only. */
static int read_by_step(const struct rd *r, json_t *o, const char *path, const char *key,
			long long *ints, double *reals)
{
	json_t *by = member(o, key), *v;
	const char *step;
	char sub[96];
	size_t i;
	int ret;

	for (i = 0; i < CAPTURE_NR_STEPS; i++) {
		if (ints)
			ints[i] = 0;
		if (reals)
			reals[i] = NAN;
	}
	if (!by)
		return 0;
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	if ((ret = item_object(r, by, sub)))
		return ret;
	json_object_foreach(by, step, v) {
		for (i = 0; i < CAPTURE_NR_STEPS; i++)
			if (!strcmp(step, capture_steps[i]))
				break;
		if (i == CAPTURE_NR_STEPS)
			continue;   /* a step of a newer version: kept as written */
		if (ints && (ret = rd_int(r, by, sub, step, &ints[i], 0, CAPTURE_LIST_MAX, 0)))
			return ret;
		if (reals && (ret = rd_num(r, by, sub, step, &reals[i], NUM_COUNT)))
			return ret;
	}
	return 0;
}

static int read_cost(const struct rd *r, json_t *o, struct capture_cost *c)
{
	int ret;

	c->source = SEC(o);
	if ((ret = item_object(r, o, "cost")) ||
	    (ret = rd_int(r, o, "cost", "program_runs", &c->program_runs, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = read_by_step(r, o, "cost", "runs_by_step", c->runs_by_step, NULL)) ||
	    (ret = read_by_step(r, o, "cost", "seconds_by_step", NULL, c->seconds_by_step)) ||
	    (ret = rd_int(r, o, "cost", "launches_counted", &c->launches_counted, 0,
			  (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = rd_num(r, o, "cost", "wall_seconds", &c->wall_seconds, NUM_COUNT)) ||
	    (ret = rd_num(r, o, "cost", "native_seconds", &c->native_seconds, NUM_COUNT)) ||
	    (ret = rd_num(r, o, "cost", "ratio", &c->ratio, NUM_COUNT)))
		return ret;
	return 0;
}

static int read_budget(const struct rd *r, json_t *o, struct capture_budget *b)
{
	json_t *arr, *v;
	char sub[64];
	size_t i;
	int ret;

	b->source = SEC(o);
	if ((ret = item_object(r, o, "budget")) ||
	    (ret = rd_num(r, o, "budget", "factor", &b->factor, NUM_COUNT)) ||
	    (ret = rd_num(r, o, "budget", "seconds", &b->seconds, NUM_COUNT)) ||
	    (ret = rd_num(r, o, "budget", "native_seconds", &b->native_seconds, NUM_COUNT)) ||
	    (ret = rd_array(r, o, "budget", "skipped", &arr)))
		return ret;
	b->skipped = xcalloc(json_array_size(arr) + 1, sizeof(*b->skipped));
	json_array_foreach(arr, i, v) {
		struct capture_budget_skip *s = &b->skipped[b->nr_skipped++];

		snprintf(sub, sizeof(sub), "budget.skipped[%zu]", i);
		s->source = SEC(v);
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_str(r, v, sub, "step", &s->step, 1)) ||
		    (ret = rd_intv(r, v, sub, "runs", &s->runs, 0, CAPTURE_LIST_MAX, -1)) ||
		    (ret = rd_num(r, v, sub, "estimate_seconds", &s->estimate_seconds, NUM_COUNT)) ||
		    (ret = rd_num(r, v, sub, "spent_seconds", &s->spent_seconds, NUM_COUNT)))
			return ret;
	}
	return 0;
}

static int read_output_check(const struct rd *r, json_t *o, const char *path,
			     struct capture_output_check *oc)
{
	json_t *arr, *v, *md;
	char sub[160];
	size_t i;
	int ret;

	oc->source = SEC(o);
	oc->max_abs = oc->max_rel = NAN;
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_str(r, o, path, "status", &oc->status, 0)) ||
	    (ret = rd_num(r, o, path, "rtol", &oc->rtol, NUM_COUNT)) ||
	    (ret = rd_num(r, o, path, "atol", &oc->atol, NUM_COUNT)) ||
	    (ret = rd_int(r, o, path, "volatile_lines", &oc->volatile_lines, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = rd_int(r, o, path, "unstable_lines", &oc->unstable_lines, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = rd_int(r, o, path, "left_out", &oc->left_out, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
	    (ret = rd_strings(r, o, path, "volatile_examples", &oc->volatile_examples,
			      &oc->nr_volatile_examples, NULL)) ||
	    (ret = rd_strings(r, o, path, "unstable_examples", &oc->unstable_examples,
			      &oc->nr_unstable_examples, NULL)) ||
	    (ret = rd_str(r, o, path, "reason", &oc->reason, 0)) ||
	    (ret = rd_array(r, o, path, "files", &arr)))
		return ret;
	if ((md = member(o, "max_difference"))) {
		snprintf(sub, sizeof(sub), "%s.max_difference", path);
		oc->has_max_difference = 1;
		if ((ret = item_object(r, md, sub)) ||
		    (ret = rd_num(r, md, sub, "abs", &oc->max_abs, NUM_COUNT)) ||
		    (ret = rd_num(r, md, sub, "rel", &oc->max_rel, NUM_COUNT)) ||
		    (ret = rd_str(r, md, sub, "where", &oc->max_where, 0)))
			return ret;
	}
	oc->files = xcalloc(json_array_size(arr) + 1, sizeof(*oc->files));
	json_array_foreach(arr, i, v) {
		struct capture_output_file *f = &oc->files[oc->nr_files++];
		int removed;

		snprintf(sub, sizeof(sub), "%s.files[%zu]", path, i);
		f->source = SEC(v);
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_str(r, v, sub, "path", &f->path, 1)) ||
		    (ret = rd_str(r, v, sub, "status", &f->status, 0)) ||
		    (ret = rd_num(r, v, sub, "size", &f->size, NUM_COUNT)) ||
		    (ret = rd_str(r, v, sub, "sha256", &f->sha256, 0)) ||
		    (ret = rd_bool(r, v, sub, "removed", &removed)) ||
		    (ret = rd_str(r, v, sub, "compared_as", &f->compared_as, 0)) ||
		    (ret = rd_num(r, v, sub, "max_abs_difference", &f->max_abs_difference, NUM_COUNT)) ||
		    (ret = rd_num(r, v, sub, "max_rel_difference", &f->max_rel_difference, NUM_COUNT)) ||
		    (ret = rd_num(r, v, sub, "advice_size", &f->advice_size, NUM_COUNT)) ||
		    (ret = rd_str(r, v, sub, "advice_sha256", &f->advice_sha256, 0)))
			return ret;
		f->removed = removed > 0;
	}
	return 0;
}

static void output_check_release(struct capture_output_check *oc)
{
	size_t i;

	free(oc->status);
	free(oc->max_where);
	for (i = 0; i < oc->nr_volatile_examples; i++)
		free(oc->volatile_examples[i]);
	free(oc->volatile_examples);
	for (i = 0; i < oc->nr_unstable_examples; i++)
		free(oc->unstable_examples[i]);
	free(oc->unstable_examples);
	for (i = 0; i < oc->nr_files; i++) {
		free(oc->files[i].path);
		free(oc->files[i].status);
		free(oc->files[i].sha256);
		free(oc->files[i].compared_as);
		free(oc->files[i].advice_sha256);
	}
	free(oc->files);
	free(oc->reason);
}

static int read_speedup(const struct rd *r, json_t *o, const char *path, const char *key,
			struct capture_speedup *sp)
{
	json_t *v = member(o, key);
	char sub[160];
	int ret;

	sp->min = sp->median = sp->max = NAN;
	sp->plain = 0;
	if (!v)
		return 0;
	if (json_is_number(v)) {
		/* a verdict of older captures: the median alone */
		sp->plain = 1;
		if ((ret = rd_num(r, o, path, key, &sp->median, NUM_COUNT)))
			return ret;
		return 0;
	}
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	if ((ret = item_object(r, v, sub)) ||
	    (ret = rd_num(r, v, sub, "min", &sp->min, NUM_COUNT)) ||
	    (ret = rd_num(r, v, sub, "median", &sp->median, NUM_COUNT)) ||
	    (ret = rd_num(r, v, sub, "max", &sp->max, NUM_COUNT)))
		return ret;
	return 0;
}

static int read_verdict(const struct rd *r, json_t *o, const char *path, struct capture_verdict *v)
{
	json_t *arr, *x, *rv;
	char sub[240], vsub[260];
	size_t i;
	int ret;

	v->source = SEC(o);
	v->noise = v->spread = NAN;
	if ((ret = item_object(r, o, path)) ||
	    (ret = rd_str(r, o, path, "name", &v->name, 0)) ||
	    (ret = rd_str(r, o, path, "module", &v->module, 0)) ||
	    (ret = read_speedup(r, o, path, "speedup", &v->speedup)) ||
	    (ret = rd_num(r, o, path, "noise", &v->noise, NUM_COUNT)) ||
	    (ret = rd_num(r, o, path, "spread", &v->spread, NUM_COUNT)) ||
	    (ret = rd_bool(r, o, path, "kept", &v->kept)) ||
	    (ret = rd_str(r, o, path, "reason", &v->reason, 0)) ||
	    (ret = rd_array(r, o, path, "ranks", &arr)))
		return ret;
	/* a job's ranks apart (issue 29): each rank's own verdict, or why none */
	v->ranks = xcalloc(json_array_size(arr) + 1, sizeof(*v->ranks));
	json_array_foreach(arr, i, x) {
		struct capture_rank_verdict *rk = &v->ranks[v->nr_ranks++];
		struct capture_speedup sp;
		long long rank;

		snprintf(sub, sizeof(sub), "%.200s.ranks[%zu]", path, i);
		rk->median = NAN;
		rk->kept = -1;
		if ((ret = item_object(r, x, sub)) ||
		    (ret = rd_int(r, x, sub, "rank", &rank, 0, 1 << 30, -1)) ||
		    (ret = rd_str(r, x, sub, "gpu", &rk->gpu, 0)) ||
		    (ret = rd_str(r, x, sub, "not_timed", &rk->not_timed, 0)))
			return ret;
		if (rank < 0)
			return fail(r, sub, "rank", "missing: the rank of the job");
		rk->rank = (int)rank;
		if (!(rv = member(x, "verdict")))
			continue;
		snprintf(vsub, sizeof(vsub), "%s.verdict", sub);
		if ((ret = item_object(r, rv, vsub)) ||
		    (ret = read_speedup(r, rv, vsub, "speedup", &sp)) ||
		    (ret = rd_bool(r, rv, vsub, "kept", &rk->kept)))
			return ret;
		rk->median = sp.median;
	}
	return 0;
}

static int read_verification(const struct rd *r, json_t *o, struct capture_verification *ver)
{
	json_t *arr, *v, *prog, *sp;
	char sub[96];
	size_t i;
	int ret;

	ver->source = SEC(o);
	ver->gpu_speedup.min = ver->gpu_speedup.median = ver->gpu_speedup.max = NAN;
	if ((ret = item_object(r, o, "verification")) ||
	    (ret = rd_str(r, o, "verification", "status", &ver->status, 0)) ||
	    (ret = rd_bool(r, o, "verification", "kept", &ver->kept)) ||
	    (ret = read_speedup(r, o, "verification", "speedup", &ver->speedup)) ||
	    (ret = rd_array(r, o, "verification", "kernels", &arr)))
		return ret;
	ver->kernels = xcalloc(json_array_size(arr) + 1, sizeof(*ver->kernels));
	json_array_foreach(arr, i, v) {
		snprintf(sub, sizeof(sub), "verification.kernels[%zu]", i);
		if ((ret = read_verdict(r, v, sub, &ver->kernels[ver->nr_kernels++])))
			return ret;
	}
	if ((prog = member(o, "program"))) {
		if ((ret = item_object(r, prog, "verification.program")) ||
		    (ret = read_speedup(r, prog, "verification.program", "gpu_speedup",
					&ver->gpu_speedup)))
			return ret;
	}
	if (!(sp = member(o, "source_patch")))
		return 0;
	ver->has_source_patch = 1;
	ver->source_patch.source = SEC(sp);
	if ((ret = item_object(r, sp, "verification.source_patch")) ||
	    (ret = rd_int(r, sp, "verification.source_patch", "rewritten",
			  &ver->source_patch.rewritten, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = rd_str(r, sp, "verification.source_patch", "status", &ver->source_patch.status, 0)) ||
	    (ret = rd_num(r, sp, "verification.source_patch", "speedup", &ver->source_patch.speedup,
			  NUM_COUNT)) ||
	    (ret = rd_array(r, sp, "verification.source_patch", "left_out", &arr)))
		return ret;
	ver->source_patch.left_out = xcalloc(json_array_size(arr) + 1,
					     sizeof(*ver->source_patch.left_out));
	json_array_foreach(arr, i, v) {
		struct capture_left_out *l = &ver->source_patch.left_out[ver->source_patch.nr_left_out++];

		snprintf(sub, sizeof(sub), "verification.source_patch.left_out[%zu]", i);
		l->source = SEC(v);
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_str(r, v, sub, "function", &l->function, 0)) ||
		    (ret = rd_int(r, v, sub, "ordinal", &l->ordinal, 0, 0x7fffffff, -1)) ||
		    (ret = rd_str(r, v, sub, "action", &l->action, 0)) ||
		    (ret = rd_str(r, v, sub, "reason", &l->reason, 0)))
			return ret;
	}
	return 0;
}

static int read_l2(const struct rd *r, json_t *o, struct capture_l2 *l2)
{
	json_t *arr, *v, *ver;
	char sub[64], vpath[96];
	size_t i;
	int ret;

	l2->source = SEC(o);
	l2->has_kept = json_object_get(o, "kept") != NULL;
	if ((ret = item_object(r, o, "l2")) ||
	    (ret = rd_str(r, o, "l2", "status", &l2->status, 0)) ||
	    (ret = rd_str(r, o, "l2", "reason", &l2->reason, 0)) ||
	    (ret = rd_num(r, o, "l2", "baseline_dram_bytes", &l2->baseline_dram_bytes, NUM_COUNT)) ||
	    (ret = rd_str(r, o, "l2", "baseline", &l2->baseline, 0)) ||
	    (ret = rd_str(r, o, "l2", "kept", &l2->kept, 0)) ||
	    (ret = rd_array(r, o, "l2", "windows", &arr)))
		return ret;
	l2->windows = xcalloc(json_array_size(arr) + 1, sizeof(*l2->windows));
	json_array_foreach(arr, i, v) {
		struct capture_l2_window *w = &l2->windows[l2->nr_windows++];

		snprintf(sub, sizeof(sub), "l2.windows[%zu]", i);
		w->source = SEC(v);
		w->noise = w->dram_bytes = NAN;
		w->speedup.min = w->speedup.median = w->speedup.max = NAN;
		w->ended_after_rounds = -1;
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_str(r, v, sub, "variant", &w->variant, 0)) ||
		    (ret = rd_int(r, v, sub, "alloc", &w->alloc, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = rd_num(r, v, sub, "num_bytes", &w->num_bytes, NUM_COUNT)) ||
		    (ret = rd_num(r, v, sub, "set_aside_bytes", &w->set_aside_bytes, NUM_COUNT)) ||
		    (ret = rd_num(r, v, sub, "hit_ratio", &w->hit_ratio, NUM_COUNT)) ||
		    (ret = rd_strings(r, v, sub, "kernels", &w->kernels, &w->nr_kernels, NULL)) ||
		    (ret = rd_strings(r, v, sub, "kernels_without_ptx", &w->kernels_without_ptx,
				      &w->nr_kernels_without_ptx, NULL)))
			return ret;
		if (!(ver = member(v, "verification")))
			continue;
		w->measured = 1;
		snprintf(vpath, sizeof(vpath), "%s.verification", sub);
		if ((ret = item_object(r, ver, vpath)) ||
		    (ret = rd_bool(r, ver, vpath, "kept", &w->kept)) ||
		    (ret = rd_str(r, ver, vpath, "reason", &w->reason, 0)) ||
		    (ret = rd_num(r, ver, vpath, "dram_bytes", &w->dram_bytes, NUM_COUNT)) ||
		    (ret = read_speedup(r, ver, vpath, "speedup", &w->speedup)) ||
		    (ret = rd_num(r, ver, vpath, "noise", &w->noise, NUM_COUNT)) ||
		    (ret = rd_int(r, ver, vpath, "ended_after_rounds", &w->ended_after_rounds, 0,
				  CAPTURE_LIST_MAX, -1)))
			return ret;
	}
	return 0;
}

static int read_carveout(const struct rd *r, json_t *o, struct capture_carveout *co)
{
	json_t *arr, *v, *sp;
	char sub[64], spath[96];
	size_t i;
	int ret;

	co->source = SEC(o);
	if ((ret = item_object(r, o, "carveout")) ||
	    (ret = rd_array(r, o, "carveout", "kernels", &arr)))
		return ret;
	co->kernels = xcalloc(json_array_size(arr) + 1, sizeof(*co->kernels));
	json_array_foreach(arr, i, v) {
		struct capture_carveout_kernel *k = &co->kernels[co->nr_kernels++];

		snprintf(sub, sizeof(sub), "carveout.kernels[%zu]", i);
		k->source = SEC(v);
		k->noise = NAN;
		if ((ret = item_object(r, v, sub)) ||
		    (ret = rd_str(r, v, sub, "name", &k->name, 1)) ||
		    /* what the program passed, even a value the driver refused */
		    (ret = rd_intv(r, v, sub, "program_value", &k->program_value, -2147483647LL - 1,
				   2147483647LL, -1)) ||
		    (ret = rd_intv(r, v, sub, "default_value", &k->default_value, -2147483647LL - 1,
				   2147483647LL, -1)) ||
		    (ret = rd_int(r, v, sub, "launches", &k->launches, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = rd_str(r, v, sub, "kept", &k->kept, 0)) ||
		    (ret = rd_str(r, v, sub, "reason", &k->reason, 0)) ||
		    (ret = rd_str(r, v, sub, "advice", &k->advice, 0)))
			return ret;
		if (k->kept && strcmp(k->kept, "default") && strcmp(k->kept, "program"))
			return fail(r, sub, "kept", "\"%s\" is neither \"default\" nor \"program\"",
				    k->kept);
		sp = member(v, "speedup_of_default");
		k->speedup.min = k->speedup.median = k->speedup.max = NAN;
		if (!sp)
			continue;
		k->measured = 1;
		snprintf(spath, sizeof(spath), "%s.speedup_of_default", sub);
		if ((ret = item_object(r, sp, spath)) ||
		    (ret = rd_str(r, sp, spath, "method", &k->method, 0)) ||
		    (ret = read_speedup(r, sp, spath, "speedup", &k->speedup)) ||
		    (ret = rd_num(r, sp, spath, "noise", &k->noise, NUM_COUNT)))
			return ret;
	}
	return 0;
}

static int check_references(const struct rd *r, struct capture *cap)
{
	char path[200];
	size_t i, a, b;

	for (i = 0; i < cap->nr_kernels; i++) {
		const struct capture_kernel *k = &cap->kernels[i];

		snprintf(path, sizeof(path), "kernels[%zu]", i);
		if (!capture_find_module(cap, k->module))
			return fail(r, path, "module", "\"%s\" is not a module of \"modules\"",
				    k->module);
		for (a = 0; a < i; a++)
			if (!strcmp(cap->kernels[a].module, k->module) &&
			    !strcmp(cap->kernels[a].name, k->name))
				return fail(r, path, "name", "kernel %s of module %s is listed twice "
					    "(also kernels[%zu])", k->name, k->module, a);
		if (!cap->has_runs)
			goto allocs;
		for (a = 0; a < k->nr_loads; a++) {
			int run = k->loads[a].run;

			if (run >= 0 && !capture_find_run(cap, run)) {
				snprintf(path, sizeof(path), "kernels[%zu].loads[%zu]", i, a);
				return fail(r, path, "run", "run %d is not in \"runs\"", run);
			}
		}
		for (a = 0; a < k->nr_pairs; a++) {
			int run = k->pairs[a].run;

			if (run >= 0 && !capture_find_run(cap, run)) {
				snprintf(path, sizeof(path), "kernels[%zu].pairs[%zu]", i, a);
				return fail(r, path, "run", "run %d is not in \"runs\"", run);
			}
		}
allocs:
		if (!cap->has_allocations)
			continue;
		for (a = 0; a < k->nr_allocs_used; a++) {
			long long seq = k->allocs_used[a].alloc;

			for (b = 0; b < cap->nr_allocations; b++)
				if (cap->allocations[b].seq == seq)
					break;
			if (b == cap->nr_allocations) {
				snprintf(path, sizeof(path), "kernels[%zu].allocs_used[%zu]", i, a);
				return fail(r, path, "alloc", "allocation %lld is not in \"allocations\"",
					    seq);
			}
		}
	}
	for (i = 0; i < cap->nr_modules; i++)
		for (a = 0; a < i; a++)
			if (!strcmp(cap->modules[a].id, cap->modules[i].id)) {
				snprintf(path, sizeof(path), "modules[%zu]", i);
				return fail(r, path, "id", "module %s is listed twice", cap->modules[i].id);
			}
	for (i = 0; i < cap->nr_runs; i++)
		for (a = 0; a < i; a++)
			if (cap->runs[a].index == cap->runs[i].index) {
				snprintf(path, sizeof(path), "runs[%zu]", i);
				return fail(r, path, "index", "run %d is listed twice", cap->runs[i].index);
			}
	for (i = 0; i < cap->nr_allocations; i++)
		for (a = 0; a < i; a++)
			if (cap->allocations[a].seq == cap->allocations[i].seq) {
				snprintf(path, sizeof(path), "allocations[%zu]", i);
				return fail(r, path, "seq", "allocation %lld is listed twice",
					    cap->allocations[i].seq);
			}
	if (cap->has_baseline_check && cap->has_runs)
		for (i = 0; i < cap->baseline_check.nr_runs; i++)
			if (!capture_find_run(cap, (int)cap->baseline_check.runs[i]))
				return fail(r, "baseline_check", "runs",
					    "item %zu is not the index of a run in \"runs\"", i);
	return 0;
}

int capture_counters_from_json(struct capture_counters *cc, const char *variant, json_t *o,
				const char *name)
{
	struct rd r = { name };
	int ret;

	cc->variant = xstrdup(variant);
	ret = read_counters(&r, o, variant, cc);
	return ret;
}

void capture_counters_release(struct capture_counters *cc)
{
	free(cc->variant);
	free(cc->measured_as);
	memset(cc, 0, sizeof(*cc));
}

static void free_strings(char **s, size_t n);
static void verdict_release(struct capture_verdict *v);

int capture_verdict_from_json(struct capture_verdict *v, json_t *o, const char *name)
{
	struct rd r = { name };

	return read_verdict(&r, o, "verdict", v);
}

void capture_verdict_release(struct capture_verdict *v)
{
	verdict_release(v);
	memset(v, 0, sizeof(*v));
}

int capture_output_check_from_json(struct capture_output_check *oc, json_t *o, const char *name)
{
	struct rd r = { name };

	return read_output_check(&r, o, "output", oc);
}

void capture_output_check_release(struct capture_output_check *oc)
{
	output_check_release(oc);
	memset(oc, 0, sizeof(*oc));
}

int capture_speedup_from_json(struct capture_speedup *sp, json_t *o, const char *key,
			      const char *name)
{
	struct rd r = { name };

	return read_speedup(&r, o, "", key, sp);
}

int capture_l2_from_json(struct capture_l2 *l2, json_t *o, const char *name)
{
	struct rd r = { name };

	l2->baseline_dram_bytes = NAN;
	return read_l2(&r, o, l2);
}

void capture_l2_release(struct capture_l2 *l2)
{
	size_t i;

	free(l2->status);
	free(l2->reason);
	free(l2->kept);
	free(l2->baseline);
	for (i = 0; i < l2->nr_windows; i++) {
		struct capture_l2_window *w = &l2->windows[i];

		free(w->variant);
		free_strings(w->kernels, w->nr_kernels);
		free_strings(w->kernels_without_ptx, w->nr_kernels_without_ptx);
		free(w->reason);
	}
	free(l2->windows);
	memset(l2, 0, sizeof(*l2));
}

int capture_run_from_json(struct capture_run *run, json_t *o, const char *name)
{
	struct rd r = { name };

	return read_run(&r, o, "run", run);
}

void capture_run_release(struct capture_run *run)
{
	size_t f;

	free(run->variant);
	free(run->description);
	free(run->log);
	free(run->stdout_path);
	free(run->stderr_path);
	free(run->events);
	free(run->status);
	free(run->stdout_sha256);
	for (f = 0; f < run->nr_files; f++) {
		free(run->files[f].path);
		free(run->files[f].sha256);
		free(run->files[f].copy);
	}
	free(run->files);
	memset(run, 0, sizeof(*run));
}

int capture_kernel_from_json(struct capture_kernel *k, json_t *o, const char *name)
{
	struct rd r = { name };

	return read_kernel(&r, o, "kernel", k);
}

int capture_from_json(struct capture *cap, json_t *doc, const char *name)
{
	struct rd r = { .name = name ? name : "capture.json" };
	json_t *o, *arr, *v;
	char path[64];
	size_t i;
	int ret;

	if (!json_is_object(doc))
		return error_set(CA_E_INPUT, "capture '%s': not a JSON object", r.name);
	cap->source = (struct capture_section *)json_deep_copy(doc);
	doc = JS(cap->source);
	if ((ret = rd_str(&r, doc, "", "schema", &cap->schema, 1)) ||
	    (ret = rd_str(&r, doc, "", "status", &cap->status, 0)) ||
	    (ret = rd_str(&r, doc, "", "tool_version", &cap->tool_version, 0)) ||
	    (ret = rd_str(&r, doc, "", "created", &cap->created, 0)))
		return ret;
	if ((o = member(doc, "program"))) {
		cap->has_program = 1;
		if ((ret = read_program(&r, o, &cap->program)))
			return ret;
	}
	if ((o = member(doc, "device")) && (ret = read_device(&r, o, cap)))
		return ret;
	if ((o = member(doc, "options"))) {
		cap->has_options = 1;
		if ((ret = read_options(&r, o, &cap->options)))
			return ret;
	}
	if ((ret = rd_array(&r, doc, "", "modules", &arr)))
		return ret;
	cap->has_modules = arr != NULL;
	cap->modules = xcalloc(json_array_size(arr) + 1, sizeof(*cap->modules));
	json_array_foreach(arr, i, v) {
		snprintf(path, sizeof(path), "modules[%zu]", i);
		if ((ret = read_module(&r, v, path, &cap->modules[cap->nr_modules++])))
			return ret;
	}
	cap->has_runs = json_object_get(doc, "runs") != NULL;
	if ((ret = rd_array(&r, doc, "", "runs", &arr)))
		return ret;
	cap->runs = xcalloc(json_array_size(arr) + 1, sizeof(*cap->runs));
	json_array_foreach(arr, i, v) {
		snprintf(path, sizeof(path), "runs[%zu]", i);
		if ((ret = read_run(&r, v, path, &cap->runs[cap->nr_runs++])))
			return ret;
	}
	if ((ret = rd_array(&r, doc, "", "kernels", &arr)))
		return ret;
	if (!arr)
		return fail(&r, "", "kernels", "missing: a capture lists its kernels (an empty list "
			    "when none was measured)");
	cap->kernels = xcalloc(json_array_size(arr) + 1, sizeof(*cap->kernels));
	json_array_foreach(arr, i, v) {
		snprintf(path, sizeof(path), "kernels[%zu]", i);
		if ((ret = read_kernel(&r, v, path, &cap->kernels[cap->nr_kernels++])))
			return ret;
	}
	if ((ret = rd_strings(&r, doc, "", "notes", &cap->notes, &cap->nr_notes, &cap->has_notes)))
		return ret;
	cap->has_all_kernels = json_object_get(doc, "all_kernels") != NULL;
	if ((ret = rd_array(&r, doc, "", "all_kernels", &arr)))
		return ret;
	cap->all_kernels = xcalloc(json_array_size(arr) + 1, sizeof(*cap->all_kernels));
	json_array_foreach(arr, i, v) {
		struct capture_kernel_seen *s = &cap->all_kernels[cap->nr_all_kernels++];

		snprintf(path, sizeof(path), "all_kernels[%zu]", i);
		s->source = SEC(v);
		if ((ret = item_object(&r, v, path)) ||
		    (ret = rd_str(&r, v, path, "name", &s->name, 1)) ||
		    (ret = rd_int(&r, v, path, "launches", &s->launches, 0,
				  (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = rd_num(&r, v, path, "gpu_time_ns", &s->gpu_time_ns, NUM_COUNT)) ||
		    (ret = read_alloc_uses(&r, v, path, &s->allocs_used, &s->nr_allocs_used,
					   &s->has_allocs_used)))
			return ret;
	}
	cap->has_allocations = json_object_get(doc, "allocations") != NULL;
	if ((ret = rd_array(&r, doc, "", "allocations", &arr)))
		return ret;
	cap->allocations = xcalloc(json_array_size(arr) + 1, sizeof(*cap->allocations));
	json_array_foreach(arr, i, v) {
		struct capture_allocation *a = &cap->allocations[cap->nr_allocations++];
		long long seq;

		snprintf(path, sizeof(path), "allocations[%zu]", i);
		a->source = SEC(v);
		if ((ret = item_object(&r, v, path)) ||
		    (ret = rd_int(&r, v, path, "seq", &seq, 0, (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = rd_num(&r, v, path, "bytes", &a->bytes, NUM_COUNT)))
			return ret;
		if (seq < 0)
			return fail(&r, path, "seq", "missing: every allocation has a seq");
		if (isnan(a->bytes))
			return fail(&r, path, "bytes", "missing: every allocation has a size");
		a->seq = seq;
	}
	if ((o = member(doc, "baseline_check"))) {
		cap->has_baseline_check = 1;
		if ((ret = read_baseline_check(&r, o, &cap->baseline_check)))
			return ret;
	}
	if ((ret = read_measure(&r, doc, cap)))
		return ret;
	if ((o = member(doc, "oracle"))) {
		cap->oracle = xcalloc(1, sizeof(*cap->oracle));
		if ((ret = read_oracle(&r, o, cap->oracle)))
			return ret;
	}
	if ((o = member(doc, "cost"))) {
		cap->has_cost = 1;
		if ((ret = read_cost(&r, o, &cap->cost)))
			return ret;
	}
	if (cap->has_baseline_check && (o = member(JS(cap->baseline_check.source), "output"))) {
		cap->has_baseline_output = 1;
		if ((ret = read_output_check(&r, o, "baseline_check.output", &cap->baseline_output)))
			return ret;
	}
	if ((o = member(doc, "verification"))) {
		cap->has_verification = 1;
		if ((ret = read_verification(&r, o, &cap->verification)))
			return ret;
	}
	if (cap->has_verification && (o = member(JS(cap->verification.source), "output"))) {
		cap->has_verification_output = 1;
		if ((ret = read_output_check(&r, o, "verification.output", &cap->verification_output)))
			return ret;
	}
	if ((o = member(doc, "l2"))) {
		cap->has_l2 = 1;
		if ((ret = read_l2(&r, o, &cap->l2)))
			return ret;
	}
	if ((o = member(doc, "carveout"))) {
		cap->has_carveout = 1;
		if ((ret = read_carveout(&r, o, &cap->carveout)))
			return ret;
	}
	if ((o = member(doc, "budget"))) {
		cap->has_budget = 1;
		if ((ret = read_budget(&r, o, &cap->budget)))
			return ret;
	}
	return check_references(&r, cap);
}

int capture_load_file(struct capture *cap, const char *path)
{
	json_t *doc = json_file_load(path);
	int ret;

	if (!doc)
		return CA_E_INPUT;
	ret = json_check_schema(doc, path, CAPTURE_SCHEMA);
	if (!ret)
		ret = capture_from_json(cap, doc, path);
	json_decref(doc);
	return ret;
}

int capture_validate_json(json_t *doc, const char *name)
{
	struct capture cap;
	int ret;

	capture_init(&cap);
	ret = capture_from_json(&cap, doc, name);
	capture_release(&cap);
	return ret;
}

/* A kernel's measured numbers, dropped: its loads are then "not measured". */
static void drop_measurements(json_t *kernel)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(kernel, "loads"), i, v)
		if (json_object_get(v, "hit"))
			json_object_set_new(v, "hit", json_null());
	json_array_foreach(json_object_get(kernel, "pairs"), i, v) {
		json_object_set_new(v, "hit", json_null());
		json_object_del(v, "noise");
	}
}

int capture_settle_json(json_t *doc, const char *name, struct capture_dropped **dropped,
			size_t *nr)
{
	json_t *kernels = json_object_get(doc, "kernels"), *k;
	size_t i;

	*dropped = NULL;
	*nr = 0;
	if (!capture_validate_json(doc, name))
		return 0;
	json_array_foreach(kernels, i, k) {
		/* the kernel alone, with what its references need */
		json_t *one = json_copy(doc);

		json_object_set_new(one, "kernels", json_pack("[O]", k));
		if (capture_validate_json(one, name)) {
			*dropped = xrealloc(*dropped, (*nr + 1) * sizeof(**dropped));
			(*dropped)[*nr].kernel = xstrdup(json_string_value(json_object_get(k, "name")) ?:
							 "?");
			(*dropped)[*nr].why = xstrdup(error_message());
			(*nr)++;
			drop_measurements(k);
		}
		json_decref(one);
	}
	return capture_validate_json(doc, name);
}

void capture_dropped_free(struct capture_dropped *dropped, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(dropped[i].kernel);
		free(dropped[i].why);
	}
	free(dropped);
}

/* ---- writing ---------------------------------------------------------- */

/* The object to write into: a copy of the source, or a new object. */
static json_t *start(const struct capture_section *source)
{
	return source && json_is_object(JS(source)) ? json_copy(JS(source)) : json_object();
}

/* Writes key when the value is known or the source had the key. */
static void put(json_t *o, const char *key, json_t *v, int known)
{
	if (known)
		json_object_set_new(o, key, v);
	else {
		json_decref(v);
		if (json_object_get(o, key))
			json_object_set_new(o, key, json_null());
	}
}

static void put_str(json_t *o, const char *key, const char *s)
{
	put(o, key, s ? json_string(s) : json_null(), s != NULL);
}

/* A number as the source wrote it (an integer stays an integer). */
static void put_num(json_t *o, const char *key, double d)
{
	json_t *old = json_object_get(o, key);

	if (isnan(d)) {
		put(o, key, json_null(), 0);
		return;
	}
	if (json_is_integer(old) && d == floor(d) && fabs(d) <= CAPTURE_COUNT_MAX)
		json_object_set_new(o, key, json_integer((json_int_t)d));
	else
		json_object_set_new(o, key, json_real(d));
}

static void put_int(json_t *o, const char *key, long long v, long long unknown)
{
	put(o, key, json_integer(v), v != unknown);
}

static void put_bool(json_t *o, const char *key, int b)
{
	put(o, key, json_boolean(b > 0), b >= 0);
}

static json_t *strings_json(char **s, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(arr, json_string(s[i]));
	return arr;
}

static json_t *alloc_uses_json(const struct capture_alloc_use *u, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *o = start(u[i].source);

		put_int(o, "param", u[i].param, -1);
		put_int(o, "alloc", u[i].alloc, -1);
		put_int(o, "launches", u[i].launches, -1);
		put_int(o, "offset", u[i].offset, -1);
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *load_json(const struct capture_load *l)
{
	json_t *o = start(l->source);

	json_object_set_new(o, "ordinal", json_integer(l->ordinal));
	put_int(o, "ptx_line", l->ptx_line, -1);
	put_str(o, "instruction", l->instruction);
	put_str(o, "space", l->space);
	put_str(o, "cache_op", l->cache_op);
	put_bool(o, "nc", l->nc);
	put_int(o, "vector", l->vector, -1);
	put_int(o, "bits", l->bits, -1);
	put_str(o, "file", l->file);
	put_int(o, "line", l->line, 0);
	put_int(o, "column", l->column, 0);
	put_int(o, "param", l->param, -1);
	put_bool(o, "read_only", l->read_only);
	put_bool(o, "patchable", l->patchable);
	put_str(o, "unpatchable_reason", l->unpatchable_reason);
	put_str(o, "l1_eviction", l->l1_eviction);
	put_bool(o, "measured", l->measured);
	put_int(o, "node", l->node, -1);
	put_num(o, "hit", l->hit);
	put_int(o, "run", l->run, -1);
	put_num(o, "access", l->access);
	put_num(o, "requests", l->requests);
	put_num(o, "lines", l->lines);
	put_num(o, "bytes", l->bytes);
	return o;
}

static json_t *pair_json(const struct capture_pair *p)
{
	json_t *o = start(p->source);

	json_object_set_new(o, "i", json_integer(p->i));
	json_object_set_new(o, "j", json_integer(p->j));
	put_num(o, "hit", p->hit);
	put_int(o, "run", p->run, -1);
	if (p->noise_resolution) {
		json_t *n = start(SEC(json_object_get(JS(p->source), "noise")));

		json_object_set_new(n, "measured", json_real(p->noise_measured));
		json_object_set_new(n, "resolution", json_string(p->noise_resolution));
		json_object_set_new(o, "noise", n);
	} else {
		json_object_del(o, "noise");
	}
	return o;
}

static json_t *counters_json(const struct capture_counters *c)
{
	json_t *o = start(c->source);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(capture_counter_keys); i++)
		put_num(o, capture_counter_keys[i], counter_value(c, i));
	put_int(o, "launches", c->launches, -1);
	put_int(o, "run", c->run, -1);
	put_int(o, "sampled_launches", c->sampled_launches, -1);
	put_int(o, "timed_launches", c->timed_launches, -1);
	put_str(o, "measured_as", c->measured_as);
	return o;
}

static json_t *extents_json(const long long e[3])
{
	return json_pack("[I,I,I]", (json_int_t)e[0], (json_int_t)e[1], (json_int_t)e[2]);
}

static json_t *speedup_json(json_t *into, const char *key, const struct capture_speedup *sp)
{
	json_t *o;

	if (isnan(sp->median) && isnan(sp->min) && isnan(sp->max) && !json_object_get(into, key))
		return into;
	if (sp->plain) {
		put_num(into, key, sp->median);
		return into;
	}
	o = start(SEC(json_object_get(into, key)));
	put_num(o, "min", sp->min);
	put_num(o, "median", sp->median);
	put_num(o, "max", sp->max);
	json_object_set_new(into, key, o);
	return into;
}

static json_t *verdict_json(const struct capture_verdict *v)
{
	json_t *o = start(v->source);

	put_str(o, "name", v->name);
	put_str(o, "module", v->module);
	speedup_json(o, "speedup", &v->speedup);
	put_num(o, "noise", v->noise);
	put_num(o, "spread", v->spread);
	put_bool(o, "kept", v->kept);
	put_str(o, "reason", v->reason);
	return o;
}

static json_t *verification_json(const struct capture_verification *ver)
{
	json_t *o = start(ver->source), *arr = json_array();
	size_t i;

	put_str(o, "status", ver->status);
	put_bool(o, "kept", ver->kept);
	speedup_json(o, "speedup", &ver->speedup);
	for (i = 0; i < ver->nr_kernels; i++)
		json_array_append_new(arr, verdict_json(&ver->kernels[i]));
	if (ver->nr_kernels || json_object_get(o, "kernels"))
		json_object_set_new(o, "kernels", arr);
	else
		json_decref(arr);
	if (!isnan(ver->gpu_speedup.median) || json_is_object(json_object_get(o, "program"))) {
		json_t *prog = start(SEC(json_object_get(o, "program")));

		json_object_set_new(o, "program", speedup_json(prog, "gpu_speedup", &ver->gpu_speedup));
	}
	if (ver->has_source_patch) {
		const struct capture_source_patch *sp = &ver->source_patch;
		json_t *spj = start(sp->source), *left = json_array();

		put_int(spj, "rewritten", sp->rewritten, -1);
		for (i = 0; i < sp->nr_left_out; i++) {
			const struct capture_left_out *l = &sp->left_out[i];
			json_t *lj = start(l->source);

			put_str(lj, "function", l->function);
			put_int(lj, "ordinal", l->ordinal, -1);
			put_str(lj, "action", l->action);
			put_str(lj, "reason", l->reason);
			json_array_append_new(left, lj);
		}
		if (sp->nr_left_out || json_object_get(spj, "left_out"))
			json_object_set_new(spj, "left_out", left);
		else
			json_decref(left);
		put_str(spj, "status", sp->status);
		put_num(spj, "speedup", sp->speedup);
		json_object_set_new(o, "source_patch", spj);
	}
	return o;
}

static json_t *oracle_kernel_json(const struct capture_oracle_kernel *k)
{
	json_t *o = start(k->source), *plans = json_array();
	size_t i, j;

	json_object_set_new(o, "kernel", json_string(k->kernel));
	put_str(o, "dimension", k->dimension);
	put_int(o, "loads", k->loads, -1);
	put_int(o, "rounds", k->rounds, -1);
	put_num(o, "best_speedup", k->best_speedup);
	put_num(o, "advised_speedup", k->advised_speedup);
	put_num(o, "ratio", k->ratio);
	for (i = 0; i < k->nr_plans; i++) {
		const struct capture_oracle_plan *pl = &k->plans[i];
		json_t *old = json_array_get(json_object_get(o, "plans"), i);
		json_t *p = json_is_object(old) ? json_copy(old) : json_object();
		json_t *cached = json_array();

		for (j = 0; j < pl->nr_cached; j++)
			json_array_append_new(cached, json_integer(pl->cached[j]));
		if (pl->nr_cached || json_object_get(p, "cached"))
			json_object_set_new(p, "cached", cached);
		else
			json_decref(cached);
		put_num(p, "median_ns", pl->median_ns);
		put_num(p, "speedup", pl->speedup);
		put_str(p, "output", pl->output);
		if (pl->nr_l2 || json_object_get(p, "l2")) {
			json_t *l2 = json_array();

			for (j = 0; j < pl->nr_l2; j++)
				json_array_append_new(l2, json_pack("{s:i, s:s}", "ordinal",
					(int)pl->l2[j].ordinal, "form", pl->l2[j].form));
			json_object_set_new(p, "l2", l2);
		}
		json_array_append_new(plans, p);
	}
	if (k->nr_plans || json_object_get(o, "plans"))
		json_object_set_new(o, "plans", plans);
	else
		json_decref(plans);
	put_int(o, "best_plan", k->best_plan, -1);
	put_int(o, "advised_plan", k->advised_plan, -1);
	return o;
}

static json_t *oracle_json(const struct capture_oracle *orc)
{
	json_t *o = start(orc->source), *arr = json_array();
	size_t i;

	put_str(o, "status", orc->status);
	put_int(o, "rounds", orc->rounds, -1);
	put_int(o, "plans_output_rejected", orc->plans_output_rejected, -1);
	for (i = 0; i < orc->nr_kernels; i++)
		json_array_append_new(arr, oracle_kernel_json(&orc->kernels[i]));
	if (orc->has_kernels || orc->nr_kernels)
		json_object_set_new(o, "kernels", arr);
	else
		json_decref(arr);
	return o;
}

static json_t *kernel_json(const struct capture_kernel *k)
{
	json_t *o = start(k->source), *arr;
	size_t i;

	json_object_set_new(o, "module", json_string(k->module));
	json_object_set_new(o, "name", json_string(k->name));
	put_str(o, "demangled", k->demangled);
	put_int(o, "launches", k->launches, -1);
	if (k->has_extents & 1)
		json_object_set_new(o, "grid", extents_json(k->grid));
	if (k->has_extents & 2)
		json_object_set_new(o, "block", extents_json(k->block));
	put_int(o, "dynamic_shared_bytes", k->dynamic_shared_bytes, -1);
	put_int(o, "static_shared_bytes", k->static_shared_bytes, -1);
	put_int(o, "registers", k->registers, -1);
	if (k->has_gpu_time) {
		json_t *gt = start(SEC(json_object_get(JS(k->source), "gpu_time_ns")));

		put_num(gt, "baseline", k->gpu_time_baseline_ns);
		put_num(gt, "cubin", k->gpu_time_cubin_ns);
		json_object_set_new(o, "gpu_time_ns", gt);
	}
	if (k->has_counters) {
		arr = json_object();
		for (i = 0; i < k->nr_counters; i++)
			json_object_set_new(arr, k->counters[i].variant, counters_json(&k->counters[i]));
		json_object_set_new(o, "counters", arr);
	}
	if (k->has_loads || k->nr_loads) {
		arr = json_array();
		for (i = 0; i < k->nr_loads; i++)
			json_array_append_new(arr, load_json(&k->loads[i]));
		json_object_set_new(o, "loads", arr);
	}
	if (k->has_pairs || k->nr_pairs) {
		arr = json_array();
		for (i = 0; i < k->nr_pairs; i++)
			json_array_append_new(arr, pair_json(&k->pairs[i]));
		json_object_set_new(o, "pairs", arr);
	}
	put_int(o, "left_out_loads", k->left_out_loads, -1);
	if (k->has_allocs_used)
		json_object_set_new(o, "allocs_used", alloc_uses_json(k->allocs_used,
								      k->nr_allocs_used));
	put_num(o, "monitor_gpu_time_ns", k->monitor_gpu_time_ns);
	if (k->has_efficiency) {
		json_t *e = start(SEC(json_object_get(JS(k->source), "efficiency")));

		put_num(e, "on", k->efficiency_on);
		put_num(e, "off", k->efficiency_off);
		json_object_set_new(o, "efficiency", e);
	}
	if (k->verification)
		json_object_set_new(o, "verification", verdict_json(k->verification));
	if (k->oracle)
		json_object_set_new(o, "oracle", oracle_kernel_json(k->oracle));
	if (k->nr_ranks) {
		arr = json_array();
		for (i = 0; i < k->nr_ranks; i++) {
			const struct capture_kernel_rank *rk = &k->ranks[i];
			json_t *rj = start(rk->source), *loads = json_array();
			size_t a;

			json_object_set_new(rj, "rank", json_integer(rk->rank));
			put_str(rj, "gpu", rk->gpu);
			put_int(rj, "launches", rk->launches, -1);
			for (a = 0; a < rk->nr_loads; a++) {
				json_t *lj = start(rk->loads[a].source);

				json_object_set_new(lj, "ordinal", json_integer(rk->loads[a].ordinal));
				put_num(lj, "hit_per_launch", rk->loads[a].hit_per_launch);
				put_num(lj, "samples", rk->loads[a].samples);
				json_array_append_new(loads, lj);
			}
			json_object_set_new(rj, "loads", loads);
			json_array_append_new(arr, rj);
		}
		json_object_set_new(o, "ranks", arr);
	}
	if (k->has_data_structures) {
		arr = json_array();
		for (i = 0; i < k->nr_data_structures; i++) {
			const struct capture_data_structure *d = &k->data_structures[i];
			json_t *dj = start(d->source);

			put_int(dj, "param", d->param, -1);
			put_bool(dj, "read_only", d->read_only);
			put_num(dj, "sim_hits", d->sim_hits);
			put_num(dj, "sim_accesses", d->sim_accesses);
			json_array_append_new(arr, dj);
		}
		json_object_set_new(o, "data_structures", arr);
	}
	return o;
}

static json_t *run_json(const struct capture_run *run)
{
	json_t *o = start(run->source);
	size_t i;

	json_object_set_new(o, "index", json_integer(run->index));
	put_str(o, "variant", run->variant);
	put_str(o, "description", run->description);
	put_str(o, "log", run->log);
	put_str(o, "stdout", run->stdout_path);
	put_str(o, "stderr", run->stderr_path);
	put_str(o, "events", run->events);
	put_str(o, "status", run->status);
	if (run->has_exit_status)
		json_object_set_new(o, "exit_status", json_integer(run->exit_status));
	put_num(o, "wall_seconds", run->wall_seconds);
	if (run->has_gpu)
		json_object_set_new(o, "gpu", json_integer(run->gpu));
	put_str(o, "stdout_sha256", run->stdout_sha256);
	put_bool(o, "files_walk_truncated", run->files_walk_truncated);
	put_bool(o, "files_compared", run->files_compared);
	if (run->has_files) {
		json_t *arr = json_array();

		for (i = 0; i < run->nr_files; i++) {
			const struct capture_file *f = &run->files[i];
			json_t *fj = start(f->source);

			json_object_set_new(fj, "path", json_string(f->path));
			if (f->removed)
				json_object_set_new(fj, "removed", json_true());
			put_num(fj, "size", f->size);
			put_str(fj, "sha256", f->sha256);
			put_str(fj, "copy", f->copy);
			json_array_append_new(arr, fj);
		}
		json_object_set_new(o, "files", arr);
	}
	return o;
}

static json_t *module_json(const struct capture_module *m)
{
	json_t *o = start(m->source);

	json_object_set_new(o, "id", json_string(m->id));
	put_str(o, "origin", m->origin);
	put_str(o, "arch", m->arch);
	/* a null has_ptx (unknown: derived from "ptx" when read) stays null */
	if (!m->source || json_is_boolean(json_object_get(o, "has_ptx")))
		json_object_set_new(o, "has_ptx", json_boolean(m->has_ptx));
	put_str(o, "ptx", m->ptx);
	put_str(o, "library", m->library);
	put_str(o, "no_ptx_reason", m->no_ptx_reason);
	if (m->has_kernels || m->nr_kernels)
		json_object_set_new(o, "kernels", strings_json(m->kernels, m->nr_kernels));
	put_num(o, "gpu_time_ns", m->gpu_time_ns);
	return o;
}

static json_t *output_check_json(const struct capture_output_check *oc)
{
	json_t *o = start(oc->source), *arr = json_array();
	size_t i;

	put_str(o, "status", oc->status);
	put_num(o, "rtol", oc->rtol);
	put_num(o, "atol", oc->atol);
	if (oc->has_max_difference) {
		json_t *md = start(SEC(json_object_get(o, "max_difference")));

		put_num(md, "abs", oc->max_abs);
		put_num(md, "rel", oc->max_rel);
		put_str(md, "where", oc->max_where);
		json_object_set_new(o, "max_difference", md);
	}
	put_int(o, "volatile_lines", oc->volatile_lines, -1);
	if (oc->nr_volatile_examples || json_object_get(o, "volatile_examples"))
		json_object_set_new(o, "volatile_examples",
				    strings_json(oc->volatile_examples, oc->nr_volatile_examples));
	put_int(o, "unstable_lines", oc->unstable_lines, -1);
	if (oc->nr_unstable_examples || json_object_get(o, "unstable_examples"))
		json_object_set_new(o, "unstable_examples",
				    strings_json(oc->unstable_examples, oc->nr_unstable_examples));
	put_int(o, "left_out", oc->left_out, -1);
	for (i = 0; i < oc->nr_files; i++) {
		const struct capture_output_file *f = &oc->files[i];
		json_t *fj = start(f->source);

		json_object_set_new(fj, "path", json_string(f->path));
		put_str(fj, "status", f->status);
		put_num(fj, "size", f->size);
		put_str(fj, "sha256", f->sha256);
		if (f->removed)
			json_object_set_new(fj, "removed", json_true());
		put_str(fj, "compared_as", f->compared_as);
		put_num(fj, "max_abs_difference", f->max_abs_difference);
		put_num(fj, "max_rel_difference", f->max_rel_difference);
		put_num(fj, "advice_size", f->advice_size);
		put_str(fj, "advice_sha256", f->advice_sha256);
		json_array_append_new(arr, fj);
	}
	if (oc->nr_files || json_object_get(o, "files"))
		json_object_set_new(o, "files", arr);
	else
		json_decref(arr);
	put_str(o, "reason", oc->reason);
	return o;
}

json_t *capture_cost_to_json(const struct capture_cost *c)
{
	json_t *o = start(c->source), *by, *secs;
	size_t i;

	put_int(o, "program_runs", c->program_runs, -1);
	by = start(SEC(json_object_get(o, "runs_by_step")));
	secs = start(SEC(json_object_get(o, "seconds_by_step")));
	for (i = 0; i < CAPTURE_NR_STEPS; i++) {
		if (c->runs_by_step[i] || json_object_get(by, capture_steps[i]))
			json_object_set_new(by, capture_steps[i],
					    json_integer(c->runs_by_step[i]));
		put_num(secs, capture_steps[i], c->seconds_by_step[i]);
	}
	if (json_object_get(o, "runs_by_step") || json_object_size(by))
		json_object_set_new(o, "runs_by_step", by);
	else
		json_decref(by);
	if (json_object_get(o, "seconds_by_step") || json_object_size(secs))
		json_object_set_new(o, "seconds_by_step", secs);
	else
		json_decref(secs);
	put_int(o, "launches_counted", c->launches_counted, -1);
	put_num(o, "wall_seconds", c->wall_seconds);
	put_num(o, "native_seconds", c->native_seconds);
	put_num(o, "ratio", c->ratio);
	return o;
}

json_t *capture_to_json(const struct capture *cap)
{
	json_t *doc = start(cap->source), *arr;
	size_t i;

	json_object_set_new(doc, "schema", json_string(cap->schema ? cap->schema : CAPTURE_SCHEMA));
	put_str(doc, "status", cap->status);
	put_str(doc, "tool_version", cap->tool_version);
	put_str(doc, "created", cap->created);
	if (cap->has_program) {
		json_t *p = start(cap->program.source);

		put_str(p, "path", cap->program.path);
		if (cap->program.nr_args || json_object_get(p, "args"))
			json_object_set_new(p, "args", strings_json(cap->program.args,
								    cap->program.nr_args));
		put_str(p, "cwd", cap->program.cwd);
		json_object_set_new(doc, "program", p);
	}
	if (cap->has_device && !cap->device_json)
		json_object_set_new(doc, "device", device_model_to_json(&cap->device));
	if (cap->has_options) {
		const struct capture_options *op = &cap->options;
		json_t *p = start(op->source);

		put_int(p, "top", op->top, -1);
		put_num(p, "min_share", op->min_share);
		put_int(p, "max_loads", op->max_loads, -1);
		put_str(p, "model", op->model);
		put_str(p, "bypass_form", op->bypass_form);
		put_str(p, "kernels_regex", op->kernels_regex);
		put_int(p, "repeat", op->repeat, -1);
		put_num(p, "timeout", op->timeout);
		put_bool(p, "l2_priority", op->l2_priority);
		json_object_set_new(doc, "options", p);
	}
	if (cap->has_modules || cap->nr_modules) {
		arr = json_array();
		for (i = 0; i < cap->nr_modules; i++)
			json_array_append_new(arr, module_json(&cap->modules[i]));
		json_object_set_new(doc, "modules", arr);
	}
	if (cap->has_runs || cap->nr_runs) {
		arr = json_array();
		for (i = 0; i < cap->nr_runs; i++)
			json_array_append_new(arr, run_json(&cap->runs[i]));
		json_object_set_new(doc, "runs", arr);
	}
	arr = json_array();
	for (i = 0; i < cap->nr_kernels; i++)
		json_array_append_new(arr, kernel_json(&cap->kernels[i]));
	json_object_set_new(doc, "kernels", arr);
	if (cap->has_notes || cap->nr_notes)
		json_object_set_new(doc, "notes", strings_json(cap->notes, cap->nr_notes));
	if (cap->has_all_kernels || cap->nr_all_kernels) {
		arr = json_array();
		for (i = 0; i < cap->nr_all_kernels; i++) {
			const struct capture_kernel_seen *s = &cap->all_kernels[i];
			json_t *o = start(s->source);

			json_object_set_new(o, "name", json_string(s->name));
			put_int(o, "launches", s->launches, -1);
			put_num(o, "gpu_time_ns", s->gpu_time_ns);
			if (s->has_allocs_used)
				json_object_set_new(o, "allocs_used",
						    alloc_uses_json(s->allocs_used, s->nr_allocs_used));
			json_array_append_new(arr, o);
		}
		json_object_set_new(doc, "all_kernels", arr);
	}
	if (cap->has_allocations || cap->nr_allocations) {
		arr = json_array();
		for (i = 0; i < cap->nr_allocations; i++) {
			json_t *o = start(cap->allocations[i].source);

			json_object_set_new(o, "seq", json_integer(cap->allocations[i].seq));
			put_num(o, "bytes", cap->allocations[i].bytes);
			json_array_append_new(arr, o);
		}
		json_object_set_new(doc, "allocations", arr);
	}
	if (cap->has_cost)
		json_object_set_new(doc, "cost", capture_cost_to_json(&cap->cost));

	if (cap->has_baseline_check) {
		const struct capture_baseline_check *b = &cap->baseline_check;
		json_t *bc = start(b->source), *runs = json_array();

		for (i = 0; i < b->nr_runs; i++)
			json_array_append_new(runs, json_integer(b->runs[i]));
		if (b->nr_runs || json_object_get(bc, "runs"))
			json_object_set_new(bc, "runs", runs);
		else
			json_decref(runs);
		put_bool(bc, "output_identical", b->output_identical);
		put_num(bc, "max_counter_spread", b->max_counter_spread);
		if (b->has_notes)
			json_object_set_new(bc, "notes", strings_json(b->notes, b->nr_notes));
		if (cap->has_baseline_output)
			json_object_set_new(bc, "output", output_check_json(&cap->baseline_output));
		json_object_set_new(doc, "baseline_check", bc);
	}
	if (cap->oracle)
		json_object_set_new(doc, "oracle", oracle_json(cap->oracle));
	if (cap->has_verification)
		json_object_set_new(doc, "verification", verification_json(&cap->verification));
	if (cap->has_verification_output && json_is_object(json_object_get(doc, "verification"))) {
		json_t *ver = json_copy(json_object_get(doc, "verification"));

		json_object_set_new(ver, "output", output_check_json(&cap->verification_output));
		json_object_set_new(doc, "verification", ver);
	}
	if (cap->has_l2) {
		const struct capture_l2 *l2 = &cap->l2;
		json_t *o = start(l2->source);

		put_str(o, "status", l2->status);
		put_str(o, "reason", l2->reason);
		put_num(o, "baseline_dram_bytes", l2->baseline_dram_bytes);
		put_str(o, "baseline", l2->baseline);
		put_str(o, "kept", l2->kept);
		arr = json_array();
		for (i = 0; i < l2->nr_windows; i++) {
			const struct capture_l2_window *w = &l2->windows[i];
			json_t *wj = start(w->source);

			put_str(wj, "variant", w->variant);
			put_int(wj, "alloc", w->alloc, -1);
			put_num(wj, "num_bytes", w->num_bytes);
			put_num(wj, "set_aside_bytes", w->set_aside_bytes);
			put_num(wj, "hit_ratio", w->hit_ratio);
			if (w->nr_kernels || json_object_get(wj, "kernels"))
				json_object_set_new(wj, "kernels", strings_json(w->kernels, w->nr_kernels));
			if (w->nr_kernels_without_ptx || json_object_get(wj, "kernels_without_ptx"))
				json_object_set_new(wj, "kernels_without_ptx", strings_json(
					w->kernels_without_ptx, w->nr_kernels_without_ptx));
			if (w->measured) {
				json_t *vj = start(SEC(json_object_get(wj, "verification")));

				put_bool(vj, "kept", w->kept);
				put_str(vj, "reason", w->reason);
				put_num(vj, "dram_bytes", w->dram_bytes);
				if (!isnan(w->speedup.median) || json_object_get(vj, "speedup")) {
					json_t *sp = start(SEC(json_object_get(vj, "speedup")));

					put_num(sp, "min", w->speedup.min);
					put_num(sp, "median", w->speedup.median);
					put_num(sp, "max", w->speedup.max);
					json_object_set_new(vj, "speedup", sp);
				}
				put_num(vj, "noise", w->noise);
				put_int(vj, "ended_after_rounds", w->ended_after_rounds, -1);
				json_object_set_new(wj, "verification", vj);
			}
			json_array_append_new(arr, wj);
		}
		if (l2->nr_windows || json_object_get(o, "windows"))
			json_object_set_new(o, "windows", arr);
		else
			json_decref(arr);
		json_object_set_new(doc, "l2", o);
	}
	if (cap->has_carveout) {
		json_t *o = start(cap->carveout.source);

		arr = json_array();
		for (i = 0; i < cap->carveout.nr_kernels; i++) {
			const struct capture_carveout_kernel *k = &cap->carveout.kernels[i];
			json_t *kj = start(k->source);

			json_object_set_new(kj, "name", json_string(k->name));
			/* -1 (the driver's default) is also what an absent value reads as */
			if (json_object_get(kj, "program_value") || k->program_value != -1)
				json_object_set_new(kj, "program_value", json_integer(k->program_value));
			if (json_object_get(kj, "default_value") || k->default_value != -1)
				json_object_set_new(kj, "default_value", json_integer(k->default_value));
			put_int(kj, "launches", k->launches, -1);
			if (k->measured) {
				json_t *sp = start(SEC(json_object_get(kj, "speedup_of_default")));

				put_str(sp, "method", k->method);
				speedup_json(sp, "speedup", &k->speedup);
				put_num(sp, "noise", k->noise);
				json_object_set_new(kj, "speedup_of_default", sp);
			} else if (json_object_get(kj, "speedup_of_default")) {
				json_object_set_new(kj, "speedup_of_default", json_null());
			}
			put_str(kj, "kept", k->kept);
			put_str(kj, "reason", k->reason);
			put_str(kj, "advice", k->advice);
			json_array_append_new(arr, kj);
		}
		if (cap->carveout.nr_kernels || json_object_get(o, "kernels"))
			json_object_set_new(o, "kernels", arr);
		else
			json_decref(arr);
		json_object_set_new(doc, "carveout", o);
	}
	if (cap->has_budget) {
		const struct capture_budget *b = &cap->budget;
		json_t *o = start(b->source);

		put_num(o, "factor", b->factor);
		put_num(o, "seconds", b->seconds);
		put_num(o, "native_seconds", b->native_seconds);
		arr = json_array();
		for (i = 0; i < b->nr_skipped; i++) {
			json_t *sj = start(b->skipped[i].source);

			json_object_set_new(sj, "step", json_string(b->skipped[i].step));
			put_int(sj, "runs", b->skipped[i].runs, -1);
			put_num(sj, "estimate_seconds", b->skipped[i].estimate_seconds);
			put_num(sj, "spent_seconds", b->skipped[i].spent_seconds);
			json_array_append_new(arr, sj);
		}
		if (b->nr_skipped || json_object_get(o, "skipped"))
			json_object_set_new(o, "skipped", arr);
		else
			json_decref(arr);
		json_object_set_new(doc, "budget", o);
	}
	/* the copy shares untouched members with cap's source: give the
	 * caller a document of its own */
	arr = json_deep_copy(doc);
	json_decref(doc);
	return arr;
}

int capture_write_file(const struct capture *cap, const char *path)
{
	json_t *doc = capture_to_json(cap);
	int ret = capture_validate_json(doc, path);

	if (!ret)
		ret = json_file_write(path, doc);
	json_decref(doc);
	return ret;
}

/* ---- lifecycle and lookups -------------------------------------------- */

void capture_init(struct capture *cap)
{
	memset(cap, 0, sizeof(*cap));
	device_model_init(&cap->device);
}

static void free_strings(char **s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

static void verdict_release(struct capture_verdict *v)
{
	size_t i;

	if (!v)
		return;
	free(v->name);
	free(v->module);
	free(v->reason);
	for (i = 0; i < v->nr_ranks; i++) {
		free(v->ranks[i].gpu);
		free(v->ranks[i].not_timed);
	}
	free(v->ranks);
}

static void free_strings(char **s, size_t n);

static void software_cache_release(struct capture_software_cache *sc)
{
	size_t i;

	if (!sc)
		return;
	free(sc->reason);
	free(sc->occupancy.limited_by);
	free(sc->occupancy.registers);
	for (i = 0; i < sc->nr_candidates; i++)
		free(sc->candidates[i].why);
	free(sc->candidates);
	free(sc->selected);
	free(sc->verification.status);
	free(sc->verification.reason);
	free(sc->verification.output_status);
	free(sc->verification.rewrite_params);
	free(sc->verification.rewrite_ptx);
	free(sc->verification.rewrite_note);
}

static void register_cache_release(struct capture_register_cache *rc)
{
	size_t i;

	if (!rc)
		return;
	free(rc->status);
	for (i = 0; i < rc->nr_hints; i++)
		free(rc->hints[i].loads);
	free(rc->hints);
}

static void oracle_kernel_release(struct capture_oracle_kernel *k)
{
	size_t j, e;

	for (j = 0; j < k->nr_plans; j++) {
		free(k->plans[j].cached);
		free(k->plans[j].output);
		for (e = 0; e < k->plans[j].nr_l2; e++)
			free(k->plans[j].l2[e].form);
		free(k->plans[j].l2);
	}
	free(k->plans);
	free(k->kernel);
	free(k->dimension);
}

static void oracle_release(struct capture_oracle *orc)
{
	size_t i;

	if (!orc)
		return;
	free(orc->status);
	for (i = 0; i < orc->nr_kernels; i++)
		oracle_kernel_release(&orc->kernels[i]);
	free(orc->kernels);
	free(orc);
}

void capture_kernel_release(struct capture_kernel *k)
{
	size_t i;

	free(k->module);
	free(k->name);
	free(k->demangled);
	for (i = 0; i < k->nr_counters; i++) {
		capture_counters_release(&k->counters[i]);
	}
	free(k->counters);
	for (i = 0; i < k->nr_loads; i++) {
		struct capture_load *l = &k->loads[i];

		free(l->instruction);
		free(l->space);
		free(l->cache_op);
		free(l->file);
		free(l->unpatchable_reason);
		free(l->l1_eviction);
	}
	free(k->loads);
	for (i = 0; i < k->nr_pairs; i++)
		free(k->pairs[i].noise_resolution);
	free(k->pairs);
	free(k->allocs_used);
	free(k->data_structures);
	verdict_release(k->verification);
	free(k->verification);
	software_cache_release(k->software_cache);
	if (k->oracle)
		oracle_kernel_release(k->oracle);
	free(k->oracle);
	free(k->software_cache);
	register_cache_release(k->register_cache);
	free(k->register_cache);
	for (i = 0; i < k->nr_ranks; i++) {
		free(k->ranks[i].gpu);
		free(k->ranks[i].loads);
	}
	free(k->ranks);
	if (k->l2_priority) {
		free_strings(k->l2_priority->forms, k->l2_priority->nr_forms);
		for (i = 0; i < k->l2_priority->nr_loads; i++) {
			free(k->l2_priority->loads[i].dram_bytes);
			free(k->l2_priority->loads[i].ordinals);
		}
		free(k->l2_priority->loads);
		free(k->l2_priority->pairs);
		free(k->l2_priority);
	}
}

void capture_release(struct capture *cap)
{
	size_t i;

	if (!cap)
		return;
	free(cap->schema);
	free(cap->status);
	free(cap->tool_version);
	free(cap->created);
	free(cap->program.path);
	free_strings(cap->program.args, cap->program.nr_args);
	free(cap->program.cwd);
	device_model_release(&cap->device);
	free(cap->device_partitioned);
	oracle_release(cap->oracle);
	free(cap->baseline_check.runs);
	free_strings(cap->baseline_check.notes, cap->baseline_check.nr_notes);
	free(cap->measure.method);
	free(cap->options.model);
	free(cap->options.bypass_form);
	free(cap->options.kernels_regex);
	for (i = 0; i < cap->nr_modules; i++) {
		struct capture_module *m = &cap->modules[i];

		free(m->id);
		free(m->origin);
		free(m->arch);
		free(m->ptx);
		free(m->library);
		free(m->no_ptx_reason);
		free_strings(m->kernels, m->nr_kernels);
	}
	free(cap->modules);
	for (i = 0; i < cap->nr_runs; i++)
		capture_run_release(&cap->runs[i]);
	free(cap->runs);
	for (i = 0; i < cap->nr_kernels; i++)
		capture_kernel_release(&cap->kernels[i]);
	free(cap->kernels);
	free_strings(cap->notes, cap->nr_notes);
	for (i = 0; i < cap->nr_all_kernels; i++) {
		free(cap->all_kernels[i].name);
		free(cap->all_kernels[i].allocs_used);
	}
	free(cap->all_kernels);
	free(cap->allocations);
	capture_l2_release(&cap->l2);
	free(cap->verification.status);
	for (i = 0; i < cap->verification.nr_kernels; i++)
		verdict_release(&cap->verification.kernels[i]);
	free(cap->verification.kernels);
	for (i = 0; i < cap->verification.source_patch.nr_left_out; i++) {
		struct capture_left_out *l = &cap->verification.source_patch.left_out[i];

		free(l->function);
		free(l->action);
		free(l->reason);
	}
	free(cap->verification.source_patch.left_out);
	free(cap->verification.source_patch.status);
	output_check_release(&cap->baseline_output);
	output_check_release(&cap->verification_output);
	for (i = 0; i < cap->carveout.nr_kernels; i++) {
		struct capture_carveout_kernel *k = &cap->carveout.kernels[i];

		free(k->name);
		free(k->method);
		free(k->kept);
		free(k->reason);
		free(k->advice);
	}
	free(cap->carveout.kernels);
	for (i = 0; i < cap->budget.nr_skipped; i++)
		free(cap->budget.skipped[i].step);
	free(cap->budget.skipped);
	json_decref(JS(cap->source));
	memset(cap, 0, sizeof(*cap));
}

const struct capture_module *capture_find_module(const struct capture *cap, const char *id)
{
	size_t i;

	for (i = 0; id && i < cap->nr_modules; i++)
		if (!strcmp(cap->modules[i].id, id))
			return &cap->modules[i];
	return NULL;
}

const struct capture_kernel *capture_find_kernel(const struct capture *cap, const char *module,
						 const char *name)
{
	size_t i;

	for (i = 0; i < cap->nr_kernels; i++)
		if ((!module || !strcmp(cap->kernels[i].module, module)) &&
		    !strcmp(cap->kernels[i].name, name))
			return &cap->kernels[i];
	return NULL;
}

const struct capture_load *capture_kernel_find_load(const struct capture_kernel *k,
						    unsigned ordinal)
{
	size_t i;

	for (i = 0; i < k->nr_loads; i++)
		if (k->loads[i].ordinal == ordinal)
			return &k->loads[i];
	return NULL;
}

const struct capture_counters *capture_kernel_counters(const struct capture_kernel *k,
						       const char *variant)
{
	size_t i;

	for (i = 0; i < k->nr_counters; i++)
		if (!strcmp(k->counters[i].variant, variant))
			return &k->counters[i];
	return NULL;
}

const char *capture_kernel_library(const struct capture *cap, const char *kernel)
{
	size_t i, j;

	for (i = 0; i < cap->nr_modules; i++) {
		const struct capture_module *m = &cap->modules[i];

		for (j = 0; m->library && j < m->nr_kernels; j++)
			if (!strcmp(m->kernels[j], kernel))
				return m->library;
	}
	return NULL;
}

const struct capture_run *capture_find_run(const struct capture *cap, int index)
{
	size_t i;

	for (i = 0; i < cap->nr_runs; i++)
		if (cap->runs[i].index == index)
			return &cap->runs[i];
	return NULL;
}
