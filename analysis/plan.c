#include "analysis/plan.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json_file.h"
#include "base/module_id.h"
#include "base/xalloc.h"

#define PLAN_SCHEMA "cacheadvise.plan/1"

void plan_init(struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->extra = json_object();
}

static void module_release(struct plan_module *pm)
{
	size_t i;

	free(pm->id);
	for (i = 0; i < pm->nr_functions; i++) {
		free(pm->functions[i].name);
		free(pm->functions[i].loads);
	}
	free(pm->functions);
}

const char **plan_module_ids(const struct plan *p, size_t *n)
{
	const char **ids = xcalloc(p->nr_modules + 1, sizeof(*ids));
	size_t i;

	*n = 0;
	for (i = 0; i < p->nr_modules; i++)
		if (p->modules[i].id)
			ids[(*n)++] = p->modules[i].id;
	return ids;
}

void plan_release(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->nr_modules; i++)
		module_release(&p->modules[i]);
	free(p->modules);
	json_decref(p->extra);
	memset(p, 0, sizeof(*p));
}

/* ---------------------------------------------------------------- building */

static int same_id(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static struct plan_module *get_module(struct plan *p, const char *id)
{
	size_t i;

	for (i = 0; i < p->nr_modules; i++)
		if (same_id(p->modules[i].id, id))
			return &p->modules[i];
	ALLOC_GROW(p->modules, p->nr_modules + 1, p->alloc_modules);
	memset(&p->modules[p->nr_modules], 0, sizeof(p->modules[0]));
	p->modules[p->nr_modules].id = id ? xstrdup(id) : NULL;
	return &p->modules[p->nr_modules++];
}

static struct plan_function *get_function(struct plan_module *pm, const char *name)
{
	size_t i;

	for (i = 0; i < pm->nr_functions; i++)
		if (!strcmp(pm->functions[i].name, name))
			return &pm->functions[i];
	ALLOC_GROW(pm->functions, pm->nr_functions + 1, pm->alloc_functions);
	memset(&pm->functions[pm->nr_functions], 0, sizeof(pm->functions[0]));
	pm->functions[pm->nr_functions].name = xstrdup(name);
	return &pm->functions[pm->nr_functions++];
}

static struct plan_load *get_load(struct plan *p, const char *module_id, const char *function,
				  unsigned ordinal)
{
	struct plan_function *pf = get_function(get_module(p, module_id), function);
	size_t i;

	for (i = 0; i < pf->nr_loads; i++)
		if (pf->loads[i].ordinal == ordinal)
			return &pf->loads[i];
	ALLOC_GROW(pf->loads, pf->nr_loads + 1, pf->alloc_loads);
	pf->loads[pf->nr_loads].ordinal = ordinal;
	pf->loads[pf->nr_loads].action = LOAD_ACTION_AS_BUILT;
	pf->loads[pf->nr_loads].l2 = L2_PRIORITY_NONE;
	return &pf->loads[pf->nr_loads++];
}

void plan_set(struct plan *p, const char *module_id, const char *function, unsigned ordinal,
	      enum load_action action)
{
	get_load(p, module_id, function, ordinal)->action = action;
}

void plan_set_l2(struct plan *p, const char *module_id, const char *function, unsigned ordinal,
		 enum l2_priority l2)
{
	get_load(p, module_id, function, ordinal)->l2 = l2;
}

/* ---------------------------------------------------------------- reading */

static int bad(const char *name, const char *path, const char *what)
{
	return error_set(CA_E_INPUT, "'%s': %s: %s", name, path, what);
}

/* "16 hex digits" as module_id_compute writes them (lowercased here). */
static int valid_id(const char *s, char out[MODULE_ID_LEN + 1])
{
	size_t i;

	if (strlen(s) != MODULE_ID_LEN)
		return 0;
	for (i = 0; i < MODULE_ID_LEN; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return 0;
		out[i] = (char)tolower((unsigned char)s[i]);
	}
	out[MODULE_ID_LEN] = '\0';
	return 1;
}

/*
 * The modules and functions of the plan being read, by module id and by
 * (module, function name): plan_from_json finds each entry's in constant
 * time, where get_module and get_function search (a plan of 40k functions
 * took 8 to 17 s to read, issue 36). Open addressing over indices, so
 * that t's arrays may grow.
 */
struct plan_index {
	struct slot { size_t m, f; } *slots;    /* f == SIZE_MAX: a module's slot */
	size_t cap, used;                        /* cap a power of two; SIZE_MAX m: empty */
};

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The slot a module (fname NULL) or one of its functions hashes to. */
static uint64_t key_hash(const char *id, size_t m, const char *fname)
{
	uint64_t h = hash_str(0xcbf29ce484222325ull, id);

	if (!fname)
		return h ^ (id ? 1 : 2);
	return hash_str((h ^ m) * 0x100000001b3ull, fname);
}

static void index_put(struct plan_index *ix, const struct plan *t, size_t m, size_t f);

static void index_grow(struct plan_index *ix, const struct plan *t)
{
	struct slot *old = ix->slots;
	size_t i, old_cap = ix->cap;

	ix->cap = old_cap ? old_cap * 2 : 64;
	ix->slots = xmalloc(ix->cap * sizeof(*ix->slots));
	for (i = 0; i < ix->cap; i++)
		ix->slots[i].m = SIZE_MAX;
	ix->used = 0;
	for (i = 0; i < old_cap; i++)
		if (old[i].m != SIZE_MAX)
			index_put(ix, t, old[i].m, old[i].f);
	free(old);
}

static void index_put(struct plan_index *ix, const struct plan *t, size_t m, size_t f)
{
	size_t i;

	if (2 * (ix->used + 1) > ix->cap)
		index_grow(ix, t);
	i = key_hash(t->modules[m].id, m, f == SIZE_MAX ? NULL : t->modules[m].functions[f].name) &
	    (ix->cap - 1);
	while (ix->slots[i].m != SIZE_MAX)
		i = (i + 1) & (ix->cap - 1);
	ix->slots[i].m = m;
	ix->slots[i].f = f;
	ix->used++;
}

/* The module of t with this id (NULL: the one without), added when new. */
static size_t index_module(struct plan_index *ix, struct plan *t, const char *id)
{
	uint64_t h = key_hash(id, 0, NULL);
	size_t i;

	for (i = ix->cap ? h & (ix->cap - 1) : 0; ix->cap && ix->slots[i].m != SIZE_MAX;
	     i = (i + 1) & (ix->cap - 1))
		if (ix->slots[i].f == SIZE_MAX && same_id(t->modules[ix->slots[i].m].id, id))
			return ix->slots[i].m;
	ALLOC_GROW(t->modules, t->nr_modules + 1, t->alloc_modules);
	memset(&t->modules[t->nr_modules], 0, sizeof(t->modules[0]));
	t->modules[t->nr_modules].id = id ? xstrdup(id) : NULL;
	index_put(ix, t, t->nr_modules, SIZE_MAX);
	return t->nr_modules++;
}

/* Function name of module m of t, added when new. */
static struct plan_function *index_function(struct plan_index *ix, struct plan *t, size_t m,
					    const char *name)
{
	struct plan_module *pm = &t->modules[m];
	uint64_t h = key_hash(pm->id, m, name);
	size_t i;

	for (i = ix->cap ? h & (ix->cap - 1) : 0; ix->cap && ix->slots[i].m != SIZE_MAX;
	     i = (i + 1) & (ix->cap - 1))
		if (ix->slots[i].m == m && ix->slots[i].f != SIZE_MAX &&
		    !strcmp(pm->functions[ix->slots[i].f].name, name))
			return &pm->functions[ix->slots[i].f];
	ALLOC_GROW(pm->functions, pm->nr_functions + 1, pm->alloc_functions);
	memset(&pm->functions[pm->nr_functions], 0, sizeof(pm->functions[0]));
	pm->functions[pm->nr_functions].name = xstrdup(name);
	index_put(ix, t, m, pm->nr_functions);
	return &pm->functions[pm->nr_functions++];
}

/* Where each load was given, to name both places of a duplicate. */
struct seen {
	const char *id, *function;
	unsigned ordinal;
	size_t m, f, l;
};

static int cmp_seen(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;
	int r;

	if (!x->id != !y->id)
		return x->id ? 1 : -1;
	if (x->id && (r = strcmp(x->id, y->id)))
		return r;
	if ((r = strcmp(x->function, y->function)))
		return r;
	if (x->ordinal != y->ordinal)
		return x->ordinal < y->ordinal ? -1 : 1;
	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	if (x->f != y->f)
		return x->f < y->f ? -1 : 1;
	return x->l < y->l ? -1 : x->l > y->l;
}

static int parse_loads(struct plan_function *pf, const char *name, const char *id,
		       json_t *jl, size_t mi, size_t fi, struct seen **seen, size_t *nr_seen,
		       size_t *alloc_seen)
{
	const char *fname = pf->name;
	char path[160], what[512];
	size_t li;
	json_t *jload;

	json_array_foreach(jl, li, jload) {
		json_t *jo, *ja;
		json_int_t ord;
		enum load_action act;
		enum l2_priority l2;

		snprintf(path, sizeof(path), "modules[%zu].functions[%zu].loads[%zu]", mi, fi, li);
		if (!json_is_object(jload))
			return bad(name, path, "expected an object {\"ordinal\": N, \"action\": \"...\"}");
		jo = json_object_get(jload, "ordinal");
		ja = json_object_get(jload, "action");
		if (!json_is_integer(jo)) {
			strncat(path, ".ordinal", sizeof(path) - strlen(path) - 1);
			return bad(name, path, jo ? "expected a non-negative integer" : "missing");
		}
		ord = json_integer_value(jo);
		if (ord < 0 || ord > 0x7fffffff) {
			strncat(path, ".ordinal", sizeof(path) - strlen(path) - 1);
			if (ord < 0)
				snprintf(what, sizeof(what), "%lld is not a load ordinal (0 or more)",
					 (long long)ord);
			else
				snprintf(what, sizeof(what), "%lld is too large for a load ordinal "
					 "(at most %d)", (long long)ord, 0x7fffffff);
			return bad(name, path, what);
		}
		if (!json_is_string(ja)) {
			strncat(path, ".action", sizeof(path) - strlen(path) - 1);
			return bad(name, path, ja ? "expected a string" : "missing");
		}
		if (load_form_parse(json_string_value(ja), &act, &l2)) {
			strncat(path, ".action", sizeof(path) - strlen(path) - 1);
			snprintf(what, sizeof(what),
				 "unknown action '%.80s' (expected an L1 action: default, cache, "
				 "bypass, stream, last_use, L1::no_allocate, L1::evict_first or "
				 "L1::evict_last; an L2 priority: L2::evict_first, L2::evict_last, "
				 "L2::evict_normal or L2::evict_unchanged; or both joined by '+', "
				 "as in L1::no_allocate+L2::evict_first)",
				 json_string_value(ja));
			return bad(name, path, what);
		}
		/* appended, not looked up: a load given twice is refused below */
		ALLOC_GROW(pf->loads, pf->nr_loads + 1, pf->alloc_loads);
		pf->loads[pf->nr_loads].ordinal = (unsigned)ord;
		pf->loads[pf->nr_loads].action = act;
		pf->loads[pf->nr_loads].l2 = l2;
		pf->nr_loads++;
		ALLOC_GROW(*seen, *nr_seen + 1, *alloc_seen);
		(*seen)[*nr_seen].id = id;
		(*seen)[*nr_seen].function = fname;
		(*seen)[*nr_seen].ordinal = (unsigned)ord;
		(*seen)[*nr_seen].m = mi;
		(*seen)[*nr_seen].f = fi;
		(*seen)[*nr_seen].l = li;
		(*nr_seen)++;
	}
	return 0;
}

int plan_from_json(struct plan *p, json_t *doc, const char *name)
{
	struct plan t;
	struct plan_index ix = { NULL, 0, 0 };
	struct seen *seen = NULL;
	size_t nr_seen = 0, alloc_seen = 0, mi, i;
	json_t *jmods, *jm, *v;
	const char *key;
	char path[128];
	int ret;

	if (!name)
		name = "plan";
	ret = json_check_schema(doc, name, PLAN_SCHEMA);
	if (ret)
		return ret;
	jmods = json_object_get(doc, "modules");
	if (!json_is_array(jmods))
		return bad(name, "modules", jmods ? "expected an array" : "missing");

	plan_init(&t);
	json_object_foreach(doc, key, v) {
		if (strcmp(key, "schema") && strcmp(key, "modules"))
			json_object_set(t.extra, key, v);
	}
	json_array_foreach(jmods, mi, jm) {
		json_t *jid, *jfns, *jf;
		char idbuf[MODULE_ID_LEN + 1];
		const char *id = NULL;
		size_t fi;

		snprintf(path, sizeof(path), "modules[%zu]", mi);
		if (!json_is_object(jm)) {
			ret = bad(name, path, "expected an object");
			goto out;
		}
		jid = json_object_get(jm, "id");
		if (jid && !json_is_null(jid)) {
			if (!json_is_string(jid) || !valid_id(json_string_value(jid), idbuf)) {
				strncat(path, ".id", sizeof(path) - strlen(path) - 1);
				ret = bad(name, path, "expected a module id of 16 hex digits "
					  "(as 'cacheadvise inspect' prints), or no \"id\"");
				goto out;
			}
			id = idbuf;
		}
		jfns = json_object_get(jm, "functions");
		if (!json_is_array(jfns)) {
			strncat(path, ".functions", sizeof(path) - strlen(path) - 1);
			ret = bad(name, path, jfns ? "expected an array" : "missing");
			goto out;
		}
		/* t holds copies of the id and the names; the seen list points at them */
		json_array_foreach(jfns, fi, jf) {
			json_t *jn, *jl;
			struct plan_function *pf;
			size_t m;

			snprintf(path, sizeof(path), "modules[%zu].functions[%zu]", mi, fi);
			if (!json_is_object(jf)) {
				ret = bad(name, path, "expected an object {\"name\": ..., \"loads\": [...]}");
				goto out;
			}
			jn = json_object_get(jf, "name");
			jl = json_object_get(jf, "loads");
			if (!json_is_string(jn) || !*json_string_value(jn)) {
				strncat(path, ".name", sizeof(path) - strlen(path) - 1);
				ret = bad(name, path, jn ? "expected a function name (a non-empty string)"
						    : "missing");
				goto out;
			}
			if (!json_is_array(jl)) {
				strncat(path, ".loads", sizeof(path) - strlen(path) - 1);
				ret = bad(name, path, jl ? "expected an array" : "missing");
				goto out;
			}
			m = index_module(&ix, &t, id);
			pf = index_function(&ix, &t, m, json_string_value(jn));
			ret = parse_loads(pf, name, t.modules[m].id, jl, mi, fi, &seen, &nr_seen,
					  &alloc_seen);
			if (ret)
				goto out;
		}
	}
	/* The same load twice (same module id or both without one) is ambiguous. */
	if (nr_seen)
		qsort(seen, nr_seen, sizeof(*seen), cmp_seen);
	for (i = 0; i + 1 < nr_seen; i++) {
		const struct seen *a = &seen[i], *b = &seen[i + 1];
		if (same_id(a->id, b->id) && !strcmp(a->function, b->function) &&
		    a->ordinal == b->ordinal) {
			char what[512];
			snprintf(path, sizeof(path), "modules[%zu].functions[%zu].loads[%zu]", b->m,
				 b->f, b->l);
			snprintf(what, sizeof(what),
				 "load %u of '%.200s' is already given at modules[%zu].functions[%zu].loads[%zu]",
				 b->ordinal, b->function, a->m, a->f, a->l);
			ret = bad(name, path, what);
			goto out;
		}
	}
	ret = 0;
out:
	free(seen);
	free(ix.slots);
	if (ret) {
		plan_release(&t);
		return ret;
	}
	plan_release(p);
	*p = t;
	return 0;
}

int plan_load_file(struct plan *p, const char *path)
{
	json_t *doc = json_file_load(path);
	int ret;

	if (!doc)
		return CA_E_INPUT;
	ret = plan_from_json(p, doc, path);
	json_decref(doc);
	return ret;
}

/* ---------------------------------------------------------------- writing */

json_t *plan_extra_section(const struct plan *p, const char *key)
{
	json_t *v = p->extra ? json_object_get(p->extra, key) : NULL;

	return v && !json_is_null(v) ? v : NULL;
}

json_t *plan_to_json(const struct plan *p)
{
	json_t *doc = json_object(), *jmods = json_array(), *v;
	const char *key;
	size_t mi, fi, li;

	json_object_set_new(doc, "schema", json_string(PLAN_SCHEMA));
	for (mi = 0; mi < p->nr_modules; mi++) {
		const struct plan_module *pm = &p->modules[mi];
		json_t *jm = json_object(), *jfns = json_array();

		for (fi = 0; fi < pm->nr_functions; fi++) {
			const struct plan_function *pf = &pm->functions[fi];
			json_t *jl;

			if (!pf->nr_loads)
				continue;
			jl = json_array();
			for (li = 0; li < pf->nr_loads; li++) {
				/* an entry that changes nothing is not written */
				if (pf->loads[li].action == LOAD_ACTION_AS_BUILT &&
				    pf->loads[li].l2 == L2_PRIORITY_NONE)
					continue;
				json_array_append_new(jl, json_pack("{s:I, s:s}", "ordinal",
					(json_int_t)pf->loads[li].ordinal, "action",
					load_form_name(pf->loads[li].action, pf->loads[li].l2)));
			}
			if (!json_array_size(jl)) {
				json_decref(jl);
				continue;
			}
			json_array_append_new(jfns, json_pack("{s:s, s:o}", "name", pf->name,
							      "loads", jl));
		}
		if (!json_array_size(jfns)) {
			json_decref(jfns);
			json_decref(jm);
			continue;
		}
		if (pm->id)
			json_object_set_new(jm, "id", json_string(pm->id));
		json_object_set_new(jm, "functions", jfns);
		json_array_append_new(jmods, jm);
	}
	json_object_set_new(doc, "modules", jmods);
	if (p->extra) {
		json_object_foreach(p->extra, key, v) {
			if (strcmp(key, "schema") && strcmp(key, "modules"))
				json_object_set(doc, key, v);
		}
	}
	return doc;
}

int plan_write_file(const struct plan *p, const char *path)
{
	json_t *doc = plan_to_json(p);
	int ret = json_file_write(path, doc);

	json_decref(doc);
	return ret;
}

/* ---------------------------------------------------------------- applying */

struct ranked_edit {
	struct ptx_load_edit e;
	int specific;               /* from an entry with the module's id */
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked_edit *x = a, *y = b;
	int r = strcmp(x->e.function, y->e.function);

	if (r)
		return r;
	if (x->e.ordinal != y->e.ordinal)
		return x->e.ordinal < y->e.ordinal ? -1 : 1;
	return y->specific - x->specific;
}

size_t plan_edits_for_module(const struct plan *p, const char *module_id,
			     const struct ptx_module *m, struct ptx_load_edit **edits)
{
	struct ranked_edit *r = NULL;
	size_t nr = 0, alloc = 0, mi, fi, li, i, n = 0;

	for (mi = 0; mi < p->nr_modules; mi++) {
		const struct plan_module *pm = &p->modules[mi];
		int specific = pm->id != NULL;

		if (pm->id && (!module_id || strcmp(pm->id, module_id)))
			continue;
		for (fi = 0; fi < pm->nr_functions; fi++) {
			const struct plan_function *pf = &pm->functions[fi];

			if (!ptx_module_find(m, pf->name))
				continue;
			for (li = 0; li < pf->nr_loads; li++) {
				ALLOC_GROW(r, nr + 1, alloc);
				r[nr].e.function = pf->name;
				r[nr].e.ordinal = pf->loads[li].ordinal;
				r[nr].e.action = pf->loads[li].action;
				r[nr].e.l2 = pf->loads[li].l2;
				r[nr].specific = specific;
				nr++;
			}
		}
	}
	/* An entry with the module's id overrides one without for the same load. */
	if (nr)
		qsort(r, nr, sizeof(*r), cmp_ranked);
	*edits = xmalloc((nr ? nr : 1) * sizeof(**edits));
	for (i = 0; i < nr; i++) {
		if (i && !strcmp(r[i].e.function, r[i - 1].e.function) &&
		    r[i].e.ordinal == r[i - 1].e.ordinal)
			continue;
		(*edits)[n++] = r[i].e;
	}
	free(r);
	return n;
}
