#include "emitters/rewrite/regcache_patch.h"
#include "emitters/rewrite/rewrite_backend.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xalloc.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/source_file.h"

#define CONTEXT 3
#define HEADER_NAME "cacheadvise/regcache.cuh"
#define NOT_VERIFIED "not verified on this program"

/* One line of the edit script: ' ' kept, '-' removed, '+' added. */
struct op {
	char kind;
	size_t old_line;            /* 1-based, for ' ' and '-' */
	const char *text;           /* for '+' (borrowed) */
};

struct script {
	struct op *v;
	size_t nr, alloc;
};

static void op_add(struct script *s, char kind, size_t old_line, const char *text)
{
	ALLOC_GROW(s->v, s->nr + 1, s->alloc);
	s->v[s->nr++] = (struct op){ kind, old_line, text };
}

static int line_eq(const struct source_file *sf, size_t n, const char *text)
{
	size_t len;
	const char *s = source_file_line(sf, n, &len);

	return strlen(text) == len && !memcmp(s, text, len);
}

/* Old lines [a, b] against new[0, nr): the longest common subsequence. */
static void diff_block(struct script *s, const struct source_file *sf, size_t a, size_t b,
		       char *const *nw, size_t nr)
{
	size_t n = b - a + 1, i, j;
	unsigned *lcs = xcalloc((n + 1) * (nr + 1), sizeof(*lcs));

#define L(i, j) lcs[(i) * (nr + 1) + (j)]
	for (i = n; i-- > 0;)
		for (j = nr; j-- > 0;)
			L(i, j) = line_eq(sf, a + i, nw[j]) ? L(i + 1, j + 1) + 1 :
				  (L(i + 1, j) > L(i, j + 1) ? L(i + 1, j) : L(i, j + 1));
	i = j = 0;
	while (i < n || j < nr) {
		if (i < n && j < nr && line_eq(sf, a + i, nw[j])) {
			op_add(s, ' ', a + i, NULL);
			i++;
			j++;
		} else if (i < n && (j == nr || L(i + 1, j) >= L(i, j + 1))) {
			op_add(s, '-', a + i, NULL);
			i++;
		} else {
			op_add(s, '+', 0, nw[j]);
			j++;
		}
	}
#undef L
	free(lcs);
}

static void emit_line(struct strbuf *out, const struct source_file *sf, const struct op *o)
{
	size_t len;
	const char *s;

	strbuf_addch(out, o->kind);
	if (o->kind == '+') {
		strbuf_addstr(out, o->text);
	} else {
		s = source_file_line(sf, o->old_line, &len);
		strbuf_add(out, s, len);
	}
	strbuf_addch(out, '\n');
}

/* The script as hunks with CONTEXT lines around the changes. */
static void emit_hunks(struct strbuf *out, const struct source_file *sf, const struct script *s)
{
	size_t i = 0, old_at = 1, new_at = 1;
	size_t *old_before = xmalloc((s->nr + 1) * sizeof(*old_before));
	size_t *new_before = xmalloc((s->nr + 1) * sizeof(*new_before));

	for (i = 0; i < s->nr; i++) {
		old_before[i] = old_at;
		new_before[i] = new_at;
		old_at += s->v[i].kind != '+';
		new_at += s->v[i].kind != '-';
	}
	for (i = 0; i < s->nr;) {
		size_t first, last, end, k, oc = 0, nc = 0;

		if (s->v[i].kind == ' ') {
			i++;
			continue;
		}
		first = i > CONTEXT ? i - CONTEXT : 0;
		while (first < i && s->v[first].kind != ' ')
			first++;
		last = i;
		for (k = i; k < s->nr; k++) {
			if (s->v[k].kind != ' ')
				last = k;
			else if (k - last > 2 * CONTEXT)
				break;
		}
		end = last + CONTEXT + 1 < s->nr ? last + CONTEXT + 1 : s->nr;
		for (k = first; k < end; k++) {
			oc += s->v[k].kind != '+';
			nc += s->v[k].kind != '-';
		}
		strbuf_addf(out, "@@ -%zu,%zu +%zu,%zu @@\n", oc ? old_before[first] : old_before[first] - 1,
			    oc, nc ? new_before[first] : new_before[first] - 1, nc);
		for (k = first; k < end; k++)
			emit_line(out, sf, &s->v[k]);
		i = end;
	}
	free(old_before);
	free(new_before);
}

/* After which line the #include goes: the last #include above line `before`. */
static size_t include_position(const struct source_file *sf, size_t before)
{
	size_t n, at = 0;

	for (n = 1; n < before && n <= sf->nr_lines; n++) {
		size_t len;
		const char *s = source_file_line(sf, n, &len);

		while (len && (*s == ' ' || *s == '\t')) {
			s++;
			len--;
		}
		if (len > 1 && *s == '#' && !sf->in_comment[n - 1]) {
			const char *d = s + 1;

			while (d < s + len && (*d == ' ' || *d == '\t'))
				d++;
			if ((size_t)(s + len - d) >= 7 && !strncmp(d, "include", 7))
				at = n;
		}
	}
	return at;
}

static int rw_cmp(const void *x, const void *y)
{
	const struct regcache_rewrite *const *p = x, *const *q = y;

	return (*p)->first_line < (*q)->first_line ? -1 : (*p)->first_line > (*q)->first_line;
}

size_t regcache_patch_file(struct strbuf *out, const char *path, const struct source_file *sf,
			   const struct regcache_rewrite *const *rws, size_t n)
{
	const struct regcache_rewrite **v = xmalloc((n ? n : 1) * sizeof(*v));
	struct script s = { 0 };
	size_t nr = 0, i, line = 1, inc_at;
	char *inc = xstrdup("#include <" HEADER_NAME ">   /* installed with cacheadvise: "
			    "compile with -I<its prefix>/include */");
	int has_include = strstr(sf->text, "<" HEADER_NAME ">") || strstr(sf->text, "\"regcache.cuh\"");

	for (i = 0; i < n; i++)
		if (rws[i]->status == REGCACHE_REWRITE_PATCHED && rws[i]->first_line &&
		    rws[i]->last_line <= sf->nr_lines)
			v[nr++] = rws[i];
	qsort(v, nr, sizeof(*v), rw_cmp);
	/* Overlapping rewrites (two structures of one loop): the first one. */
	for (i = 1; i < nr;) {
		if (v[i]->first_line <= v[i - 1]->last_line) {
			memmove(v + i, v + i + 1, (nr - i - 1) * sizeof(*v));
			nr--;
		} else {
			i++;
		}
	}
	if (!nr) {
		free(v);
		free(inc);
		return 0;
	}
	inc_at = has_include ? (size_t)-1 : include_position(sf, v[0]->first_line);
	for (i = 0; i <= nr; i++) {
		size_t upto = i < nr ? v[i]->first_line : sf->nr_lines + 1;

		for (; line < upto; line++) {
			if (inc_at == 0 && line == 1)
				op_add(&s, '+', 0, inc);
			op_add(&s, ' ', line, NULL);
			if (line == inc_at)
				op_add(&s, '+', 0, inc);
		}
		if (i == nr)
			break;
		diff_block(&s, sf, v[i]->first_line, v[i]->last_line, v[i]->new_lines,
			   v[i]->nr_new_lines);
		line = v[i]->last_line + 1;
	}
	strbuf_addf(out, "--- a/%s\n+++ b/%s\n", path, path);
	emit_hunks(out, sf, &s);
	free(s.v);
	free(v);
	free(inc);
	return nr;
}

/* The capture's side. */

static const struct report_load *load_by_ordinal(const struct report_kernel *k, unsigned ord)
{
	size_t i;

	for (i = 0; i < k->nr_loads; i++)
		if (k->loads[i].ordinal == ord)
			return &k->loads[i];
	return NULL;
}

/* The hint of k to rewrite: the one with the most loads. */
static const struct capture_regcache_hint *best_hint(const struct capture_register_cache *rc)
{
	const struct capture_regcache_hint *best = NULL;
	size_t i;

	for (i = 0; rc && i < rc->nr_hints; i++)
		if (!best || rc->hints[i].nr_loads > best->nr_loads)
			best = &rc->hints[i];
	return best;
}

static void build_kernel(struct regcache_patch_kernel *pk, const struct report_input *in,
			 const struct report_kernel *k, const struct capture_regcache_hint *hint,
			 long *source_index)
{
	struct regcache_target t = { 0 };
	size_t *lines = NULL, nr = 0, i;
	long src = -1;
	char *name = source_kernel_base_name(k->name, k->demangled);
	const char *why = NULL;

	t.kernel = name ? name : k->name;
	t.param = (int)hint->param;
	t.k = (unsigned)hint->k;
	t.k_exact = hint->k_exact == 1;
	for (i = 0; i < hint->nr_loads; i++) {
		const struct report_load *l = load_by_ordinal(k, (unsigned)hint->loads[i]);

		if (!l || l->line <= 0 || l->hint.source_index < 0) {
			why = "a load of the stencil has no source line (build with -lineinfo)";
			break;
		}
		if (src >= 0 && l->hint.source_index != src) {
			why = "the stencil's loads come from more than one source file";
			break;
		}
		src = l->hint.source_index;
		lines = xrealloc(lines, (nr + 1) * sizeof(*lines));
		lines[nr++] = (size_t)l->line;
	}
	if (!why && src < 0)
		why = "the stencil's loads are not known";
	if (!why && (!in->sources[src].file || !in->sources[src].under_root))
		why = in->sources[src].file ? "its source file is outside the source root"
					    : "its source file cannot be read (pass --source-root)";
	pk->kernel = k->name;
	pk->path = src >= 0 ? in->sources[src].path : NULL;
	*source_index = why ? -1 : src;
	if (why) {
		regcache_rewrite_paste(&pk->rw, &t, why);
	} else {
		t.lines = lines;
		t.nr_lines = nr;
		regcache_rewrite_find(&pk->rw, in->sources[src].file, &t);
	}
	free(lines);
	free(name);
}

void regcache_patch_build(struct regcache_patch *p, const struct report_input *in)
{
	long *src;
	size_t i, j;

	memset(p, 0, sizeof(*p));
	strbuf_init(&p->diff, 0);
	src = xcalloc(in->nr_kernels + 1, sizeof(*src));
	for (i = 0; i < in->nr_kernels; i++) {
		const struct capture_regcache_hint *hint =
			best_hint(in->kernels[i].model->register_cache);

		if (!hint)
			continue;
		p->kernels = xrealloc(p->kernels, (p->nr_kernels + 1) * sizeof(*p->kernels));
		build_kernel(&p->kernels[p->nr_kernels], in, &in->kernels[i], hint,
			     &src[p->nr_kernels]);
		p->nr_kernels++;
	}
	for (i = 0; i < in->nr_sources; i++) {
		const struct regcache_rewrite **rws = NULL;
		size_t n = 0;

		for (j = 0; j < p->nr_kernels; j++) {
			if (src[j] != (long)i)
				continue;
			rws = xrealloc(rws, (n + 1) * sizeof(*rws));
			rws[n++] = &p->kernels[j].rw;
		}
		if (n)
			regcache_patch_file(&p->diff, in->sources[i].path, in->sources[i].file, rws,
					    n);
		free(rws);
	}
	free(src);
}

void regcache_patch_release(struct regcache_patch *p)
{
	size_t i;

	for (i = 0; i < p->nr_kernels; i++)
		regcache_rewrite_release(&p->kernels[i].rw);
	free(p->kernels);
	strbuf_release(&p->diff);
	memset(p, 0, sizeof(*p));
}

const struct regcache_patch_kernel *regcache_patch_find(const struct regcache_patch *p,
							const char *kernel)
{
	size_t i;

	for (i = 0; kernel && i < p->nr_kernels; i++)
		if (!strcmp(p->kernels[i].kernel, kernel))
			return &p->kernels[i];
	return NULL;
}

char *regcache_patch_sentence(const struct regcache_patch_kernel *k)
{
	if (k->rw.status == REGCACHE_REWRITE_PATCHED)
		return xasprintf("regcache.patch rewrites the loop at %s:%zu-%zu to read through "
				 "device/regcache.cuh (" NOT_VERIFIED ")", k->path ? k->path : "?",
				 k->rw.first_line, k->rw.last_line);
	return xasprintf("not patched: %s; the code to paste (" NOT_VERIFIED "):",
			 k->rw.reason ? k->rw.reason : "the loop's shape is not one the rewrite knows");
}

json_t *regcache_patch_to_json(const struct regcache_patch *p)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < p->nr_kernels; i++) {
		const struct regcache_patch_kernel *k = &p->kernels[i];
		int patched = k->rw.status == REGCACHE_REWRITE_PATCHED;
		json_t *o = json_pack("{s:s, s:o, s:s, s:o, s:s?, s:s}", "kernel", k->kernel,
				      "file", k->path ? json_string(k->path) : json_null(),
				      "status", patched ? "patched" : "paste",
				      "reason", k->rw.reason ? json_string(k->rw.reason) : json_null(),
				      "text", k->rw.text, "verified", NOT_VERIFIED);

		if (patched) {
			json_object_set_new(o, "lines", json_pack("[I, I]", (json_int_t)k->rw.first_line,
								  (json_int_t)k->rw.last_line));
			json_object_set_new(o, "patch", json_string("regcache.patch"));
		}
		json_array_append_new(a, o);
	}
	return a;
}

/* The reports' part: the rewrite under the kernel's register-cache section. */

void regcache_patch_text(struct strbuf *out, const struct report_input *in, const char *kernel)
{
	struct regcache_patch p;
	const struct regcache_patch_kernel *k;
	const char *s, *nl;
	char *sentence;

	regcache_patch_build(&p, in);
	k = regcache_patch_find(&p, kernel);
	if (k) {
		sentence = regcache_patch_sentence(k);
		strbuf_addf(out, "  rewrite: %s\n", sentence);
		free(sentence);
		for (s = k->rw.text; s && *s; s = nl + 1) {
			nl = strchr(s, '\n');
			strbuf_addstr(out, "    | ");
			strbuf_add(out, s, nl ? (size_t)(nl - s) : strlen(s));
			strbuf_addch(out, '\n');
			if (!nl)
				break;
		}
	}
	regcache_patch_release(&p);
}

void regcache_patch_html(struct strbuf *out, const struct report_input *in, const char *kernel)
{
	struct regcache_patch p;
	const struct regcache_patch_kernel *k;

	regcache_patch_build(&p, in);
	k = regcache_patch_find(&p, kernel);
	if (k) {
		char *sentence = regcache_patch_sentence(k);

		strbuf_addstr(out, "<p class=\"regcache-rewrite\"><strong>Rewrite:</strong> ");
		strbuf_add_html(out, sentence);
		strbuf_addstr(out, "</p><pre class=\"regcache-rewrite\">");
		strbuf_add_html(out, k->rw.text ? k->rw.text : "");
		strbuf_addstr(out, "</pre>");
		free(sentence);
	}
	regcache_patch_release(&p);
}

void regcache_patch_json(json_t *doc, const struct report_input *in)
{
	struct regcache_patch p;

	regcache_patch_build(&p, in);
	if (p.nr_kernels)
		json_object_set_new(doc, "register_cache_rewrites", regcache_patch_to_json(&p));
	regcache_patch_release(&p);
}

/* The register-cache row of the rewrite back-ends: regcache.patch. */
static int regcache_recognises(const char *path)
{
	size_t len = path ? strlen(path) : 0;

	return (len > 3 && !strcmp(path + len - 3, ".cu")) ||
	       (len > 4 && !strcmp(path + len - 4, ".cuh"));
}

static size_t regcache_diff(const struct report_input *in, struct strbuf *out)
{
	struct regcache_patch rp;
	size_t before = out->len;

	regcache_patch_build(&rp, in);
	strbuf_add(out, rp.diff.buf, rp.diff.len);
	regcache_patch_release(&rp);
	return out->len - before;
}

const struct rewrite_backend rewrite_backend_regcache = {
	.name = "regcache",
	.language = "CUDA C++ stencil loops (register cache)",
	.recognises = regcache_recognises,
	.find = NULL,
	.decide = NULL,
	.rewrite = NULL,
	.patch = regcache_diff,
};
