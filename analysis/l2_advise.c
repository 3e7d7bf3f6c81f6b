#define _GNU_SOURCE
#include "analysis/l2_advise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

/* A buffer this many times smaller than L2 stays there within a launch. */
#define L2_SMALL_FRACTION 8
/* A window on such a buffer that can save less than this share of the bytes
 * the kernels read is not advised. */
#define L2_MIN_SAVED_FRACTION 0.01

struct candidate {
	json_int_t alloc;
	double bytes;
	double launches;        /* launches that read it */
	double bytes_read;      /* across those launches */
	json_t *kernels;        /* names */
};

static double alloc_bytes(const struct capture *cap, long long seq)
{
	size_t i;

	for (i = 0; i < cap->nr_allocations; i++)
		if (cap->allocations[i].seq == seq)
			return cap->allocations[i].bytes;
	return 0;
}

/* Bytes a kernel read through parameter p in all its launches (monitor),
 * or -1 when the monitor did not count them (or the kernel is not measured). */
static double bytes_through(const struct capture_kernel *kernel, int p)
{
	double sum = 0;
	int seen = 0;
	size_t i;

	for (i = 0; kernel && p >= 0 && i < kernel->nr_loads; i++) {
		const struct capture_load *l = &kernel->loads[i];

		if (l->param != p || isnan(l->bytes))
			continue;
		sum += l->bytes;
		seen = 1;
	}
	return seen ? sum : -1;
}

static struct candidate *find_or_add(struct candidate **cs, size_t *n, size_t *alloc,
				     json_int_t seq, double bytes)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*cs)[i].alloc == seq)
			return &(*cs)[i];
	ALLOC_GROW(*cs, *n + 1, *alloc);
	memset(&(*cs)[*n], 0, sizeof(**cs));
	(*cs)[*n].alloc = seq;
	(*cs)[*n].bytes = bytes;
	(*cs)[*n].kernels = json_array();
	return &(*cs)[(*n)++];
}

static int has_string(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (!strcmp(json_string_value(v), s))
			return 1;
	return 0;
}

/*
 * Adds the allocations a kernel's arguments point into to the candidates:
 * a measured kernel (kernel, with the monitor's per-load bytes) or one the
 * discovery run saw only (kernel NULL: a kernel without PTX is not monitored).
 */
static void add_uses(struct candidate **cs, size_t *n, size_t *alloc, const struct capture *cap,
		     const char *name, const struct capture_alloc_use *uses, size_t nr_uses,
		     const struct capture_kernel *kernel)
{
	size_t j;

	for (j = 0; j < nr_uses; j++) {
		const struct capture_alloc_use *u = &uses[j];
		double bytes = alloc_bytes(cap, u->alloc);
		double launches = u->launches > 0 ? (double)u->launches : 0;
		double through = bytes_through(kernel, u->param);
		struct candidate *c;

		if (bytes <= 0)
			continue;
		c = find_or_add(cs, n, alloc, u->alloc, bytes);
		c->launches += launches;
		/* without monitor counts, assume each launch reads the buffer once */
		c->bytes_read += through >= 0 ? through : bytes * launches;
		if (name && !has_string(c->kernels, name))
			json_array_append_new(c->kernels, json_string(name));
	}
}

/* The names of the kernels in modules without PTX (capture.json "modules"). */
static json_t *kernels_without_ptx(const struct capture *cap)
{
	json_t *out = json_array();
	size_t i, j;

	for (i = 0; i < cap->nr_modules; i++) {
		const struct capture_module *m = &cap->modules[i];

		if (m->has_ptx)
			continue;
		for (j = 0; j < m->nr_kernels; j++)
			if (!has_string(out, m->kernels[j]))
				json_array_append_new(out, json_string(m->kernels[j]));
	}
	return out;
}

/* The kernels of names that are in without (a new array). */
static json_t *intersect(json_t *names, json_t *without)
{
	json_t *out = json_array(), *k;
	size_t i;

	json_array_foreach(names, i, k)
		if (has_string(without, json_string_value(k)))
			json_array_append(out, k);
	return out;
}

/* What score() needs of the device. */
struct l2_limits {
	double l2, set_aside;
};

/*
 * Bytes that could come from L2 instead of DRAM after the first read. A
 * buffer more than twice the set-aside scores 0: a window over a slice of a
 * streaming buffer is the recipe FACTS.md measured at 0.52x-0.71x. A buffer
 * of at most an eighth of L2 that is read many times within a launch
 * already stays in L2 for that launch (its lines are reused long before the
 * rest of the launch's data could evict them), so a window can save at
 * most one reload a launch: its bytes times the launches after the first.
 */
static double score(const struct candidate *c, const struct l2_limits *lim)
{
	double covered = c->bytes > 0 ? fmin(1.0, lim->set_aside / c->bytes) : 0;
	double saved = fmax(0, c->bytes_read - c->bytes);

	if (c->bytes > 2 * lim->set_aside)
		return 0;
	if (c->bytes <= lim->l2 / L2_SMALL_FRACTION)
		saved = fmin(saved, c->bytes * fmax(0, c->launches - 1));
	return saved * covered;
}

static int by_score_desc(const void *a, const void *b, void *ctx)
{
	double sa = score(a, ctx), sb = score(b, ctx);
	return (sa < sb) - (sa > sb);
}

/*
 * The window as code a CUDA programmer pastes around the launches of the
 * kernels it names, using the installed <cacheadvise/l2window.h> and
 * lib/cacheadvise/libcacheadvise_device.a (a new string, caller frees).
 */
static char *snippet(const struct candidate *c, double set_aside, double num_bytes,
		     double ratio)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *k;
	size_t i;

	strbuf_addf(&sb, "#include <cacheadvise/l2window.h>   /* installed with cacheadvise: -I<its "
		    "prefix>/include, link -L<its prefix>/lib/cacheadvise -lcacheadvise_device */\n\n");
	strbuf_addf(&sb, "/* once, after allocating buffer (allocation #%lld, %.1f MB) */\n",
		    (long long)c->alloc, (double)(json_int_t)num_bytes / 1e6);
	strbuf_addf(&sb, "l2window_set_aside(%lluull, NULL);\n",
		    (unsigned long long)(json_int_t)set_aside);
	strbuf_addstr(&sb, "\n/* around each launch of");
	json_array_foreach(c->kernels, i, k)
		strbuf_addf(&sb, "%s %s", i ? "," : "", json_string_value(k));
	strbuf_addstr(&sb, " */\n");
	strbuf_addf(&sb, "l2window_stream_set(stream, (const char *)buffer + 0, %lluull, %.3ff, NULL);\n",
		    (unsigned long long)(json_int_t)num_bytes, ratio);
	strbuf_addstr(&sb, "kernel<<<grid, block, 0, stream>>>(...);\n");
	strbuf_addstr(&sb, "l2window_stream_reset(stream, NULL, 0);   /* later kernels get the whole L2 */\n");
	strbuf_addstr(&sb, "\n/* when the buffer is no longer reused */\nl2window_reset_all(1);\n");
	return strbuf_detach(&sb, NULL);
}

static json_t *window(const char *variant, double set_aside, const struct candidate *c,
		      double num_bytes, double ratio)
{
	char *code = snippet(c, set_aside, num_bytes, ratio);
	json_t *w = json_pack("{s:s, s:I, s:I, s:i, s:I, s:f, s:s, s:s, s:O}", "variant", variant,
			      "set_aside_bytes", (json_int_t)set_aside, "alloc", c->alloc,
			      "offset", 0, "num_bytes", (json_int_t)num_bytes, "hit_ratio", ratio,
			      "hit_prop", "persisting", "miss_prop", "streaming", "kernels",
			      c->kernels);

	json_object_set_new(w, "snippet", json_string(code));
	free(code);
	return w;
}

json_t *l2_advise(const struct capture *cap)
{
	const struct device_model *device = &cap->device;
	json_t *out, *cands, *wins, *no_ptx = NULL;
	double l2, persist_max, window_max, set_aside, footprint = 0, traffic = 0;
	struct l2_limits lim;
	struct candidate *cs = NULL;
	size_t n = 0, alloc = 0, i;

	if (!cap->has_device) {
		error_set(CA_E_INPUT, "the capture has no \"device\" section: the L2 limits are unknown");
		return NULL;
	}
	l2 = (double)device->l2_bytes;
	persist_max = (double)device->persisting_l2_max_bytes;
	window_max = (double)device->access_policy_max_window_bytes;
	set_aside = fmin(floor(l2 * 3 / 4), persist_max);
	out = json_pack("{s:s, s:s, s:I, s:I, s:I}", "status", "none", "reason", "",
			"l2_bytes", (json_int_t)l2, "set_aside_bytes", (json_int_t)set_aside,
			"window_max_bytes", (json_int_t)window_max);
	if (cap->device_partitioned) {
		json_object_set_new(out, "reason", json_sprintf("no window is advised: %s",
								cap->device_partitioned));
		return out;
	}
	if (l2 <= 0 || persist_max <= 0 || window_max <= 0) {
		json_object_set_new(out, "reason", json_string(
			"no window is advised: this GPU reports no persisting L2 (compute capability 8.0 or later is needed)"));
		return out;
	}

	for (i = 0; i < cap->nr_kernels; i++) {
		const struct capture_kernel *k = &cap->kernels[i];

		add_uses(&cs, &n, &alloc, cap, k->name, k->allocs_used, k->nr_allocs_used, k);
	}
	/* the kernels the discovery run saw but did not measure: without PTX, or beyond --top */
	for (i = 0; i < cap->nr_all_kernels; i++) {
		const struct capture_kernel_seen *k = &cap->all_kernels[i];

		if (!capture_find_kernel(cap, NULL, k->name))
			add_uses(&cs, &n, &alloc, cap, k->name, k->allocs_used, k->nr_allocs_used,
				 NULL);
	}
	no_ptx = kernels_without_ptx(cap);
	for (i = 0; i < n; i++) {
		footprint += cs[i].bytes;
		traffic += cs[i].bytes_read;
	}
	json_object_set_new(out, "footprint_bytes", json_integer((json_int_t)footprint));
	lim.l2 = l2;
	lim.set_aside = set_aside;
	if (n)   /* no allocation re-read: cs is NULL */
		qsort_r(cs, n, sizeof(*cs), by_score_desc, &lim);
	cands = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(cands, json_pack("{s:I, s:I, s:f, s:I, s:f, s:O, s:o, s:f}",
			"alloc", cs[i].alloc, "bytes", (json_int_t)cs[i].bytes, "launches", cs[i].launches,
			"bytes_read", (json_int_t)cs[i].bytes_read,
			"reuse", cs[i].bytes > 0 ? cs[i].bytes_read / cs[i].bytes : 0,
			"kernels", cs[i].kernels, "kernels_without_ptx", intersect(cs[i].kernels, no_ptx),
			"score", score(&cs[i], &lim)));
	json_object_set_new(out, "candidates", cands);
	wins = json_array();
	if (!n) {
		json_object_set_new(out, "reason", json_string(
			"no window is advised: no kernel argument points into a device allocation"));
	} else if (footprint <= l2) {
		json_object_set_new(out, "reason", json_sprintf(
			"no window is advised: the kernels touch %.1f MB, which fits in the "
			"%.1f MB L2 without one", footprint / 1e6, l2 / 1e6));
	} else if (cs[0].bytes_read < 2 * cs[0].bytes || score(&cs[0], &lim) <= 0) {
		json_object_set_new(out, "reason", json_string(
			"no window is advised: no buffer of at most twice the set-aside is read more "
			"than once across launches"));
	} else if (cs[0].bytes <= l2 / L2_SMALL_FRACTION &&
		   score(&cs[0], &lim) < L2_MIN_SAVED_FRACTION * traffic) {
		json_object_set_new(out, "reason", json_sprintf(
			"no window is advised: the most a window could save, %.3g MB of DRAM reads "
			"(allocation #%lld, %.3g MB, small enough to stay in L2 within a launch), is "
			"under %.0f%% of the %.3g GB the kernels read", score(&cs[0], &lim) / 1e6,
			(long long)cs[0].alloc, cs[0].bytes / 1e6, 100 * L2_MIN_SAVED_FRACTION,
			traffic / 1e9));
	} else {
		const struct candidate *c = &cs[0];
		double nb = fmin(c->bytes, window_max);
		double ratio = fmin(1.0, set_aside / nb);
		json_t *w;

		json_array_append_new(wins, window("guide", set_aside, c, nb, ratio));
		json_array_append_new(wins, window("half_ratio", set_aside, c, nb, ratio / 2));
		if (nb > set_aside)
			json_array_append_new(wins, window("fit_set_aside", set_aside, c, set_aside, 1.0));
		json_array_foreach(wins, i, w)
			json_object_set_new(w, "kernels_without_ptx", intersect(c->kernels, no_ptx));
		json_object_set_new(out, "status", json_string("advised"));
		json_object_set_new(out, "reason", json_sprintf(
			"allocation #%lld (%.1f MB) is read %.1f times over across %.0f launches while "
			"the kernels touch %.1f MB in all, more than the %.1f MB L2: a persisting window "
			"may keep it there (to be measured)", (long long)c->alloc, c->bytes / 1e6,
			c->bytes_read / c->bytes, c->launches, footprint / 1e6, l2 / 1e6));
	}
	json_object_set_new(out, "windows", wins);
	for (i = 0; i < n; i++)
		json_decref(cs[i].kernels);
	free(cs);
	json_decref(no_ptx);
	return out;
}

json_t *l2_advise_window_file(const struct capture_l2_window *w)
{
	/* the window as written, less what only the capture and reports use */
	json_t *win = json_deep_copy(capture_section_json(w->source));

	json_object_del(win, "variant");
	json_object_del(win, "set_aside_bytes");
	json_object_del(win, "snippet");
	json_object_del(win, "kernels_without_ptx");
	json_object_del(win, "verification");
	return json_pack("{s:I, s:[o]}", "set_aside_bytes", (json_int_t)w->set_aside_bytes,
			 "windows", win);
}
