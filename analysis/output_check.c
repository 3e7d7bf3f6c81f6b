#include "analysis/output_check.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/xalloc.h"

/* Volatile lines shown as examples, and lines or files named in a reason. */
#define MAX_EXAMPLES 3
#define MAX_NAMED 4

void run_output_init(struct run_output *o)
{
	memset(o, 0, sizeof(*o));
}

void run_output_release(struct run_output *o)
{
	size_t i;

	for (i = 0; i < o->nr_files; i++)
		free(o->files[i].path);
	free(o->files);
	free(o->out);
	free(o->err);
	memset(o, 0, sizeof(*o));
}

void run_output_add_file(struct run_output *o, const char *path, int exists, long long size,
			 const char *sha256)
{
	struct output_file *f;

	if (o->nr_files == o->alloc_files) {
		o->alloc_files = o->alloc_files ? 2 * o->alloc_files : 8;
		o->files = xrealloc(o->files, o->alloc_files * sizeof(*o->files));
	}
	f = &o->files[o->nr_files++];
	f->path = xstrdup(path);
	f->exists = exists;
	f->size = size;
	snprintf(f->sha256, sizeof(f->sha256), "%s", sha256 ? sha256 : "");
}

/* ---- lines ------------------------------------------------------------- */

static int is_word(int ch)
{
	return isalnum(ch) || ch == '_';
}

/* Length of the number that starts at s (at most n bytes), 0 if none. */
static size_t number_len(const char *s, size_t n)
{
	size_t i = 0, digits = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	if (i + 2 < n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') &&
	    isxdigit((unsigned char)s[i + 2])) {
		i += 2;
		while (i < n && isxdigit((unsigned char)s[i]))
			i++;
		return i;
	}
	while (i < n && isdigit((unsigned char)s[i]))
		i++, digits++;
	if (i < n && s[i] == '.') {
		size_t j = i + 1;
		while (j < n && isdigit((unsigned char)s[j]))
			j++, digits++;
		if (digits)
			i = j;
	}
	if (!digits)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;
		if (j < n && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j < n && isdigit((unsigned char)s[j])) {
			while (j < n && isdigit((unsigned char)s[j]))
				j++;
			i = j;
		}
	}
	return i;
}

void output_mask_numbers(const char *line, size_t len, struct strbuf *out)
{
	size_t i = 0, n;

	while (i < len) {
		unsigned char ch = (unsigned char)line[i];

		if (isalpha(ch) || ch == '_') {
			size_t j = i;
			while (j < len && is_word((unsigned char)line[j]))
				j++;
			strbuf_add(out, line + i, j - i);
			i = j;
		} else if ((n = number_len(line + i, len - i)) > 0) {
			strbuf_addch(out, '#');
			i += n;
		} else {
			strbuf_addch(out, ch);
			i++;
		}
	}
}

int output_line_is_timing(const char *line, size_t len)
{
	static const char *const words[] = {
		"time", "times", "timer", "timing", "timings", "elapsed", "sec", "secs",
		"second", "seconds", "ms", "msec", "msecs", "us", "usec", "usecs", "ns", "nsec",
		"throughput", "bandwidth", "duration", "wall", "runtime", "took", "fps",
		"gflops", "tflops", "flops", "clock",
	};
	size_t i = 0, k;

	while (i < len) {
		size_t j = i;
		if (!isalpha((unsigned char)line[i])) {
			i++;
			continue;
		}
		while (j < len && isalpha((unsigned char)line[j]))
			j++;
		for (k = 0; k < sizeof(words) / sizeof(words[0]); k++)
			if (strlen(words[k]) == j - i && !strncasecmp(line + i, words[k], j - i))
				return 1;
		if (j - i == 2 && !strncasecmp(line + i, "gb", 2) && j < len && line[j] == '/')
			return 1;
		i = j;
	}
	return 0;
}

char *output_filter_lines(const char *text, const regex_t *ignore)
{
	struct strbuf sb = STRBUF_INIT, line = STRBUF_INIT;
	const char *p = text, *nl;

	if (!ignore)
		return xstrdup(text);
	while (*p) {
		size_t n;
		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		strbuf_reset(&line);
		strbuf_add(&line, p, n);
		if (regexec(ignore, line.buf, 0, NULL, 0)) {
			strbuf_add(&sb, p, n);
			if (nl)
				strbuf_addch(&sb, '\n');
		}
		p += n + (nl ? 1 : 0);
	}
	strbuf_release(&line);
	return strbuf_detach(&sb, NULL);
}

/* A text split into lines (pointers into the text; no newlines). */
struct lines {
	const char **at;
	size_t *len;
	size_t n;
};

static void lines_split(struct lines *l, const char *text)
{
	const char *p = text;
	size_t alloc = 0;

	memset(l, 0, sizeof(*l));
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (l->n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			l->at = xrealloc(l->at, alloc * sizeof(*l->at));
			l->len = xrealloc(l->len, alloc * sizeof(*l->len));
		}
		l->at[l->n] = p;
		l->len[l->n++] = n;
		p += n + (nl ? 1 : 0);
	}
}

static void lines_release(struct lines *l)
{
	free(l->at);
	free(l->len);
}

static int same_line(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->at[i], b->at[j], a->len[i]);
}

static int same_masked(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	int same;

	output_mask_numbers(a->at[i], a->len[i], &x);
	output_mask_numbers(b->at[j], b->len[j], &y);
	same = x.len == y.len && (!x.len || !memcmp(x.buf, y.buf, x.len));
	strbuf_release(&x);
	strbuf_release(&y);
	return same;
}

enum line_kind { LINE_STABLE, LINE_VOLATILE, LINE_UNSTABLE };

/* What the judge has learnt so far. */
struct judge {
	int changed, unchecked;
	size_t volatile_lines, unstable_lines;
	json_t *examples;
	struct strbuf changed_why;     /* the first change, for the reason */
	struct strbuf unchecked_what;  /* what differs between baselines */
	size_t unchecked_named;
};

/* Names what differs between baselines, up to MAX_NAMED things. */
static void note_unchecked(struct judge *j, const char *what)
{
	j->unchecked = 1;
	if (j->unchecked_named++ >= MAX_NAMED) {
		if (j->unchecked_named == MAX_NAMED + 1)
			strbuf_addstr(&j->unchecked_what, ", ...");
		return;
	}
	if (j->unchecked_what.len)
		strbuf_addstr(&j->unchecked_what, ", ");
	strbuf_addstr(&j->unchecked_what, what);
}

static void note_unchecked_file(struct judge *j, const char *what, const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s '%s'", what, path);
	note_unchecked(j, sb.buf);
	strbuf_release(&sb);
}

static void add_quoted(struct strbuf *sb, const char *s, size_t n)
{
	strbuf_addch(sb, '\'');
	strbuf_add(sb, s, n > 80 ? 80 : n);
	if (n > 80)
		strbuf_addstr(sb, "...");
	strbuf_addch(sb, '\'');
}

/* One stream (stdout or stderr) of every run. */
static void judge_stream(struct judge *j, const char *name, int is_err,
			 const struct run_output *const *base, size_t nb,
			 const struct run_output *const *var, size_t nv)
{
	struct lines ref, other;
	unsigned char *kind = NULL;
	size_t b, v, i, first = nb;
	int shape = 1;

	for (b = 0; b < nb; b++)
		if (base[b]->ok && (is_err ? base[b]->err : base[b]->out)) {
			first = b;
			break;
		}
	if (first == nb)
		return;
	lines_split(&ref, is_err ? base[first]->err : base[first]->out);
	kind = xcalloc(ref.n + 1, 1);
	for (b = first + 1; b < nb && shape; b++) {
		const char *t = is_err ? base[b]->err : base[b]->out;
		if (!base[b]->ok || !t)
			continue;
		lines_split(&other, t);
		if (other.n != ref.n) {
			shape = 0;
			note_unchecked(j, is_err ? "stderr has a different number of lines" :
				       "stdout has a different number of lines");
		}
		for (i = 0; shape && i < ref.n; i++) {
			if (kind[i] == LINE_UNSTABLE || same_line(&ref, i, &other, i))
				continue;
			kind[i] = same_masked(&ref, i, &other, i) ? LINE_VOLATILE : LINE_UNSTABLE;
		}
		lines_release(&other);
	}
	for (i = 0; shape && i < ref.n; i++) {
		if (kind[i] == LINE_VOLATILE) {
			struct strbuf ex = STRBUF_INIT;
			if (j->volatile_lines++ < MAX_EXAMPLES) {
				strbuf_addf(&ex, "%s line %zu: ", name, i + 1);
				strbuf_add(&ex, ref.at[i], ref.len[i] > 120 ? 120 : ref.len[i]);
				json_array_append_new(j->examples, json_string(ex.buf));
			}
			strbuf_release(&ex);
		} else if (kind[i] == LINE_UNSTABLE) {
			char what[64];
			j->unstable_lines++;
			snprintf(what, sizeof(what), "%s line %zu", name, i + 1);
			note_unchecked(j, what);
		}
	}
	for (v = 0; v < nv && shape; v++) {
		const char *t = is_err ? var[v]->err : var[v]->out;
		if (!var[v]->ok || !t)
			continue;
		lines_split(&other, t);
		if (other.n != ref.n) {
			if (!j->changed)
				strbuf_addf(&j->changed_why, "%s has %zu lines instead of %zu", name,
					    other.n, ref.n);
			j->changed = 1;
		}
		for (i = 0; other.n == ref.n && i < ref.n; i++) {
			int same;
			if (kind[i] == LINE_UNSTABLE || same_line(&ref, i, &other, i))
				continue;
			/* a timing the baselines happened to print alike is still a timing */
			same = (kind[i] == LINE_VOLATILE || output_line_is_timing(ref.at[i], ref.len[i])) &&
			       same_masked(&ref, i, &other, i);
			if (same)
				continue;
			if (!j->changed) {
				strbuf_addf(&j->changed_why, "%s line %zu ", name, i + 1);
				add_quoted(&j->changed_why, ref.at[i], ref.len[i]);
				strbuf_addstr(&j->changed_why, " became ");
				add_quoted(&j->changed_why, other.at[i], other.len[i]);
			}
			j->changed = 1;
			break;
		}
		lines_release(&other);
	}
	lines_release(&ref);
	free(kind);
}

static const struct output_file *find_file(const struct run_output *o, const char *path)
{
	size_t i;

	for (i = 0; i < o->nr_files; i++)
		if (!strcmp(o->files[i].path, path))
			return &o->files[i];
	return NULL;
}

static int same_file(const struct output_file *a, const struct output_file *b)
{
	return a->exists == b->exists && (!a->exists || (a->size == b->size && a->sha256[0] &&
				  !strcmp(a->sha256, b->sha256)));
}

static void judge_files(struct judge *j, json_t *files, const struct run_output *const *base,
			size_t nb, const struct run_output *const *var, size_t nv)
{
	json_t *seen = json_object(), *order = json_array(), *x;
	size_t b, v, nbok = 0, i;
	int volatile_names = 0;
	const char *path;

	/* jansson objects do not keep insertion order: keep it in an array */
	for (b = 0; b < nb + nv; b++) {
		const struct run_output *r = b < nb ? base[b] : var[b - nb];
		if (!r->ok)
			continue;
		for (i = 0; i < r->nr_files; i++)
			if (!json_object_get(seen, r->files[i].path)) {
				json_object_set_new(seen, r->files[i].path, json_true());
				json_array_append_new(order, json_string(r->files[i].path));
			}
	}
	for (b = 0; b < nb; b++)
		nbok += base[b]->ok;
	/* files that only some baselines write: their names change from run to run */
	json_array_foreach(order, i, x) {
		size_t touched = 0;
		path = json_string_value(x);
		for (b = 0; b < nb; b++)
			touched += base[b]->ok && find_file(base[b], path);
		if (touched && touched < nbok)
			volatile_names = 1;
	}
	json_array_foreach(order, i, x) {
		const struct output_file *ref = NULL, *f, *bad = NULL;
		const char *status = "identical";
		size_t touched = 0;
		int differs = 0, missing = 0;
		json_t *fj;

		path = json_string_value(x);
		for (b = 0; b < nb; b++) {
			if (!base[b]->ok)
				continue;
			f = find_file(base[b], path);
			if (!f)
				continue;
			touched++;
			if (!ref)
				ref = f;
			else if (!same_file(ref, f))
				differs = 1;
		}
		if (!touched) {
			status = "created";
			for (v = 0; v < nv && !bad; v++)
				if (var[v]->ok)
					bad = find_file(var[v], path);
			if (volatile_names) {
				note_unchecked_file(j, "new file", path);
			} else {
				if (!j->changed)
					strbuf_addf(&j->changed_why, "file '%s' was written, the baseline "
						    "writes no such file", path);
				j->changed = 1;
			}
		} else if (touched < nbok || differs) {
			status = "unchecked";
			note_unchecked_file(j, "file", path);
		} else {
			for (v = 0; v < nv; v++) {
				if (!var[v]->ok)
					continue;
				f = find_file(var[v], path);
				if (!f)
					missing = 1;
				else if (!same_file(ref, f) && !bad)
					bad = f;
			}
			if (bad || missing) {
				status = bad ? "changed" : "missing";
				if (!j->changed)
					strbuf_addf(&j->changed_why, bad ? "file '%s' differs from the "
						    "baseline's" : "file '%s' was not written", path);
				j->changed = 1;
			}
		}
		fj = json_pack("{s:s, s:s}", "path", path, "status", status);
		if (ref) {
			json_object_set_new(fj, "size", ref->exists ? json_integer(ref->size) : json_null());
			json_object_set_new(fj, "sha256", ref->exists && ref->sha256[0] ?
					    json_string(ref->sha256) : json_null());
			if (!ref->exists)
				json_object_set_new(fj, "removed", json_true());
		}
		if (bad) {
			json_object_set_new(fj, "advice_size", bad->exists ? json_integer(bad->size) : json_null());
			json_object_set_new(fj, "advice_sha256", bad->exists && bad->sha256[0] ?
					    json_string(bad->sha256) : json_null());
		}
		json_array_append_new(files, fj);
	}
	json_decref(order);
	json_decref(seen);
}

json_t *output_check_judge(const struct run_output *const *base, size_t nb,
			   const struct run_output *const *variant, size_t nv, int strict, int *ok)
{
	struct judge j;
	struct strbuf why = STRBUF_INIT;
	json_t *files = json_array(), *res;
	const char *status;
	size_t nfiles;

	memset(&j, 0, sizeof(j));
	j.examples = json_array();
	strbuf_init(&j.changed_why, 0);
	strbuf_init(&j.unchecked_what, 0);
	judge_stream(&j, "stdout", 0, base, nb, variant, nv);
	judge_stream(&j, "stderr", 1, base, nb, variant, nv);
	judge_files(&j, files, base, nb, variant, nv);
	nfiles = json_array_size(files);
	if (j.changed) {
		status = "changed";
		strbuf_addf(&why, "the program's output changed with the advice applied: %s",
			    j.changed_why.buf);
	} else if (j.unchecked) {
		status = "unchecked";
		strbuf_addf(&why, "output unchecked: the program's results differ between baseline "
			    "runs (%s)", j.unchecked_what.buf);
		if (strict)
			strbuf_addstr(&why, "; --strict-output rejects the advice");
	} else {
		status = "identical";
		strbuf_addf(&why, "stdout, stderr and %zu file%s %s the baseline's", nfiles,
			    nfiles == 1 ? "" : "s", nv ? "match" : "agree between the runs of");
		if (j.volatile_lines)
			strbuf_addf(&why, " (%zu volatile line%s compared with numbers masked)",
				    j.volatile_lines, j.volatile_lines == 1 ? "" : "s");
	}
	*ok = !j.changed && (!j.unchecked || !strict);
	res = json_pack("{s:s, s:I, s:o, s:I, s:o, s:s}", "status", status,
			"volatile_lines", (json_int_t)j.volatile_lines, "volatile_examples", j.examples,
			"unstable_lines", (json_int_t)j.unstable_lines, "files", files,
			"reason", why.buf);
	strbuf_release(&why);
	strbuf_release(&j.changed_why);
	strbuf_release(&j.unchecked_what);
	return res;
}
