#include "collectors/intake.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/error.h"
#include "analysis/ptx.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/fatbin.h"

void intake_init(struct intake *in)
{
	memset(in, 0, sizeof(*in));
}

static void module_release(struct intake_module *m)
{
	size_t i;

	free(m->origin);
	free(m->no_ptx_reason);
	free(m->source_name);
	free(m->ptx_archs);
	free(m->cubin_archs);
	ptx_module_free(m->ptx);
	for (i = 0; i < m->nr_cubin_kernels; i++)
		free(m->cubin_kernels[i]);
	free(m->cubin_kernels);
	free(m->ptx_file);
	free(m->triton.name);
	free(m->triton.triton_version);
}

void intake_release(struct intake *in)
{
	size_t i;

	for (i = 0; i < in->nr_modules; i++)
		module_release(&in->modules[i]);
	free(in->modules);
	intake_init(in);
}

static void push_arch(unsigned **v, size_t *nr, unsigned arch)
{
	*v = xrealloc(*v, (*nr + 1) * sizeof(**v));
	(*v)[(*nr)++] = arch;
}

/* The PTX entry of fatbin index fi to use: the highest arch not above
 * device_arch (0: the highest), the first of equals. */
static const struct fatbin_entry *choose_ptx(const struct fatbin *fb, size_t first, size_t end,
					     unsigned device_arch)
{
	const struct fatbin_entry *best = NULL;
	size_t i;

	for (i = first; i < end; i++) {
		const struct fatbin_entry *e = &fb->entries[i];
		if (e->kind != FATBIN_KIND_PTX || (device_arch && e->arch > device_arch))
			continue;
		if (!best || e->arch > best->arch)
			best = e;
	}
	return best;
}

static char *no_ptx_reason(const struct fatbin *fb, const struct intake_module *m,
			   unsigned device_arch)
{
	unsigned arch = m->nr_cubin_archs ? m->cubin_archs[0] : (device_arch ? device_arch : 90);
	unsigned lowest = 0;
	size_t i;

	if (m->nr_ptx_archs) {
		for (i = 0; i < m->nr_ptx_archs; i++)
			if (!lowest || m->ptx_archs[i] < lowest)
				lowest = m->ptx_archs[i];
		return xasprintf("no PTX for sm_%u or older: the module's PTX needs compute_%u "
				 "or newer", device_arch, lowest);
	}
	if (fb->has_relocatable_device_code)
		return xstrdup("no PTX: the program links its device code at build time "
			       "(-rdc=true), which cacheadvise cannot patch; build without "
			       "-rdc=true to profile it");
	if (!m->nr_cubin_kernels)
		return xstrdup("no PTX and no kernels: nothing to patch");
	return xasprintf("no PTX: cannot patch; rebuild with -gencode arch=compute_%u,"
			 "code=[sm_%u,compute_%u] (or nvcc -arch=sm_%u, which embeds PTX)",
			 arch, arch, arch, arch);
}

/* Builds the module of entries [first, end) of fb (one fatbin). */
static int add_module(struct intake *in, const struct fatbin *fb, size_t first, size_t end,
		      unsigned device_arch)
{
	struct intake_module m;
	const struct fatbin_entry *ptx, *cubin = NULL;
	size_t i;
	int ret;

	memset(&m, 0, sizeof(m));
	m.origin = xstrdup(fb->entries[first].origin);
	m.fatbin_index = fb->entries[first].fatbin_index;
	for (i = first; i < end; i++) {
		const struct fatbin_entry *e = &fb->entries[i];
		if (e->kind == FATBIN_KIND_PTX) {
			push_arch(&m.ptx_archs, &m.nr_ptx_archs, e->arch);
		} else {
			push_arch(&m.cubin_archs, &m.nr_cubin_archs, e->arch);
			if (!cubin)
				cubin = e;
		}
		if (!m.source_name && e->source_name)
			m.source_name = xstrdup(e->source_name);
	}

	ptx = choose_ptx(fb, first, end, device_arch);
	if (ptx) {
		m.has_ptx = 1;
		m.arch = ptx->arch;
		module_id_compute(ptx->data, ptx->size, m.id);
		ret = ptx_parse(m.origin, (const char *)ptx->data, ptx->size, &m.ptx);
		if (ret) {
			module_release(&m);
			return ret;
		}
	} else {
		if (cubin) {
			m.arch = cubin->arch;
			module_id_compute(cubin->data, cubin->size, m.id);
			ret = fatbin_cubin_kernels(cubin->data, cubin->size, m.origin,
						   &m.cubin_kernels, &m.nr_cubin_kernels);
			if (ret) {
				module_release(&m);
				return ret;
			}
		}
		m.no_ptx_reason = no_ptx_reason(fb, &m, device_arch);
	}
	ALLOC_GROW(in->modules, in->nr_modules + 1, in->alloc_modules);
	in->modules[in->nr_modules++] = m;
	return 0;
}

int intake_add_fatbin(struct intake *in, const struct fatbin *fb, unsigned device_arch)
{
	size_t first = 0, end;
	int ret;

	if (fb->has_relocatable_device_code)
		in->relocatable_device_code = 1;
	while (first < fb->nr_entries) {
		/* Entries of one fatbin are contiguous and share its index. */
		for (end = first + 1; end < fb->nr_entries; end++)
			if (fb->entries[end].fatbin_index != fb->entries[first].fatbin_index)
				break;
		ret = add_module(in, fb, first, end, device_arch);
		if (ret)
			return ret;
		first = end;
	}
	return 0;
}

/* ---- cubins compiled at run time, with their PTX beside them (Triton) ---- */

char *intake_triton_cache_dir(void)
{
	const char *dir = getenv("TRITON_CACHE_DIR"), *home = getenv("HOME");

	if (dir && *dir)
		return xstrdup(dir);
	return home && *home ? xasprintf("%s/.triton/cache", home) : NULL;
}

static long meta_long(json_t *doc, const char *key)
{
	json_t *v = json_object_get(doc, key);

	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

static char *meta_string(json_t *doc, const char *key)
{
	json_t *v = json_object_get(doc, key);

	return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

/* Triton's <kernel>.json: what the intake keeps of it (a file that is not
 * Triton's metadata is ignored). */
static void read_triton_meta(struct intake_triton *t, const char *path)
{
	json_t *doc = json_load_file(path, 0, NULL);

	if (json_is_object(doc) && json_object_get(doc, "num_warps")) {
		t->present = 1;
		t->name = meta_string(doc, "name");
		t->num_warps = meta_long(doc, "num_warps");
		t->num_stages = meta_long(doc, "num_stages");
		t->shared = meta_long(doc, "shared");
		t->global_scratch_size = meta_long(doc, "global_scratch_size");
		t->profile_scratch_size = meta_long(doc, "profile_scratch_size");
		t->triton_version = meta_string(doc, "triton_version");
	}
	json_decref(doc);
}

/* Whether the PTX's kernels are the cubin's: the same names, each once. */
static int same_kernels(const struct ptx_module *pm, const struct intake_module *m)
{
	size_t i, j, entries = 0;

	for (i = 0; i < pm->nr_functions; i++) {
		if (!pm->functions[i].is_entry)
			continue;
		entries++;
		for (j = 0; j < m->nr_cubin_kernels; j++)
			if (!strcmp(pm->functions[i].name, m->cubin_kernels[j]))
				break;
		if (j == m->nr_cubin_kernels)
			return 0;
	}
	return entries == m->nr_cubin_kernels && entries > 0;
}

/*
 * The module m (a cubin without PTX) takes the PTX of cubin_path's
 * <stem>.ptx when there is one with the cubin's kernels; else, where there
 * is one that cannot be used, m's reason says why.
 */
static void adopt_ptx_beside(struct intake_module *m, const char *cubin_path)
{
	const char *dot = strrchr(cubin_path, '.');
	struct strbuf sb = STRBUF_INIT;
	struct ptx_module *pm = NULL;
	char *stem, *ptx_path, *meta_path, *why = NULL;

	if (m->has_ptx || !dot || strcmp(dot, ".cubin"))
		return;
	stem = xstrndup(cubin_path, (size_t)(dot - cubin_path));
	ptx_path = xasprintf("%s.ptx", stem);
	meta_path = xasprintf("%s.json", stem);
	if (access(ptx_path, R_OK))
		goto out;
	if (strbuf_read_file(&sb, ptx_path, 0) || ptx_parse(ptx_path, sb.buf, sb.len, &pm)) {
		why = xasprintf("the PTX beside it, '%s', cannot be read: %s", ptx_path,
				error_message());
		error_clear();
		goto out;
	}
	if (!same_kernels(pm, m)) {
		why = xasprintf("the PTX beside it, '%s', is not the cubin's: its kernels differ",
				ptx_path);
		ptx_module_free(pm);
		goto out;
	}
	m->has_ptx = 1;
	m->ptx = pm;
	m->arch = 0;
	sscanf(pm->target, "sm_%u", &m->arch);
	module_id_compute(pm->text, pm->len, m->id);
	m->ptx_file = ptx_path;
	ptx_path = NULL;
	free(m->no_ptx_reason);
	m->no_ptx_reason = NULL;
	read_triton_meta(&m->triton, meta_path);
out:
	if (why) {
		free(m->no_ptx_reason);
		m->no_ptx_reason = why;
	}
	strbuf_release(&sb);
	free(stem);
	free(ptx_path);
	free(meta_path);
}

/*
 * Calls visit(dir, ctx) for each entry folder of Triton's cache (<cache>/<hash>),
 * until it returns non-zero.
 */
static void walk_triton_cache(int (*visit)(const char *dir, void *ctx), void *ctx)
{
	char *root = intake_triton_cache_dir();
	DIR *top = root ? opendir(root) : NULL;
	struct dirent *d;
	int stop = 0;

	while (top && !stop && (d = readdir(top))) {
		char *dir;

		if (d->d_name[0] == '.')
			continue;
		dir = xasprintf("%s/%s", root, d->d_name);
		stop = visit(dir, ctx);
		free(dir);
	}
	if (top)
		closedir(top);
	free(root);
}

struct compiles {
	const char *kernel;
	struct compile {
		char *path;             /* the cubin, else the PTX */
		struct timespec t;      /* when the PTX was written */
	} *v;
	size_t nr, alloc;
};

static int visit_compiles(const char *dir, void *ctx)
{
	struct compiles *c = ctx;
	char *ptx = xasprintf("%s/%s.ptx", dir, c->kernel), *cubin;
	struct stat st;

	if (!stat(ptx, &st) && S_ISREG(st.st_mode)) {
		cubin = xasprintf("%s/%s.cubin", dir, c->kernel);
		ALLOC_GROW(c->v, c->nr + 1, c->alloc);
		c->v[c->nr].path = access(cubin, R_OK) ? xstrdup(ptx) : xstrdup(cubin);
		c->v[c->nr++].t = st.st_mtim;
		free(cubin);
	}
	free(ptx);
	return 0;
}

/* Newest first; of equal times, by path. */
static int compile_cmp(const void *a, const void *b)
{
	const struct compile *x = a, *y = b;

	if (x->t.tv_sec != y->t.tv_sec)
		return x->t.tv_sec < y->t.tv_sec ? 1 : -1;
	if (x->t.tv_nsec != y->t.tv_nsec)
		return x->t.tv_nsec < y->t.tv_nsec ? 1 : -1;
	return strcmp(x->path, y->path);
}

char **intake_triton_compiles(const char *kernel, size_t *nr)
{
	struct compiles c = { kernel, NULL, 0, 0 };
	char **paths;
	size_t i;

	walk_triton_cache(visit_compiles, &c);
	if (c.nr)
		qsort(c.v, c.nr, sizeof(*c.v), compile_cmp);
	paths = xcalloc(c.nr + 1, sizeof(*paths));
	for (i = 0; i < c.nr; i++)
		paths[i] = c.v[i].path;
	free(c.v);
	if (nr)
		*nr = c.nr;
	return paths;
}

void intake_triton_compiles_free(char **paths)
{
	free_string_list(paths);
}

struct same_bytes {
	const void *data;
	size_t size;
	char *found;                /* the .cubin file with these bytes */
};

static int visit_same_bytes(const char *dir, void *ctx)
{
	struct same_bytes *sb = ctx;
	DIR *sub = opendir(dir);
	struct dirent *f;

	while (sub && !sb->found && (f = readdir(sub))) {
		size_t n = strlen(f->d_name);
		struct stat st;
		char *path;

		if (n < 7 || strcmp(f->d_name + n - 6, ".cubin"))
			continue;
		path = xasprintf("%s/%s", dir, f->d_name);
		if (!stat(path, &st) && S_ISREG(st.st_mode) && (size_t)st.st_size == sb->size) {
			struct strbuf buf = STRBUF_INIT;

			if (!strbuf_read_file(&buf, path, sb->size + 1) && buf.len == sb->size &&
			    !memcmp(buf.buf, sb->data, sb->size))
				sb->found = path;
			strbuf_release(&buf);
		}
		if (sb->found != path)
			free(path);
	}
	if (sub)
		closedir(sub);
	return sb->found != NULL;
}

/* A .cubin file in Triton's cache with exactly these bytes (caller frees), or NULL. */
static char *find_cached_cubin(const void *data, size_t size)
{
	struct same_bytes sb = { data, size, NULL };

	walk_triton_cache(visit_same_bytes, &sb);
	return sb.found;
}

int intake_read_file(struct intake *in, const char *path, unsigned device_arch)
{
	struct fatbin fb;
	size_t before = in->nr_modules;
	int ret;

	fatbin_init(&fb);
	ret = fatbin_read_file(&fb, path);
	if (!ret)
		ret = intake_add_fatbin(in, &fb, device_arch);
	/* one cubin file: a kernel compiled at run time may have its PTX beside it */
	if (!ret && in->nr_modules == before + 1 && fb.nr_entries == 1 &&
	    fb.entries[0].kind == FATBIN_KIND_CUBIN)
		adopt_ptx_beside(&in->modules[before], path);
	fatbin_release(&fb);
	return ret;
}

struct wanted_ids {
	struct intake *in;
	const char *const *ids;
	size_t nr_ids;
	unsigned device_arch;
	int ret;
};

static int intake_has(const struct intake *in, const char *id)
{
	size_t i;

	for (i = 0; i < in->nr_modules; i++)
		if (!strcmp(in->modules[i].id, id))
			return 1;
	return 0;
}

/* The <stem>.ptx files of one cache folder whose id is wanted and not yet
 * read: their <stem>.cubin (the PTX adopted beside it) into the intake. */
static int visit_wanted_ids(const char *dir, void *ctx)
{
	struct wanted_ids *w = ctx;
	DIR *sub = opendir(dir);
	struct dirent *f;

	while (sub && !w->ret && (f = readdir(sub))) {
		size_t n = strlen(f->d_name), i;
		struct strbuf ptx = STRBUF_INIT;
		char id[MODULE_ID_LEN + 1], *path;

		if (n < 5 || strcmp(f->d_name + n - 4, ".ptx"))
			continue;
		path = xasprintf("%s/%s", dir, f->d_name);
		if (!strbuf_read_file(&ptx, path, 0)) {
			module_id_compute(ptx.buf, ptx.len, id);
			for (i = 0; i < w->nr_ids && strcmp(w->ids[i], id); i++)
				;
			if (i < w->nr_ids && !intake_has(w->in, id)) {
				char *cubin = xasprintf("%.*s.cubin", (int)(strlen(path) - 4), path);

				w->ret = intake_read_file(w->in, access(cubin, R_OK) ? path : cubin,
							  w->device_arch);
				free(cubin);
			}
		}
		error_clear();
		strbuf_release(&ptx);
		free(path);
	}
	if (sub)
		closedir(sub);
	return w->ret != 0;
}

int intake_read_triton_modules(struct intake *in, const char *const *ids, size_t nr_ids,
			       unsigned device_arch)
{
	struct wanted_ids w = { in, ids, nr_ids, device_arch, 0 };

	if (nr_ids)
		walk_triton_cache(visit_wanted_ids, &w);
	return w.ret;
}

int intake_read_image(struct intake *in, const void *image, const char *name,
		      unsigned device_arch)
{
	struct fatbin fb;
	size_t before = in->nr_modules;
	int ret;

	fatbin_init(&fb);
	ret = fatbin_parse_image(&fb, image, name);
	if (!ret)
		ret = intake_add_fatbin(in, &fb, device_arch);
	/* a bare cubin image: Triton loads its cache's cubins this way */
	if (!ret && in->nr_modules == before + 1 && fb.nr_entries == 1 &&
	    fb.entries[0].kind == FATBIN_KIND_CUBIN && !in->modules[before].has_ptx) {
		char *path = find_cached_cubin(fb.entries[0].data, fb.entries[0].size);

		if (path)
			adopt_ptx_beside(&in->modules[before], path);
		free(path);
	}
	fatbin_release(&fb);
	return ret;
}

/*
 * Why a module cuModuleLoad read from a file has no PTX: a cubin compiled
 * at run time (Triton's cache holds <name>.cubin with <name>.ptx beside
 * it, which the intake adopts when it is the cubin's), whose PTX is
 * missing or unusable; never "rebuild with -gencode", which is no advice
 * for a JIT compiler's output (issue 25).
 */
char *intake_cubin_file_reason(const char *path)
{
	const char *dot = strrchr(path, '.');
	int triton = strstr(path, "/triton/") || strstr(path, ".triton/") || strstr(path, "triton_");
	char *ptx = NULL;
	int beside = 0;

	if (dot && !strcmp(dot, ".cubin")) {
		ptx = xasprintf("%.*s.ptx", (int)(dot - path), path);
		beside = !access(ptx, R_OK);
	}
	if (triton || beside) {
		char *s = xasprintf("a cubin loaded at run time from '%s'%s: %s, so its kernels are "
				    "not measured (L2 windows and carve-out checks still apply)",
				    path, triton ? ", compiled by Triton (or torch.compile)" : "",
				    beside ? "the PTX beside it does not parse or names other kernels "
				    "than the cubin" : "no PTX of it was found beside it (Triton keeps "
				    "<kernel>.ptx next to <kernel>.cubin in its cache)");
		free(ptx);
		return s;
	}
	free(ptx);
	return xasprintf("loaded at run time from '%s', which holds no PTX: not patchable; if it is "
			 "the program's own code, build that file with PTX (-gencode "
			 "arch=compute_XX,code=compute_XX) or load it from a fatbin that has PTX",
			 path);
}
