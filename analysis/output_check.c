#include "analysis/output_check.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/capture_model.h"
#include "base/error.h"
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

	for (i = 0; i < o->nr_files; i++) {
		free(o->files[i].path);
		free(o->files[i].data);
		free(o->files[i].data_path);
	}
	free(o->files);
	free(o->out);
	free(o->err);
	memset(o, 0, sizeof(*o));
}

struct output_file *run_output_add_file(struct run_output *o, const char *path, int exists,
					long long size, const char *sha256)
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
	f->data = NULL;
	f->data_len = 0;
	f->data_path = NULL;
	return f;
}

void output_check_options_init(struct output_check_options *o)
{
	memset(o, 0, sizeof(*o));
	o->rtol = OUTPUT_RTOL_DEFAULT;
	o->atol = OUTPUT_ATOL_DEFAULT;
}

static const char *const kind_names[] = { "auto", "bytes", "text", "f32", "f64" };

const char *output_file_kind_name(enum output_file_kind k)
{
	return (size_t)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : "?";
}

int output_compare_parse(const char *spec, char **path, enum output_file_kind *kind)
{
	const char *colon = strrchr(spec, ':');
	size_t k;

	*path = NULL;
	*kind = OUTPUT_FILE_AUTO;
	if (colon && !strchr(colon, '/') && !strchr(colon, '.')) {
		for (k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
			if (!strcmp(colon + 1, kind_names[k]))
				break;
		if (k == sizeof(kind_names) / sizeof(kind_names[0]))
			return error_set(CA_E_USAGE, "--compare '%s': unknown kind '%s': use FILE, or "
					 "FILE:f32, FILE:f64, FILE:text or FILE:bytes", spec, colon + 1);
		*kind = (enum output_file_kind)k;
		*path = xstrndup(spec, (size_t)(colon - spec));
	} else {
		*path = xstrdup(spec);
	}
	if (!**path) {
		free(*path);
		*path = NULL;
		return error_set(CA_E_USAGE, "--compare '%s' names no file", spec);
	}
	return 0;
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

/* ---- numbers within the tolerance -------------------------------------- */

static int close_values(double a, double b, double rtol, double atol, double *max_abs,
			double *max_rel)
{
	double d, m;

	if (a == b || (isnan(a) && isnan(b)))
		return 1;
	if (!isfinite(a) || !isfinite(b))
		return 0;
	d = fabs(a - b);
	m = fmax(fabs(a), fabs(b));
	if (d > *max_abs)
		*max_abs = d;
	if (m > 0 && d / m > *max_rel)
		*max_rel = d / m;
	return d <= atol + rtol * m;
}

/* The value of the number of length n at s (number_len's), hex exactly. */
static double number_value(const char *s, size_t n)
{
	char buf[128];
	size_t i = 0;
	int neg = 0;

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (buf[0] == '+' || buf[0] == '-')
		neg = buf[i++] == '-';
	if (buf[i] == '0' && (buf[i + 1] == 'x' || buf[i + 1] == 'X')) {
		double v = (double)strtoull(buf + i + 2, NULL, 16);
		return neg ? -v : v;
	}
	return strtod(buf, NULL);
}

int output_line_close(const char *a, size_t alen, const char *b, size_t blen, double rtol,
		      double atol, double *max_abs, double *max_rel)
{
	size_t i = 0, j = 0, n, m;

	while (i < alen && j < blen) {
		unsigned char ca = (unsigned char)a[i];

		if (isalpha(ca) || ca == '_') {
			/* a word (sm_90, md5): equal as text */
			size_t ei = i, ej = j;

			while (ei < alen && is_word((unsigned char)a[ei]))
				ei++;
			while (ej < blen && is_word((unsigned char)b[ej]))
				ej++;
			if (ei - i != ej - j || memcmp(a + i, b + j, ei - i))
				return 0;
			i = ei;
			j = ej;
		} else if ((n = number_len(a + i, alen - i)) > 0) {
			m = number_len(b + j, blen - j);
			if (!m || !close_values(number_value(a + i, n), number_value(b + j, m), rtol,
						atol, max_abs, max_rel))
				return 0;
			i += n;
			j += m;
		} else {
			if (a[i] != b[j])
				return 0;
			i++;
			j++;
		}
	}
	return i == alen && j == blen;
}

/* ---- files ---------------------------------------------------------------- */

/* A file's contents as the judge compares them. */
struct bytes {
	const char *d;
	size_t n;
	struct strbuf owned;        /* read from data_path */
};

/* Loads f's contents into b; 0 when none were kept (or they cannot be read). */
static int bytes_load(struct bytes *b, const struct output_file *f)
{
	memset(b, 0, sizeof(*b));
	strbuf_init(&b->owned, 0);
	if (!f->exists)
		return 0;
	if (f->data) {
		b->d = f->data;
		b->n = f->data_len;
		return 1;
	}
	if (!f->data_path || strbuf_read_file(&b->owned, f->data_path, OUTPUT_DATA_MAX)) {
		error_clear();
		return 0;
	}
	b->d = b->owned.buf;
	b->n = b->owned.len;
	return 1;
}

static void bytes_release(struct bytes *b)
{
	strbuf_release(&b->owned);
}

static int looks_like_text(const char *d, size_t n)
{
	size_t i, odd = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)d[i];

		if (!c)
			return 0;
		odd += c < 0x20 && c != '\n' && c != '\r' && c != '\t';
	}
	return odd * 100 <= n;
}

/* 99% of the values are 0 or normal numbers of a plausible magnitude. */
static int looks_like_floats(const char *d, size_t n, size_t width)
{
	size_t i, count = n / width, good = 0;

	if (!count || n % width)
		return 0;
	for (i = 0; i < count; i++) {
		double v;

		if (width == 4) {
			float f;
			memcpy(&f, d + 4 * i, 4);
			v = f;
		} else {
			memcpy(&v, d + 8 * i, 8);
		}
		good += v == 0 || (isfinite(v) && fabs(v) >= 1e-30 && fabs(v) <= 1e30);
	}
	return good * 100 >= count * 99;
}

static enum output_file_kind guess_kind(const struct bytes *f)
{
	if (looks_like_text(f->d, f->n))
		return OUTPUT_FILE_TEXT;
	/* float32 first: float64 read as float32 looks like noise (its low
	 * words), while float32 read as float64 can look plausible and would
	 * hide a changed value in every other element */
	if (looks_like_floats(f->d, f->n, 4))
		return OUTPUT_FILE_F32;
	if (looks_like_floats(f->d, f->n, 8))
		return OUTPUT_FILE_F64;
	return OUTPUT_FILE_BYTES;
}

static int text_close(const struct bytes *a, const struct bytes *b, double rtol,
		      double atol, double *max_abs, double *max_rel)
{
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	struct lines la, lb;
	size_t i;
	int close;

	strbuf_add(&x, a->d, a->n);
	strbuf_add(&y, b->d, b->n);
	lines_split(&la, x.buf);
	lines_split(&lb, y.buf);
	close = la.n == lb.n;
	for (i = 0; close && i < la.n; i++)
		close = output_line_close(la.at[i], la.len[i], lb.at[i], lb.len[i], rtol, atol,
					  max_abs, max_rel);
	lines_release(&la);
	lines_release(&lb);
	strbuf_release(&x);
	strbuf_release(&y);
	return close;
}

static int floats_close(const struct bytes *a, const struct bytes *b, size_t width,
			double rtol, double atol, double *max_abs, double *max_rel)
{
	size_t i, count;

	if (a->n != b->n || a->n % width)
		return 0;
	count = a->n / width;
	for (i = 0; i < count; i++) {
		double x, y;

		if (width == 4) {
			float f, g;
			memcpy(&f, a->d + 4 * i, 4);
			memcpy(&g, b->d + 4 * i, 4);
			x = f;
			y = g;
		} else {
			memcpy(&x, a->d + 8 * i, 8);
			memcpy(&y, b->d + 8 * i, 8);
		}
		if (!close_values(x, y, rtol, atol, max_abs, max_rel))
			return 0;
	}
	return 1;
}

/* The kind a file is compared as: named (--compare FILE:f32), else AUTO. */
static enum output_file_kind named_kind(const struct output_check_options *opt, const char *path)
{
	size_t i;

	for (i = 0; i < opt->nr_formats; i++)
		if (!strcmp(opt->format_paths[i], path))
			return opt->format_kinds[i];
	return OUTPUT_FILE_AUTO;
}

/*
 * Two versions of a file whose bytes differ: equal within the tolerance?
 * Only where both contents were kept and the kind allows it; an AUTO kind
 * is told from the reference's contents and stored in *kind.
 */
static int files_close(const struct output_check_options *opt, enum output_file_kind *kind,
		       const struct output_file *a, const struct output_file *b, double *max_abs,
		       double *max_rel)
{
	struct bytes x, y;
	int close = 0;

	if (*kind == OUTPUT_FILE_BYTES || !bytes_load(&x, a))
		return 0;
	if (!bytes_load(&y, b)) {
		bytes_release(&x);
		return 0;
	}
	if (*kind == OUTPUT_FILE_AUTO)
		*kind = guess_kind(&x);
	switch (*kind) {
	case OUTPUT_FILE_TEXT:
		close = text_close(&x, &y, opt->rtol, opt->atol, max_abs, max_rel);
		break;
	case OUTPUT_FILE_F32:
		close = floats_close(&x, &y, 4, opt->rtol, opt->atol, max_abs, max_rel);
		break;
	case OUTPUT_FILE_F64:
		close = floats_close(&x, &y, 8, opt->rtol, opt->atol, max_abs, max_rel);
		break;
	default:
		break;
	}
	bytes_release(&x);
	bytes_release(&y);
	return close;
}

/* ---- the judge ------------------------------------------------------------ */

enum line_kind { LINE_STABLE, LINE_VOLATILE, LINE_UNSTABLE };

/* What the judge has learnt so far. */
struct judge {
	const struct output_check_options *opt;
	int changed, unchecked, within;
	size_t stable_items;           /* stable lines and files: what is still checked */
	size_t volatile_lines, unstable_lines, files_left_out;
	json_t *examples, *unstable_examples;
	struct strbuf changed_why;     /* the first change, for the reason */
	struct strbuf changed_what;    /* the places that changed, the first MAX_NAMED */
	size_t changed_named;
	struct strbuf unchecked_what;  /* what differs between baselines */
	size_t unchecked_named;
	double max_abs, max_rel;       /* the largest difference within the tolerance */
	char max_where[96];
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

/* Names a place that changed (a line, a file), up to MAX_NAMED places. */
static void note_changed(struct judge *j, const char *place)
{
	j->changed = 1;
	if (j->changed_named++ >= MAX_NAMED) {
		if (j->changed_named == MAX_NAMED + 1)
			strbuf_addstr(&j->changed_what, ", ...");
		return;
	}
	if (j->changed_what.len)
		strbuf_addstr(&j->changed_what, ", ");
	strbuf_addstr(&j->changed_what, place);
}

/* A difference within the tolerance, where the largest so far comes from. */
static void note_within(struct judge *j, double abs_d, double rel_d, const char *where)
{
	j->within = 1;
	if (rel_d > j->max_rel || (rel_d == j->max_rel && abs_d > j->max_abs)) {
		j->max_rel = rel_d;
		j->max_abs = abs_d;
		/* a long place is cut: it names where, not what */
		snprintf(j->max_where, sizeof(j->max_where), "%.*s", (int)sizeof(j->max_where) - 1,
			 where);
	}
}

static void add_quoted(struct strbuf *sb, const char *s, size_t n)
{
	strbuf_addch(sb, '\'');
	strbuf_add(sb, s, n > 80 ? 80 : n);
	if (n > 80)
		strbuf_addstr(sb, "...");
	strbuf_addch(sb, '\'');
}

static void add_example(json_t *arr, size_t count, const char *name, size_t line,
			const char *text, size_t len)
{
	struct strbuf ex = STRBUF_INIT;

	if (count >= MAX_EXAMPLES)
		return;
	strbuf_addf(&ex, "%s line %zu: ", name, line);
	strbuf_add(&ex, text, len > 120 ? 120 : len);
	json_array_append_new(arr, json_string(ex.buf));
	strbuf_release(&ex);
}

/* One stream (stdout or stderr) of every run. */
static void judge_stream(struct judge *j, const char *name, int is_err,
			 const struct run_output *const *base, size_t nb,
			 const struct run_output *const *var, size_t nv)
{
	const struct output_check_options *opt = j->opt;
	struct lines ref, other;
	unsigned char *kind = NULL;
	const char **chg_at;   /* per line, the first variant's text where it changed */
	size_t *chg_len;
	size_t b, v, i, first = nb;
	int shape = 1, counted = 0;

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
			double da = 0, dr = 0;

			if (kind[i] == LINE_UNSTABLE || same_line(&ref, i, &other, i))
				continue;
			/* rounding of the last bits is not volatility */
			if (kind[i] == LINE_STABLE &&
			    output_line_close(ref.at[i], ref.len[i], other.at[i], other.len[i],
					      opt->rtol, opt->atol, &da, &dr))
				continue;
			kind[i] = same_masked(&ref, i, &other, i) ? LINE_VOLATILE : LINE_UNSTABLE;
		}
		lines_release(&other);
	}
	for (i = 0; shape && i < ref.n; i++) {
		if (kind[i] == LINE_VOLATILE) {
			add_example(j->examples, j->volatile_lines++, name, i + 1, ref.at[i], ref.len[i]);
		} else if (kind[i] == LINE_UNSTABLE) {
			/* left out, listed; the stable lines are still checked */
			char what[64];

			add_example(j->unstable_examples, j->unstable_lines++, name, i + 1, ref.at[i],
				    ref.len[i]);
			snprintf(what, sizeof(what), "%s line %zu", name, i + 1);
			note_unchecked(j, what);
		} else {
			j->stable_items++;
		}
	}
	chg_at = xcalloc(ref.n + 1, sizeof(*chg_at));
	chg_len = xcalloc(ref.n + 1, sizeof(*chg_len));
	for (v = 0; v < nv && shape; v++) {
		const char *t = is_err ? var[v]->err : var[v]->out;
		if (!var[v]->ok || !t)
			continue;
		lines_split(&other, t);
		if (other.n != ref.n) {
			struct strbuf place = STRBUF_INIT;

			strbuf_addf(&place, "%s has %zu lines instead of %zu", name, other.n, ref.n);
			if (!j->changed)
				strbuf_add(&j->changed_why, place.buf, place.len);
			if (!counted++)
				note_changed(j, place.buf);
			strbuf_release(&place);
		}
		for (i = 0; other.n == ref.n && i < ref.n; i++) {
			double da = 0, dr = 0;
			int same;

			if (kind[i] == LINE_UNSTABLE || same_line(&ref, i, &other, i))
				continue;
			if (kind[i] == LINE_STABLE &&
			    output_line_close(ref.at[i], ref.len[i], other.at[i], other.len[i],
					      opt->rtol, opt->atol, &da, &dr)) {
				char where[64];

				snprintf(where, sizeof(where), "%s line %zu", name, i + 1);
				note_within(j, da, dr, where);
				continue;
			}
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
			if (!chg_at[i]) {
				chg_at[i] = other.at[i];
				chg_len[i] = other.len[i];
			}
		}
		lines_release(&other);
	}
	/* the lines that changed, named in their order (once, whichever variant) */
	for (i = 0; i < ref.n; i++) {
		struct strbuf place = STRBUF_INIT;

		if (!chg_at[i])
			continue;
		strbuf_addf(&place, "%s line %zu: ", name, i + 1);
		add_quoted(&place, ref.at[i], ref.len[i]);
		strbuf_addstr(&place, " became ");
		add_quoted(&place, chg_at[i], chg_len[i]);
		note_changed(j, place.buf);
		strbuf_release(&place);
	}
	free(chg_at);
	free(chg_len);
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

/* Whether the names of order (strings) hold path. */
static int listed(json_t *order, const char *path)
{
	json_t *x;
	size_t i;

	json_array_foreach(order, i, x)
		if (!strcmp(json_string_value(x), path))
			return 1;
	return 0;
}

static void judge_files(struct judge *j, json_t *files, const struct run_output *const *base,
			size_t nb, const struct run_output *const *var, size_t nv)
{
	json_t *order = json_array(), *x;
	size_t b, v, nbok = 0, i;
	int volatile_names = 0;
	const char *path;

	/* every path once, in the order the runs name them */
	for (b = 0; b < nb + nv; b++) {
		const struct run_output *r = b < nb ? base[b] : var[b - nb];
		if (!r->ok)
			continue;
		for (i = 0; i < r->nr_files; i++)
			if (!listed(order, r->files[i].path))
				json_array_append_new(order, json_string(r->files[i].path));
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
		enum output_file_kind kind = OUTPUT_FILE_AUTO;
		size_t touched = 0;
		int differs = 0, missing = 0, within = 0;
		double fabs_d = 0, frel_d = 0;
		json_t *fj;

		path = json_string_value(x);
		for (b = 0; b < nb; b++) {
			if (!base[b]->ok)
				continue;
			f = find_file(base[b], path);
			if (!f)
				continue;
			touched++;
			if (!ref) {
				ref = f;
				kind = named_kind(j->opt, path);
			} else if (!same_file(ref, f) &&
				   !files_close(j->opt, &kind, ref, f, &fabs_d, &frel_d)) {
				differs = 1;
			}
		}
		fabs_d = frel_d = 0;
		if (!touched) {
			status = "created";
			for (v = 0; v < nv && !bad; v++)
				if (var[v]->ok)
					bad = find_file(var[v], path);
			if (volatile_names) {
				note_unchecked_file(j, "new file", path);
				j->files_left_out++;
			} else {
				struct strbuf place = STRBUF_INIT;

				if (!j->changed)
					strbuf_addf(&j->changed_why, "file '%s' was written, the baseline "
						    "writes no such file", path);
				strbuf_addf(&place, "file '%s' (new)", path);
				note_changed(j, place.buf);
				strbuf_release(&place);
			}
		} else if (touched < nbok || differs) {
			status = "unchecked";
			note_unchecked_file(j, "file", path);
			j->files_left_out++;
		} else {
			j->stable_items++;
			for (v = 0; v < nv; v++) {
				if (!var[v]->ok)
					continue;
				f = find_file(var[v], path);
				if (!f) {
					missing = 1;
				} else if (!same_file(ref, f)) {
					if (files_close(j->opt, &kind, ref, f, &fabs_d, &frel_d))
						within = 1;
					else if (!bad)
						bad = f;
				}
			}
			if (bad || missing) {
				struct strbuf place = STRBUF_INIT;

				status = bad ? "changed" : "missing";
				if (!j->changed)
					strbuf_addf(&j->changed_why, bad ? "file '%s' differs from the "
						    "baseline's" : "file '%s' was not written", path);
				strbuf_addf(&place, bad ? "file '%s'" : "file '%s' (not written)", path);
				note_changed(j, place.buf);
				strbuf_release(&place);
			} else if (within) {
				char where[160];

				status = "within_tolerance";
				snprintf(where, sizeof(where), "file '%s'", path);
				note_within(j, fabs_d, frel_d, where);
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
		if (within && !bad) {
			json_object_set_new(fj, "compared_as", json_string(output_file_kind_name(kind)));
			json_object_set_new(fj, "max_abs_difference", json_real(fabs_d));
			json_object_set_new(fj, "max_rel_difference", json_real(frel_d));
		}
		if (bad) {
			json_object_set_new(fj, "advice_size", bad->exists ? json_integer(bad->size) : json_null());
			json_object_set_new(fj, "advice_sha256", bad->exists && bad->sha256[0] ?
					    json_string(bad->sha256) : json_null());
			if (kind != OUTPUT_FILE_BYTES && kind != OUTPUT_FILE_AUTO)
				json_object_set_new(fj, "compared_as",
						    json_string(output_file_kind_name(kind)));
		}
		json_array_append_new(files, fj);
	}
	json_decref(order);
}

/* output_check_judge(); the places that changed go to *changed (may be NULL). */
static json_t *judge(const struct run_output *const *base, size_t nb,
		     const struct run_output *const *variant, size_t nv,
		     const struct output_check_options *opt, int *ok, struct strbuf *changed)
{
	struct output_check_options defaults;
	struct judge j;
	struct strbuf why = STRBUF_INIT;
	json_t *files = json_array(), *res;
	const char *status;
	size_t nfiles, left_out;

	if (!opt) {
		output_check_options_init(&defaults);
		opt = &defaults;
	}
	memset(&j, 0, sizeof(j));
	j.opt = opt;
	j.examples = json_array();
	j.unstable_examples = json_array();
	strbuf_init(&j.changed_why, 0);
	strbuf_init(&j.changed_what, 0);
	strbuf_init(&j.unchecked_what, 0);
	judge_stream(&j, "stdout", 0, base, nb, variant, nv);
	judge_stream(&j, "stderr", 1, base, nb, variant, nv);
	judge_files(&j, files, base, nb, variant, nv);
	nfiles = json_array_size(files);
	left_out = j.unstable_lines + j.files_left_out;
	if (j.changed) {
		status = "changed";
		strbuf_addf(&why, "the program's output changed with the advice applied: %s",
			    j.changed_why.buf);
	} else if (j.unchecked && !j.stable_items) {
		/* nothing stable is left to compare */
		status = "unchecked";
		strbuf_addf(&why, "output unchecked: the program's results differ between baseline "
			    "runs (%s)", j.unchecked_what.buf);
		if (opt->strict)
			strbuf_addstr(&why, "; --strict-output rejects the advice");
	} else {
		status = j.within ? "within_tolerance" : "identical";
		size_t checked = nfiles - j.files_left_out;

		strbuf_addf(&why, "stdout, stderr and %zu file%s ", checked, checked == 1 ? "" : "s");
		if (!nv)
			strbuf_addstr(&why, "agree between the runs of the baseline's");
		else if (j.within)
			strbuf_addf(&why, "match the baseline's within the tolerance (rtol %g, atol %g)",
				    opt->rtol, opt->atol);
		else
			strbuf_addstr(&why, "match the baseline's");
		if (j.within)
			strbuf_addf(&why, "; the largest difference, in %s: %.3g (%.3g relative)",
				    j.max_where, j.max_abs, j.max_rel);
		if (j.volatile_lines)
			strbuf_addf(&why, " (%zu volatile line%s compared with numbers masked)",
				    j.volatile_lines, j.volatile_lines == 1 ? "" : "s");
		if (left_out)
			strbuf_addf(&why, "; left out, as they differ between baseline runs: %s",
				    j.unchecked_what.buf);
		if (left_out && opt->strict)
			strbuf_addstr(&why, "; --strict-output rejects the advice");
	}
	*ok = !j.changed && ((!j.unchecked && !left_out) || !opt->strict);
	res = json_pack("{s:s, s:f, s:f, s:I, s:I, s:o, s:I, s:o, s:o, s:s}", "status", status,
			"rtol", opt->rtol, "atol", opt->atol, "left_out", (json_int_t)left_out,
			"volatile_lines", (json_int_t)j.volatile_lines, "volatile_examples", j.examples,
			"unstable_lines", (json_int_t)j.unstable_lines,
			"unstable_examples", j.unstable_examples, "files", files,
			"reason", why.buf);
	if (j.within && !j.changed)
		json_object_set_new(res, "max_difference", json_pack("{s:f, s:f, s:s}", "abs",
				    j.max_abs, "rel", j.max_rel, "where", j.max_where));
	if (changed && j.changed)
		strbuf_add(changed, j.changed_what.buf, j.changed_what.len);
	strbuf_release(&why);
	strbuf_release(&j.changed_why);
	strbuf_release(&j.changed_what);
	strbuf_release(&j.unchecked_what);
	return res;
}

json_t *output_check_judge(const struct run_output *const *base, size_t nb,
			   const struct run_output *const *variant, size_t nv,
			   const struct output_check_options *opt, int *ok)
{
	return judge(base, nb, variant, nv, opt, ok, NULL);
}

char *output_check_changed(const struct run_output *const *ref, size_t nr,
			   const struct run_output *run, const struct output_check_options *opt)
{
	struct output_check_options lenient;
	struct strbuf changed = STRBUF_INIT;
	const struct run_output *variant[1] = { run };
	size_t i, nok = 0;
	int ok = 1;

	for (i = 0; i < nr; i++)
		nok += ref[i]->ok;
	/* nothing to compare with, or nothing to compare */
	if (!nok || !run->ok)
		return NULL;
	if (opt)
		lenient = *opt;
	else
		output_check_options_init(&lenient);
	lenient.strict = 0;
	json_decref(judge(ref, nr, variant, 1, &lenient, &ok, &changed));
	if (ok) {
		strbuf_release(&changed);
		return NULL;
	}
	if (!changed.len)
		strbuf_addstr(&changed, "its output");
	return strbuf_detach(&changed, NULL);
}

/* The judgement read by the capture's reader; 0 when it refuses it. */
static int read_judgement(json_t *judgement, struct capture_output_check *oc)
{
	memset(oc, 0, sizeof(*oc));
	return json_is_object(judgement) &&
	       !capture_output_check_from_json(oc, judgement, "output check");
}

const char *output_check_status(json_t *judgement)
{
	static const char *const known[] = { "identical", "within_tolerance", "changed",
					     "unchecked" };
	struct capture_output_check oc;
	const char *status = "";
	size_t i;

	if (read_judgement(judgement, &oc))
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (oc.status && !strcmp(oc.status, known[i]))
				status = known[i];
	capture_output_check_release(&oc);
	return status;
}

char *output_check_reason(json_t *judgement)
{
	struct capture_output_check oc;
	char *reason = xstrdup(read_judgement(judgement, &oc) && oc.reason ? oc.reason : "");

	capture_output_check_release(&oc);
	return reason;
}

int output_check_baselines_agree(json_t *judgement)
{
	struct capture_output_check oc;
	int agree = read_judgement(judgement, &oc) && oc.status &&
		    strcmp(oc.status, "unchecked") != 0 && !(oc.left_out > 0);

	capture_output_check_release(&oc);
	return agree;
}
