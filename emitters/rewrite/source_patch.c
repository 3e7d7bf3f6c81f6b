#include "emitters/rewrite/source_patch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/digest.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/helper_form.h"
#include "emitters/rewrite/source_file.h"
#include "emitters/rewrite/source_rewrite.h"
#include "emitters/rewrite/sources_file.h"

#define CONTEXT 3

/* One change: old lines [a, b) (0-based) become lines[0, nr). */
struct block {
	size_t a, b;
	char **lines;               /* each without its line terminator */
	size_t nr;
};

/* Line n (0-based) as in the file, without '\n' (a '\r' stays). */
static const char *raw_line(const struct source_file *sf, size_t n, size_t *len, int *has_nl)
{
	size_t b = sf->line_off[n], e = sf->line_off[n + 1];

	*has_nl = e > b && sf->text[e - 1] == '\n';
	if (*has_nl)
		e--;
	*len = e - b;
	return sf->text + b;
}

static int block_cmp(const void *x, const void *y)
{
	const struct block *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	/* An insertion before a replacement of the same line. */
	return (int)(p->b - p->a) - (int)(q->b - q->a);
}

static void emit_old(struct strbuf *out, const struct source_file *sf, size_t n, char mark)
{
	size_t len;
	int nl;
	const char *s = raw_line(sf, n, &len, &nl);

	strbuf_addch(out, mark);
	strbuf_add(out, s, len);
	strbuf_addch(out, '\n');
	if (!nl)
		strbuf_addstr(out, "\\ No newline at end of file\n");
}

static void emit_hunk(struct strbuf *out, const struct source_file *sf, const struct block *bl,
		      size_t first, size_t last, long *delta)
{
	size_t start = bl[first].a > CONTEXT ? bl[first].a - CONTEXT : 0;
	size_t end = bl[last].b + CONTEXT < sf->nr_lines ? bl[last].b + CONTEXT : sf->nr_lines;
	size_t old_count = end - start, new_count = old_count, i, n, pos = start;
	int last_nl = 1;

	for (i = first; i <= last; i++)
		new_count = new_count - (bl[i].b - bl[i].a) + bl[i].nr;
	if (sf->nr_lines) {
		size_t len;
		raw_line(sf, sf->nr_lines - 1, &len, &last_nl);
	}
	strbuf_addf(out, "@@ -%zu,%zu +%zu,%zu @@\n", old_count ? start + 1 : start, old_count,
		    new_count ? (size_t)((long)start + *delta) + 1 : (size_t)((long)start + *delta),
		    new_count);
	for (i = first; i <= last; i++) {
		for (; pos < bl[i].a; pos++)
			emit_old(out, sf, pos, ' ');
		for (n = bl[i].a; n < bl[i].b; n++)
			emit_old(out, sf, n, '-');
		for (n = 0; n < bl[i].nr; n++) {
			strbuf_addch(out, '+');
			strbuf_addstr(out, bl[i].lines[n]);
			strbuf_addch(out, '\n');
			/* The file's last line keeps its missing newline. */
			if (bl[i].b == sf->nr_lines && n + 1 == bl[i].nr && !last_nl &&
			    bl[i].b > bl[i].a)
				strbuf_addstr(out, "\\ No newline at end of file\n");
		}
		pos = bl[i].b;
	}
	for (; pos < end; pos++)
		emit_old(out, sf, pos, ' ');
	*delta += (long)new_count - (long)old_count;
}

static void add_block(struct block **v, size_t *nr, size_t a, size_t b, char **lines, size_t n)
{
	*v = xrealloc(*v, (*nr + 1) * sizeof(**v));
	(*v)[(*nr)++] = (struct block){ a, b, lines, n };
}

/* Splits text into lines (each without '\n', with eol appended). */
static char **split_lines(const char *text, const char *eol, size_t *nr)
{
	char **v = NULL;
	const char *p = text;

	*nr = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p), keep = len;

		if (keep && p[keep - 1] == '\r' && *eol)
			keep--;     /* eol puts it back where the file has it (a
				     * file of CR line ends keeps its own) */
		v = xrealloc(v, (*nr + 1) * sizeof(*v));
		v[(*nr)++] = xasprintf("%.*s%s", (int)keep, p, eol);
		p += len + (nl ? 1 : 0);
	}
	return v;
}

/* After which line (count of lines before) the helpers go: after the last
 * #include above the first rewritten line, else at the top. */
static size_t helper_position(const struct source_file *sf, size_t first_line)
{
	size_t n, at = 0;

	for (n = 1; n < first_line && n <= sf->nr_lines; n++) {
		size_t len;
		const char *s = source_file_line(sf, n, &len);

		while (len && (*s == ' ' || *s == '\t')) {
			s++;
			len--;
		}
		if (len >= 8 && *s == '#' && !sf->in_comment[n - 1]) {
			const char *d = s + 1;
			while (d < s + len && (*d == ' ' || *d == '\t'))
				d++;
			if (!strncmp(d, "include", 7))
				at = n;
		}
	}
	return at;
}

/*
 * The lines of file src_index that hint h changes beside its own
 * (source_hint.edits), each once: two hints changing one line write the
 * same text (helper_form.c). Returns how many it added.
 */
static size_t add_edits(struct block **bl, size_t *nr_bl, const struct source_hint *h,
			size_t src_index, const char *eol, size_t *first_line)
{
	size_t i, q, nr, added = 0;
	char **lines;

	for (i = 0; i < h->nr_edits; i++) {
		const struct source_edit *e = &h->edits[i];
		int dup = 0;

		if (e->source_index != (long)src_index)
			continue;
		for (q = 0; q < *nr_bl; q++)
			dup |= (*bl)[q].a == e->line - 1 && (*bl)[q].b == e->line;
		if (dup)
			continue;
		lines = split_lines(e->text, eol, &nr);
		add_block(bl, nr_bl, e->line - 1, e->line, lines, nr);
		if (!*first_line || e->line < *first_line)
			*first_line = e->line;
		added++;
	}
	return added;
}

/* The file with the blocks applied, as `git apply` would leave it. */
static void patched_text(const struct source_file *sf, const struct block *bl, size_t nr_bl,
			 struct strbuf *out)
{
	size_t i, n, pos = 0, len;
	int nl;

	for (i = 0; i <= nr_bl; i++) {
		size_t upto = i < nr_bl ? bl[i].a : sf->nr_lines;

		for (; pos < upto; pos++) {
			const char *s = raw_line(sf, pos, &len, &nl);
			strbuf_add(out, s, len);
			if (nl)
				strbuf_addch(out, '\n');
		}
		if (i == nr_bl)
			break;
		raw_line(sf, sf->nr_lines ? sf->nr_lines - 1 : 0, &len, &nl);
		for (n = 0; n < bl[i].nr; n++) {
			strbuf_addstr(out, bl[i].lines[n]);
			/* The file's last line keeps its missing newline. */
			if (!(bl[i].b == sf->nr_lines && bl[i].b > bl[i].a && n + 1 == bl[i].nr &&
			      !nl))
				strbuf_addch(out, '\n');
		}
		pos = bl[i].b;
	}
}

/*
 * Builds the rewrites of one source file; appends its diff to diff and the
 * patched file to text (either may be NULL). Returns the lines rewritten.
 */
static size_t patch_file(const struct report_input *in, size_t src_index, struct strbuf *diff,
			 struct strbuf *text)
{
	const struct report_source *src = &in->sources[src_index];
	const struct source_file *sf = src->file;
	struct block *bl = NULL;
	struct source_helper_need *needs = NULL;
	size_t nr_bl = 0, nr_needs = 0, i, j, first_line = 0, rewritten = 0, nr_ins = 0;
	struct { size_t after; const char *text; } *ins = NULL;
	const char *eol = "";
	struct strbuf hb = STRBUF_INIT;
	long delta = 0;
	int forms = 0;

	if (sf->nr_lines && sf->line_off[1] >= 2 && sf->text[sf->line_off[1] - 2] == '\r')
		eol = "\r";
	for (i = 0; i < in->nr_kernels; i++) {
		for (j = 0; j < in->kernels[i].nr_loads; j++) {
			const struct report_load *l = &in->kernels[i].loads[j];
			size_t q, line = source_hint_patch_line(&l->hint, l->line), len;
			int dup = 0, nl;

			if (l->hint.status == SOURCE_HINT_REWRITTEN &&
			    add_edits(&bl, &nr_bl, &l->hint, src_index, eol, &first_line))
				rewritten++;
			if (l->hint.status != SOURCE_HINT_REWRITTEN ||
			    l->hint.source_index != (long)src_index)
				continue;
			forms |= l->hint.form_macros;
			needs = xrealloc(needs, (nr_needs + 1) * sizeof(*needs));
			needs[nr_needs].helper = l->hint.helper;
			needs[nr_needs].elem_type = l->hint.elem_type;
			if (source_ld_type_parse(l->instruction, &needs[nr_needs].type))
				needs[nr_needs].type = (struct source_ld_type){ 1, 32, 'i' };
			nr_needs++;
			if (l->hint.insert_text) {
				/* A call site's copy of an inlined helper, once. */
				for (q = 0; q < nr_ins; q++)
					if (ins[q].after == l->hint.insert_after &&
					    !strcmp(ins[q].text, l->hint.insert_text))
						dup = 1;
				if (!dup) {
					size_t nl_lines;
					char *t = xasprintf("\n%s", l->hint.insert_text);
					char **lines;

					t[strlen(t) - 1] = '\0';   /* split_lines adds no empty last line */
					lines = split_lines(t, eol, &nl_lines);
					free(t);
					add_block(&bl, &nr_bl, l->hint.insert_after, l->hint.insert_after,
						  lines, nl_lines);
					ins = xrealloc(ins, (nr_ins + 1) * sizeof(*ins));
					ins[nr_ins].after = l->hint.insert_after;
					ins[nr_ins++].text = l->hint.insert_text;
				}
				if (!first_line || l->hint.insert_after < first_line)
					first_line = l->hint.insert_after;
				dup = 0;
			}
			if (l->hint.rewrite_last >= line) {
				/* several lines (a Python call): once per range */
				size_t nl_lines;
				char **lines;

				for (q = 0; q < nr_bl; q++)
					if (bl[q].a == line - 1 && bl[q].b == l->hint.rewrite_last)
						dup = 1;
				if (dup)
					continue;
				lines = split_lines(l->hint.rewritten, eol, &nl_lines);
				add_block(&bl, &nr_bl, line - 1, l->hint.rewrite_last, lines, nl_lines);
				if (!first_line || line < first_line)
					first_line = line;
				rewritten++;
				continue;
			}
			for (q = 0; q < nr_bl; q++)
				if (bl[q].a == line - 1 && bl[q].b == line)
					dup = 1;
			if (dup)
				continue;
			{
				char **one = xmalloc(sizeof(*one));
				const char *raw = raw_line(sf, line - 1, &len, &nl);
				int cr = len && raw[len - 1] == '\r';

				one[0] = xasprintf("%s%s", l->hint.rewritten, cr ? "\r" : "");
				add_block(&bl, &nr_bl, line - 1, line, one, 1);
			}
			if (!first_line || line < first_line)
				first_line = line;
			rewritten++;
		}
	}
	free(ins);
	if (!nr_bl) {
		free(needs);
		return 0;
	}
	strbuf_addstr(&hb, "/* cacheadvise: L1 load helpers for the advised loads (inline PTX: CUDA "
			   "has no\n * intrinsic for L1::no_allocate or L1::evict_last). See "
			   "'cacheadvise apply --help'. */\n");
	if ((forms && helper_form_macros_write(&hb, sf->text)) |
	    (source_helpers_write(&hb, needs, nr_needs, sf->text) != 0)) {
		size_t n;
		char **lines = split_lines(hb.buf, eol, &n);
		add_block(&bl, &nr_bl, helper_position(sf, first_line),
			  helper_position(sf, first_line), lines, n);
	}
	strbuf_release(&hb);
	free(needs);
	qsort(bl, nr_bl, sizeof(*bl), block_cmp);
	/* Neighbouring replaced lines become one block: "-a -b +A +B". */
	for (i = 0; i + 1 < nr_bl;) {
		if (bl[i].b == bl[i + 1].a && bl[i].b > bl[i].a && bl[i + 1].b > bl[i + 1].a) {
			bl[i].lines = xrealloc(bl[i].lines, (bl[i].nr + bl[i + 1].nr) *
					       sizeof(*bl[i].lines));
			memcpy(bl[i].lines + bl[i].nr, bl[i + 1].lines,
			       bl[i + 1].nr * sizeof(*bl[i].lines));
			bl[i].nr += bl[i + 1].nr;
			bl[i].b = bl[i + 1].b;
			free(bl[i + 1].lines);
			memmove(bl + i + 1, bl + i + 2, (nr_bl - i - 2) * sizeof(*bl));
			nr_bl--;
		} else {
			i++;
		}
	}

	if (diff) {
		strbuf_addf(diff, "--- a/%s\n+++ b/%s\n", src->path, src->path);
		for (i = 0; i < nr_bl;) {
			size_t last = i;

			while (last + 1 < nr_bl && bl[last + 1].a <= bl[last].b + 2 * CONTEXT)
				last++;
			emit_hunk(diff, sf, bl, i, last, &delta);
			i = last + 1;
		}
	}
	if (text)
		patched_text(sf, bl, nr_bl, text);
	for (i = 0; i < nr_bl; i++) {
		for (j = 0; j < bl[i].nr; j++)
			free(bl[i].lines[j]);
		free(bl[i].lines);
	}
	free(bl);
	return rewritten;
}

size_t source_patch_write(const struct report_input *in, struct strbuf *out)
{
	size_t i, n = 0;

	for (i = 0; i < in->nr_sources; i++)
		if (in->sources[i].file && in->sources[i].under_root)
			n += patch_file(in, i, out, NULL);
	return n;
}

void source_patch_sources(const struct report_input *in, struct sources_file *sf)
{
	size_t i;

	sf->root = in->source_root ? xstrdup(in->source_root) : NULL;
	sf->read_from = in->lookup_root ? xstrdup(in->lookup_root) : NULL;
	for (i = 0; i < in->nr_sources; i++) {
		const struct report_source *s = &in->sources[i];
		struct strbuf text = STRBUF_INIT;
		char sha[65];
		size_t n;

		if (!s->file || !s->under_root)
			continue;
		n = patch_file(in, i, NULL, &text);
		if (n)
			digest_sha256_hex(text.buf, text.len, sha);
		sources_file_add(sf, s->path, s->file->sha256, n ? sha : NULL, (long)n);
		strbuf_release(&text);
	}
	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];
		size_t j;

		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];

			if (l->patch_changes && l->hint.status != SOURCE_HINT_REWRITTEN &&
			    l->hint.message)
				sources_file_add_left_out(sf, k->name, l->ordinal, l->hint.message);
		}
	}
}

int source_patch_check_sources(const struct sources_file *sf, const char *name,
			       const char *root)
{
	size_t i, applied = 0, patched = 0;
	int ret;

	if (!root)
		root = sf->read_from;
	if (!root)
		root = sf->root;
	if (!root)
		return error_set(CA_E_INPUT, "'%s' records no source root: pass --source-root", name);
	for (i = 0; i < sf->nr_files; i++) {
		const struct sources_file_entry *e = &sf->files[i];
		struct source_file *file;
		char *full;

		if (!e->patched)
			continue;
		full = xasprintf("%s/%s", root, e->path);
		file = source_file_load(full);
		if (!file) {
			ret = error_set(CA_E_INPUT, "cannot read '%s', which the source patch changes: "
					"pass --source-root with the directory that holds '%s'",
					full, e->path);
			free(full);
			return ret;
		}
		patched++;
		if (strcmp(file->sha256, e->sha256)) {
			if (e->patched_sha256 && !strcmp(file->sha256, e->patched_sha256)) {
				applied++;
				source_file_free(file);
				free(full);
				continue;
			}
			ret = error_set(CA_E_INPUT, "'%s' changed since the capture (its SHA-256 "
					"differs): the patch's line numbers may no longer fit; rebuild "
					"and run cacheadvise profile again", full);
			source_file_free(file);
			free(full);
			return ret;
		}
		source_file_free(file);
		free(full);
	}
	if (applied && applied == patched)
		return 1;
	if (applied)
		return error_set(CA_E_INPUT, "the source patch is applied to some files under '%s' "
				 "but not to others: restore them and apply it again", root);
	return 0;
}

/* Whether the source plan is other than the advice in a load either changes. */
static int plans_differ(const struct report_input *in)
{
	size_t i, j;

	for (i = 0; i < in->nr_kernels; i++) {
		for (j = 0; j < in->kernels[i].nr_loads; j++) {
			const struct report_load *l = &in->kernels[i].loads[j];

			if ((l->changes || l->patch_changes) &&
			    (!l->action || !l->patch_action || strcmp(l->action, l->patch_action)))
				return 1;
		}
	}
	return 0;
}

/* The loads left out for one reason in one kernel, once: " (loads 0 and 1
 * of deposit_step not rewritten: cannot read ...)". */
static void left_out_groups(struct strbuf *sb, const struct report_input *in,
			    const struct capture_source_patch *sp)
{
	unsigned char *done = xcalloc(sp->nr_left_out + 1, 1);
	size_t i, j, groups = 0;

	for (i = 0; i < sp->nr_left_out; i++) {
		const struct capture_left_out *e = &sp->left_out[i];
		const char *why = e->reason;
		struct strbuf ords = STRBUF_INIT;
		size_t nords = 0, k;
		char *label;

		if (done[i])
			continue;
		if (groups++ == 3) {
			size_t rest = 0;

			for (j = i; j < sp->nr_left_out; j++)
				rest += !done[j];
			strbuf_addf(sb, "; %zu more load%s", rest, rest == 1 ? "" : "s");
			break;
		}
		for (j = i; j < sp->nr_left_out; j++) {
			const struct capture_left_out *f = &sp->left_out[j];

			if (done[j] || !!f->function != !!e->function ||
			    (e->function && strcmp(f->function, e->function)) ||
			    !!f->reason != !!e->reason || (e->reason && strcmp(f->reason, e->reason)))
				continue;
			done[j] = 1;
			strbuf_addf(&ords, "%s%lld", nords ? ", " : "", f->ordinal);
			nords++;
		}
		for (k = 0; k < in->nr_kernels; k++)
			if (e->function && !strcmp(in->kernels[k].name, e->function))
				break;
		label = k < in->nr_kernels ? report_kernel_label(&in->kernels[k]) :
			xstrdup(e->function ? e->function : "?");
		if (why && !strncmp(why, "not rewritten: ", 15))
			why += 15;
		strbuf_addstr(sb, groups > 1 ? "; " : " (");
		strbuf_addf(sb, "load%s %s of %s not rewritten: %s", nords == 1 ? "" : "s",
			    ords.buf, label, why ? why : "?");
		free(label);
		strbuf_release(&ords);
	}
	if (groups)
		strbuf_addch(sb, ')');
	free(done);
}

/* The source patch's own figure, as source_patch_summary says it. */
static void patch_figure(struct strbuf *sb, const struct report_input *in)
{
	const struct capture_source_patch *sp = &in->model.verification.source_patch;
	const char *status = sp->status;
	size_t i;

	if (!strcmp(status, "changes no load"))
		/* nothing of it ran differently: no speedup to state (issue 25) */
		strbuf_addstr(sb, "rewrites no load, so nothing was timed");
	else if (isnan(sp->speedup) && !strcmp(status, "verified"))
		/* its runs ran, but no kernel time came of them */
		strbuf_addstr(sb, "not timed");
	else if (isnan(sp->speedup))
		strbuf_addf(sb, "%s", status);
	else
		strbuf_addf(sb, "%.2fx", sp->speedup);
	for (i = 0; i < sp->nr_dropped; i++) {
		char *label = report_label_of(in, sp->dropped[i]);

		strbuf_addf(sb, "%s%s rejected at that timing, so left out of source.patch",
			    i ? ", " : " (", label);
		free(label);
	}
	if (sp->nr_dropped)
		strbuf_addch(sb, ')');
	left_out_groups(sb, in, sp);
}

/*
 * What the program rebuilt from source.patch gave (verification.rebuilt):
 * first, as what `apply` delivers; where it was not rebuilt, why, so the
 * figures after it read as run --plan's and the in-run timing's.
 */
static void rebuilt_figure(struct strbuf *sb, const struct report_input *in)
{
	const struct capture_rebuilt *rb = &in->model.verification.rebuilt;

	if (!in->model.verification.has_rebuilt || !rb->status)
		return;
	if (!strcmp(rb->status, "timed") && !isnan(rb->speedup)) {
		strbuf_addf(sb, "the program rebuilt from source.patch: %.2fx (%s); ", rb->speedup,
			    rb->how ? rb->how : "in a private copy");
		return;
	}
	if (!strcmp(rb->status, "timed"))
		strbuf_addf(sb, "the program rebuilt from source.patch: no program figure (%s); ",
			    rb->reason ? rb->reason : "its kernels were not timed");
	else
		strbuf_addf(sb, "not rebuilt (%s), so the figures are run --plan's and the "
			    "in-run timing's: ", rb->reason ? rb->reason : rb->status);
}

double report_rebuilt_speedup(const struct report_input *in)
{
	const struct capture_rebuilt *rb = &in->model.verification.rebuilt;

	if (!in->model.has_verification || !in->model.verification.has_rebuilt || !rb->status ||
	    strcmp(rb->status, "timed"))
		return NAN;
	return rb->speedup;
}

char *source_patch_summary(const struct report_input *in, double *patch_speedup)
{
	const struct capture_source_patch *sp = &in->model.verification.source_patch;
	const char *status = sp->status;
	double adv = report_program_speedup(in);
	struct strbuf sb = STRBUF_INIT, advice = STRBUF_INIT;

	if (patch_speedup)
		*patch_speedup = NAN;
	if (!in->model.has_verification || !in->model.verification.has_source_patch || !status)
		return NULL;
	/* the same plan: the advice's figure stands alone; a patch that
	 * rewrites no load has no figure of its own */
	if (patch_speedup && strcmp(status, "same as the advice") &&
	    strcmp(status, "changes no load"))
		*patch_speedup = sp->speedup;
	strbuf_addstr(&advice, "advice via `run --plan`: ");
	if (isnan(adv))
		strbuf_addstr(&advice, "not timed");
	else
		strbuf_addf(&advice, "%.2fx", adv);
	rebuilt_figure(&sb, in);
	if (!strcmp(status, "same as the advice")) {
		strbuf_addf(&sb, "%s; the source patch as written: the same plan (it rewrites "
			    "every advised load)", advice.buf);
	} else if (plans_differ(in)) {
		/* a source plan of its own (issue 38): what apply delivers first */
		strbuf_addstr(&sb, "the source patch as written, what `apply` delivers: ");
		patch_figure(&sb, in);
		strbuf_addf(&sb, "; %s", advice.buf);
	} else {
		strbuf_addf(&sb, "%s; the source patch as written: ", advice.buf);
		patch_figure(&sb, in);
	}
	strbuf_release(&advice);
	return strbuf_detach(&sb, NULL);
}
