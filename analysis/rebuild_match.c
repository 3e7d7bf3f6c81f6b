#include "analysis/rebuild_match.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/load_sites.h"
#include "base/path.h"
#include "base/xalloc.h"

const char *rebuild_status_name(enum rebuild_status s)
{
	switch (s) {
	case REBUILD_FOUND: return "found";
	case REBUILD_WRONG_FORM: return "wrong form";
	case REBUILD_MISSING: return "missing";
	case REBUILD_NO_LINEINFO: return "no line info";
	}
	return "missing";
}

/* Whether path (as line info records it: "k/./a.cu" is "k/a.cu") names the
 * diff's file p[0, n): equal, or ends with "/" p. */
static int same_file(const char *path, const char *p, size_t n)
{
	char *norm = path_normalize(path);
	size_t l = strlen(norm);
	int same = l == n ? !memcmp(norm, p, n) :
		   l > n && norm[l - n - 1] == '/' && !memcmp(norm + l - n, p, n);

	free(norm);
	return same;
}

/*
 * The '+' line replacing line j of the run of '-' lines p is in, NULL when
 * nothing replaces the run, and in *offset its distance from the run's first
 * '+' line: the '+' lines replace the '-' lines one for one (j-th for j-th),
 * the last '+' line standing for any '-' lines beyond them.
 */
static const char *replacing_text(const char *p, size_t j, size_t *offset)
{
	*offset = 0;
	while (p && *p == '-') {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!p || *p != '+')
		return NULL;
	for (; *offset < j; ++*offset) {
		const char *e = strchr(p, '\n');

		if (!e || e[1] != '+')
			break;
		p = e + 1;
	}
	return p;
}

/*
 * rebuild_diff_new_line, and in *replaced whether a '-' line of the diff is
 * old_line; then *minus is that '-' line and *plus the '+' line replacing it
 * (NULL when none), both at their sign.
 */
static size_t diff_map_text(const char *diff, const char *file, size_t old_line, int *replaced,
			    const char **minus, const char **plus)
{
	const char *p = diff;
	long delta = 0;
	int in_file = 0;
	size_t minus_run = 0;   /* '-' lines of the hunk's current run before this one */

	*replaced = 0;
	*minus = *plus = NULL;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len > 6 && !strncmp(p, "+++ b/", 6)) {
			in_file = same_file(file, p + 6, len - 6);
		} else if (in_file && len > 4 && !strncmp(p, "@@ -", 4)) {
			char *q;
			unsigned long a = strtoul(p + 4, &q, 10), c, nold = 1, nnew = 1;
			size_t old = a, new;

			if (*q == ',')
				nold = strtoul(q + 1, &q, 10);
			if (strncmp(q, " +", 2))
				return old_line;
			c = strtoul(q + 2, &q, 10);
			if (*q == ',')
				nnew = strtoul(q + 1, &q, 10);
			if (old_line < a)
				return (size_t)((long)old_line + delta);
			new = c;
			if (!a)         /* "-0,0": an insertion at the top */
				old = 1;
			/* Walk the hunk's lines. */
			p = e ? e + 1 : NULL;
			while (p && *p && (nold || nnew)) {
				e = strchr(p, '\n');
				if (*p != '-')
					minus_run = 0;
				if (*p == ' ') {
					if (old == old_line)
						return new;
					old++;
					new++;
					nold -= !!nold;
					nnew -= !!nnew;
				} else if (*p == '-') {
					if (old == old_line) {
						*replaced = 1;
						size_t offset;

						*minus = p;
						*plus = replacing_text(p, minus_run, &offset);
						return new + offset;
					}
					old++;
					nold -= !!nold;
					minus_run++;
				} else if (*p == '+') {
					new++;
					nnew -= !!nnew;
				} else if (*p != '\\') {
					break;
				}
				p = e ? e + 1 : NULL;
			}
			delta = (long)new - (long)old;
			continue;
		}
		p = e ? e + 1 : NULL;
	}
	return (size_t)((long)old_line + delta);
}

static size_t diff_map(const char *diff, const char *file, size_t old_line, int *replaced)
{
	const char *minus, *plus;

	return diff_map_text(diff, file, old_line, replaced, &minus, &plus);
}

size_t rebuild_diff_new_line(const char *diff, const char *file, size_t old_line)
{
	int replaced;

	return diff_map(diff, file, old_line, &replaced);
}

/* The longest line whose columns are aligned (longer ones keep theirs). */
#define ALIGN_MAX 1024

int rebuild_diff_new_column(const char *diff, const char *file, size_t old_line, int column)
{
	const char *minus, *plus, *e;
	size_t n, m, i, j;
	unsigned short *lcs;
	int replaced, out = column;

	diff_map_text(diff, file, old_line, &replaced, &minus, &plus);
	if (!replaced || !plus || column < 0)
		return column;
	minus++;
	plus++;
	e = strchr(minus, '\n');
	n = e ? (size_t)(e - minus) : strlen(minus);
	e = strchr(plus, '\n');
	m = e ? (size_t)(e - plus) : strlen(plus);
	if ((size_t)column >= n || n > ALIGN_MAX || m > ALIGN_MAX)
		return column;
	/* lcs[i][j]: the longest common subsequence of minus[i..] and plus[j..] */
	lcs = xcalloc((n + 1) * (m + 1), sizeof(*lcs));
#define LCS(a, b) lcs[(a) * (m + 1) + (b)]
	for (i = n; i-- > 0;)
		for (j = m; j-- > 0;)
			LCS(i, j) = minus[i] == plus[j] ? (unsigned short)(LCS(i + 1, j + 1) + 1) :
				    LCS(i + 1, j) > LCS(i, j + 1) ? LCS(i + 1, j) : LCS(i, j + 1);
	/* Walk one alignment; the column's character lands where it is matched. */
	for (i = 0, j = 0; i < n && j < m;) {
		if (minus[i] == plus[j] && LCS(i, j) == LCS(i + 1, j + 1) + 1) {
			if (i == (size_t)column) {
				out = (int)j;
				break;
			}
			i++;
			j++;
		} else if (LCS(i + 1, j) >= LCS(i, j + 1)) {
			if (i == (size_t)column)
				break;      /* the character itself was removed: keep the column */
			i++;
		} else {
			j++;
		}
	}
#undef LCS
	free(lcs);
	return out;
}

int rebuild_diff_replaces_line(const char *diff, const char *file, size_t old_line)
{
	int replaced;

	diff_map(diff, file, old_line, &replaced);
	return replaced;
}

int rebuild_load_has_form(const struct ptx_load *ld, enum load_action action)
{
	enum ptx_l1_eviction ev = ld->l1_eviction == PTX_L1_EVICT_NORMAL ? PTX_L1_NONE :
				  ld->l1_eviction;

	switch (action) {
	case LOAD_ACTION_DEFAULT:
		return ld->cache_op == PTX_CACHE_OP_NONE && ev == PTX_L1_NONE;
	case LOAD_ACTION_CACHE:
		return ld->cache_op == PTX_CACHE_OP_CA;
	case LOAD_ACTION_BYPASS:
		return ld->cache_op == PTX_CACHE_OP_CG;
	case LOAD_ACTION_STREAM:
		return ld->cache_op == PTX_CACHE_OP_CS;
	case LOAD_ACTION_LAST_USE:
		return ld->cache_op == PTX_CACHE_OP_LU;
	case LOAD_ACTION_NO_ALLOCATE:
		return ld->cache_op == PTX_CACHE_OP_NONE && ev == PTX_L1_NO_ALLOCATE;
	case LOAD_ACTION_EVICT_FIRST:
		return ld->cache_op == PTX_CACHE_OP_NONE && ev == PTX_L1_EVICT_FIRST;
	case LOAD_ACTION_EVICT_LAST:
		return ld->cache_op == PTX_CACHE_OP_NONE && ev == PTX_L1_EVICT_LAST;
	case LOAD_ACTION_AS_BUILT:
		return 1;   /* the L1 side is whatever it was */
	case LOAD_ACTION__COUNT:
		break;
	}
	return 0;
}

const char *rebuild_anchor(const struct ptx_load *ld, int *line)
{
	if (ld->call_file && ld->call_line) {
		*line = ld->call_line;
		return ld->call_file;
	}
	*line = ld->line;
	return ld->file;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

void rebuild_match_load(const struct ptx_function *orig, unsigned ordinal,
			const struct ptx_module *rebuilt_module,
			const struct ptx_function *rebuilt, const char *diff,
			enum load_action action, enum l2_priority l2, struct rebuild_check *out)
{
	const struct ptx_load *ld;
	const char *file;
	int line, other, column;
	size_t i, order = 0, seen = 0, all_have = 0;
	const struct ptx_load *last = NULL;

	memset(out, 0, sizeof(*out));
	out->status = REBUILD_MISSING;
	if (ordinal >= orig->nr_loads)
		return;
	ld = &orig->loads[ordinal];
	file = rebuild_anchor(ld, &line);
	if (!file || !line) {
		out->status = REBUILD_NO_LINEINFO;
		return;
	}
	/* A Python load's column tells apart the tl.load calls of its line
	 * (a rewrite may make the compiler split, merge or reorder them). */
	column = load_sites_is_python(file) && !ld->call_file ? ld->column : 0;
	for (i = 0; i < ordinal; i++) {
		const char *f2 = rebuild_anchor(&orig->loads[i], &other);
		if (f2 && other == line && !strcmp(f2, file) &&
		    (!column || orig->loads[i].column == column))
			order++;
	}
	out->order = order;
	out->line = diff ? (int)rebuild_diff_new_line(diff, file, (size_t)line) : line;
	out->column = column && diff ? rebuild_diff_new_column(diff, file, (size_t)line, column) :
		      column;
	for (i = 0; i < rebuilt->nr_loads; i++) {
		const struct ptx_load *r = &rebuilt->loads[i];
		const char *f2 = rebuild_anchor(r, &other);
		int has = 0;

		if (!f2 || other != out->line || strcmp(base_name(f2), base_name(file)))
			continue;
		if (column && r->column != out->column)
			continue;
		has = rebuild_load_has_form(r, action) &&
		      (l2 == L2_PRIORITY_NONE ||
		       ptx_load_l2_priority(rebuilt_module, rebuilt, r) == l2);
		all_have += has;
		last = r;
		if (seen++ != order)
			continue;
		out->found = r;
		out->status = has ? REBUILD_FOUND : REBUILD_WRONG_FORM;
		return;
	}
	/*
	 * Fewer loads there than before: the compiler made one of several (a
	 * loop condition it had read twice, now through a helper it may hoist
	 * or share). The advice holds when every load left there carries it.
	 */
	if (seen && all_have == seen) {
		out->found = last;
		out->status = REBUILD_FOUND;
		out->merged = 1;
		return;
	}
	if (!rebuilt->nr_loads || !rebuilt->loads[0].file)
		out->status = REBUILD_NO_LINEINFO;
}
