/*
 * Source sites that are one decision (analysis/load_sites.c): which loads
 * share a site, and that the merged graph and the merged several-forms
 * problem are exact: on random instances, every choice per site scores on
 * the merged problem what the per-load problem scores with that choice
 * given to every member.
 */
#include <glob.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "analysis/capture_model.h"
#include "analysis/graph.h"
#include "analysis/load_sites.h"
#include "analysis/multi_choice.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

static uint64_t rng_state = 7;

static uint64_t rng_next(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static long rng_int(long lo, long hi)
{
	return lo + (long)(rng_next() % (uint64_t)(hi - lo + 1));
}

static void set_load(struct capture_load *l, unsigned ordinal, const char *file, long line,
		     int column, int param)
{
	l->ordinal = ordinal;
	l->file = file ? xstrdup(file) : NULL;
	l->line = line;
	l->column = column;
	l->param = param;
}

/* Adds a call of l's inlining chain, outwards from the ones it has. */
static void add_call(struct capture_load *l, const char *file, long line, int column)
{
	struct capture_call_site *c;

	l->inlined_at = xrealloc(l->inlined_at, (l->nr_inlined_at + 1) * sizeof(*l->inlined_at));
	c = &l->inlined_at[l->nr_inlined_at++];
	memset(c, 0, sizeof(*c));
	c->file = xstrdup(file);
	c->line = line;
	c->column = column;
}

static void test_group(void)
{
	struct capture_kernel k;
	unsigned ordinals[] = { 0, 1, 2, 3, 4, 5, 6, 7, 9 };
	size_t group[9];

	memset(&k, 0, sizeof(k));
	k.nr_loads = 8;
	k.loads = xcalloc(8, sizeof(*k.loads));
	set_load(&k.loads[0], 0, "k.py", 10, 12, 0);
	set_load(&k.loads[1], 1, "k.py", 10, 12, 1);   /* the same call, another param */
	set_load(&k.loads[2], 2, "k.py", 10, 30, 0);   /* another call on the line */
	set_load(&k.loads[3], 3, "other.py", 10, 12, 0);
	/* a @triton.jit helper's tl.load inlined at two calls: its call
	 * carries one form for both */
	set_load(&k.loads[4], 4, "k.py", 40, 8, 0);
	add_call(&k.loads[4], "k.py", 60, 4);
	set_load(&k.loads[5], 5, "k.py", 40, 8, 0);
	add_call(&k.loads[5], "k.py", 61, 4);
	set_load(&k.loads[6], 6, "k.py", 10, 0, 0);    /* no column: its own */
	set_load(&k.loads[7], 7, "k.py", 10, 12, 0);   /* the first call again */
	/* ordinal 9 is no load of the kernel: its own */
	CHECK_INT(load_sites_group(&k, ordinals, 9, group), 6);
	CHECK_INT(group[0], 0);
	CHECK_INT(group[1], 0);
	CHECK_INT(group[2], 1);
	CHECK_INT(group[3], 2);
	CHECK_INT(group[4], 3);
	CHECK_INT(group[5], 3);
	CHECK_INT(group[6], 4);
	CHECK_INT(group[7], 0);
	CHECK_INT(group[8], 5);
	/* nothing shared: as many sites as loads */
	CHECK_INT(load_sites_group(&k, ordinals + 2, 3, group), 3);
	capture_kernel_release(&k);
}

/*
 * CUDA C++: the copies an unrolled loop makes of one expression (same
 * file, line, column, parameter and inlining chain) are one site; a
 * helper's load inlined at two calls, another array read on the same
 * statement, a load without line info and one whose parameter is unknown
 * are sites of their own.
 */
static void test_group_cuda(void)
{
	static const size_t want[] = { 0, 0, 1, 2, 3, 2, 4, 5, 6, 7, 8, 9, 10, 0 };
	struct capture_kernel k;
	unsigned ordinals[14];
	size_t group[14], i;

	memset(&k, 0, sizeof(k));
	k.nr_loads = 14;
	k.loads = xcalloc(14, sizeof(*k.loads));
	set_load(&k.loads[0], 0, "k.cu", 20, 3, 0);    /* x[i], unrolled */
	set_load(&k.loads[1], 1, "k.cu", 20, 3, 0);    /* its next copy */
	set_load(&k.loads[2], 2, "k.cu", 20, 3, 1);    /* w[i] on the statement */
	set_load(&k.loads[3], 3, "k.h", 5, 2, 0);      /* ld(a, ...) at line 30 */
	add_call(&k.loads[3], "k.cu", 30, 2);
	set_load(&k.loads[4], 4, "k.h", 5, 2, 0);      /* ld(a, ...) at line 31 */
	add_call(&k.loads[4], "k.cu", 31, 2);
	set_load(&k.loads[5], 5, "k.h", 5, 2, 0);      /* line 30's, unrolled */
	add_call(&k.loads[5], "k.cu", 30, 2);
	set_load(&k.loads[6], 6, "k.h", 5, 2, 0);      /* through another helper */
	add_call(&k.loads[6], "k.h", 12, 4);
	add_call(&k.loads[6], "k.cu", 30, 2);
	set_load(&k.loads[7], 7, "k.h", 5, 2, 0);      /* the same at another column */
	add_call(&k.loads[7], "k.cu", 30, 9);
	set_load(&k.loads[8], 8, "k.cu", 0, 0, 0);     /* no line info: each its own */
	set_load(&k.loads[9], 9, "k.cu", 0, 0, 0);
	set_load(&k.loads[10], 10, NULL, 20, 3, 0);
	set_load(&k.loads[11], 11, "k.cu", 20, 3, -1); /* parameter unknown: its own */
	set_load(&k.loads[12], 12, "k.cu", 20, 3, -1);
	set_load(&k.loads[13], 13, "k.cu", 20, 3, 0);  /* x[i] again */
	for (i = 0; i < 14; i++)
		ordinals[i] = (unsigned)i;
	CHECK_INT(load_sites_group(&k, ordinals, 14, group), 11);
	for (i = 0; i < 14; i++)
		CHECK_INT(group[i], want[i]);
	capture_kernel_release(&k);
}

/* Random groups of n items into m sites, each site used. */
static size_t random_groups(size_t n, size_t *group)
{
	size_t m = (size_t)rng_int(1, (long)n), i;

	for (i = 0; i < n; i++)
		group[i] = i < m ? i : (size_t)rng_int(0, (long)m - 1);
	/* shuffle, so a site's members are anywhere */
	for (i = n; i > 1; i--) {
		size_t j = (size_t)rng_int(0, (long)i - 1), t = group[i - 1];

		group[i - 1] = group[j];
		group[j] = t;
	}
	return m;
}

static void test_merge_graph_exact(void)
{
	int round;

	for (round = 0; round < 200; round++) {
		size_t n = (size_t)rng_int(1, 9), group[9], m, u, v, mask;
		struct graph g, merged;
		int exact = 1;

		graph_init(&g);
		graph_init(&merged);
		for (u = 0; u < n; u++) {
			char id[32];

			snprintf(id, sizeof(id), "ld%zu", u);
			graph_add_node(&g, id, (double)rng_int(-500, 500));
		}
		m = random_groups(n, group);
		/* no two members of a site share hits (no negative edge inside
		 * one): the merge is then exact */
		for (u = 0; u < n; u++)
			for (v = u + 1; v < n; v++)
				if (rng_int(0, 2))
					graph_set_edge(&g, u, v, (double)rng_int(group[u] == group[v] ?
										0 : -500, 500));
		load_sites_merge_graph(&g, group, m, &merged);
		CHECK_INT(merged.n, m);
		for (mask = 0; mask < ((size_t)1 << m); mask++) {
			unsigned char per_load[9], per_site[9];

			for (v = 0; v < m; v++)
				per_site[v] = (mask >> v) & 1;
			for (u = 0; u < n; u++)
				per_load[u] = per_site[group[u]];
			if (graph_objective(&merged, per_site) != graph_objective(&g, per_load))
				exact = 0;
		}
		CHECK(exact);
		graph_release(&merged);
		graph_release(&g);
	}
}

/*
 * mpi_gather on the H200 (sector model, in sectors): load 0 streams (no
 * hits of its own) and evicts about 350 M of the gather's hits; loads 1-4
 * are four unrolled copies of the gather that read the same lines, each
 * enabling H = 788 M hits alone and H in any pair. The site of the four
 * is worth H (not 4H - 6H = -2H), its edge to the stream is one copy's
 * (-350 M, not -1.4 G), and the best plan caches the gather and bypasses
 * the stream, as the 2.1x measured on the GPU says.
 */
static void test_merge_graph_redundant(void)
{
	static const double H = 788e6, evict = -350e6;
	static const size_t group[5] = { 0, 1, 1, 1, 1 };
	static const unsigned char best[2] = { 0, 1 };
	unsigned char c[2];
	struct graph g, merged;
	size_t u, v;
	double top = -HUGE_VAL;

	graph_init(&g);
	graph_init(&merged);
	graph_add_node(&g, "ld0", 0);
	for (u = 1; u < 5; u++)
		graph_add_node(&g, "ldN", H);
	for (u = 1; u < 5; u++) {
		graph_set_edge(&g, 0, u, evict);
		for (v = u + 1; v < 5; v++)
			graph_set_edge(&g, u, v, -H);
	}
	load_sites_merge_graph(&g, group, 2, &merged);
	CHECK_INT(merged.n, 2);
	CHECK_NEAR(merged.nodes[1].weight, H, 1);
	CHECK_NEAR(graph_edge(&merged, 0, 1), evict, 1);
	for (u = 0; u < 4; u++) {
		c[0] = u & 1;
		c[1] = u >> 1 & 1;
		if (graph_objective(&merged, c) > top)
			top = graph_objective(&merged, c);
	}
	CHECK_NEAR(graph_objective(&merged, best), H, 1);
	CHECK_NEAR(top, H, 1);
	/* two copies that share nothing stay the sum: 2H, the edge both copies' */
	graph_release(&merged);
	graph_release(&g);
	graph_init(&g);
	graph_init(&merged);
	graph_add_node(&g, "ld0", 0);
	graph_add_node(&g, "ld1", H);
	graph_add_node(&g, "ld2", H);
	graph_set_edge(&g, 0, 1, evict);
	graph_set_edge(&g, 0, 2, evict);
	load_sites_merge_graph(&g, group, 2, &merged);
	CHECK_NEAR(merged.nodes[1].weight, 2 * H, 1);
	CHECK_NEAR(graph_edge(&merged, 0, 1), 2 * evict, 1);
	graph_release(&merged);
	graph_release(&g);
}

static void test_merge_choices_exact(void)
{
	int round;

	for (round = 0; round < 200; round++) {
		size_t n = (size_t)rng_int(1, 6), group[6], m, i, j, c, total = 1;
		unsigned forms[6], k = (unsigned)rng_int(1, 3), s, t;
		struct multi_choice mc, merged;
		int exact = 1;

		for (i = 0; i < n; i++)
			forms[i] = k;
		multi_choice_init(&mc, n, forms);
		for (i = 0; i < n; i++)
			for (s = 0; s < k; s++)
				multi_choice_set_unary(&mc, i, s, (double)rng_int(-100, 100));
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (rng_int(0, 1))
					for (s = 0; s < k; s++)
						for (t = 0; t < k; t++)
							multi_choice_set_pair(&mc, i, s, j, t,
									      (double)rng_int(-100, 100));
		m = random_groups(n, group);
		load_sites_merge_choices(&mc, group, m, &merged);
		CHECK_INT(merged.n, m);
		for (i = 0; i < m; i++)
			total *= k;
		for (c = 0; c < total; c++) {
			unsigned per_site[6], per_load[6];
			size_t x = c;

			for (i = 0; i < m; i++) {
				per_site[i] = (unsigned)(x % k);
				x /= k;
			}
			for (i = 0; i < n; i++)
				per_load[i] = per_site[group[i]];
			if (multi_choice_value(&merged, per_site) != multi_choice_value(&mc, per_load))
				exact = 0;
		}
		CHECK(exact);
		multi_choice_release(&merged);
		multi_choice_release(&mc);
	}
}

static const char *source_dir(void)
{
	return getenv("CA_SOURCE_DIR") ? getenv("CA_SOURCE_DIR") : ".";
}

/* The PTX model of a fixture file; NULL (a failed check) when unreadable. */
static struct ptx_module *parse_fixture(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	struct ptx_module *m = NULL;

	CHECK_INT(strbuf_read_file(&sb, path, 0), 0);
	CHECK_INT(ptx_parse(path, sb.buf, sb.len, &m), 0);
	strbuf_release(&sb);
	return m;
}

/* The sites of every load of f (group[0..n)); returns how many. */
static size_t group_all(const struct ptx_function *f, size_t *group, size_t *n)
{
	unsigned ords[64];

	for (*n = 0; *n < f->nr_loads && *n < 64; (*n)++)
		ords[*n] = f->loads[*n].ordinal;
	return load_sites_group_ptx(f, ords, *n, group);
}

/* The Triton fixture's kernels as the profile sees them (their PTX): the
 * PTX loads of each tl.load share its line and column; two calls on one
 * line (gather's line 36) are two sites, a block pointer's 2-D load over
 * two lines one. */
static void test_group_ptx(void)
{
	static const struct { const char *kernel; size_t loads, sites; } want[] = {
		{ "rownorm_kernel", 24, 3 },
		{ "gather_kernel", 24, 3 },
		{ "blockptr_kernel", 32, 1 },   /* a block pointer's load: one call */
	};
	size_t w;

	for (w = 0; w < ARRAY_SIZE(want); w++) {
		char *pattern = xasprintf("%s/tests/fixtures/triton/cache/*/%s.ptx", source_dir(),
					  want[w].kernel);
		struct ptx_module *m = NULL;
		const struct ptx_function *f;
		size_t group[64], i, n;
		glob_t g;

		CHECK(glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 1);
		free(pattern);
		if (g.gl_pathc == 1)
			m = parse_fixture(g.gl_pathv[0]);
		globfree(&g);
		f = m ? ptx_module_find(m, want[w].kernel) : NULL;
		CHECK(f != NULL);
		if (f) {
			CHECK_INT(group_all(f, group, &n), want[w].sites);
			CHECK_INT(n, want[w].loads);
			/* loads share a site exactly when they share the tl.load's
			 * line and column */
			for (i = 0; i < n; i++) {
				size_t j;

				for (j = 0; j < n; j++) {
					int same = f->loads[i].line == f->loads[j].line &&
						   f->loads[i].column == f->loads[j].column;

					CHECK(same == (group[i] == group[j]));
				}
			}
		}
		ptx_module_free(m);
	}
}

/*
 * CUDA C++ as nvcc compiles it (tests/fixtures/ptx/sites.cu and
 * samples/rownorm.cu): an unrolled loop's copies of one read are one site,
 * the other array read on the same statement (one .loc column) another; a
 * helper's load is a site per call (lines 24, 25, 26) and per parameter
 * (line 26 calls it twice).
 */
static void test_group_ptx_cuda(void)
{
	static const struct { const char *file, *kernel; size_t loads, sites; } want[] = {
		{ "tests/fixtures/ptx/sites.ptx", "_Z8unrolledPKfS0_Pfi", 10, 2 },
		{ "tests/fixtures/ptx/sites.ptx", "_Z6helperPKfS0_Pf", 4, 4 },
		{ "tests/fixtures/ptx/rownorm.ptx", "_Z7rownormPKfS0_Pfif", 15, 3 },
	};
	size_t w;

	for (w = 0; w < ARRAY_SIZE(want); w++) {
		char *path = xasprintf("%s/%s", source_dir(), want[w].file);
		struct ptx_module *m = parse_fixture(path);
		const struct ptx_function *f = m ? ptx_module_find(m, want[w].kernel) : NULL;
		size_t group[64], i, j, n;

		free(path);
		CHECK(f != NULL);
		if (!f) {
			ptx_module_free(m);
			continue;
		}
		CHECK_INT(group_all(f, group, &n), want[w].sites);
		CHECK_INT(n, want[w].loads);
		/* in a kernel's own body: one site per line and parameter */
		for (i = 0; i < n; i++)
			for (j = 0; j < n && !f->loads[i].inline_depth; j++)
				CHECK((f->loads[i].line == f->loads[j].line &&
				       f->loads[i].param == f->loads[j].param) == (group[i] == group[j]));
		ptx_module_free(m);
	}
}

int main(void)
{
	test_group();
	test_group_cuda();
	test_group_ptx();
	test_group_ptx_cuda();
	test_merge_graph_exact();
	test_merge_graph_redundant();
	test_merge_choices_exact();
	return check_done();
}
