#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/digest.h"
#include "base/error.h"
#include "base/input_file.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "emitters/report.h"
#include "emitters/rewrite/source_apply.h"
#include "emitters/rewrite/source_patch.h"

static int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

int source_apply_check_files(const struct unified_diff *diff, const struct sources_file *sf,
			     const char *patch_name, const char *sources_name)
{
	size_t i;

	for (i = 0; i < diff->nr_files; i++) {
		const char *file = diff->files[i].path;
		const struct sources_file_entry *e = sources_file_find(sf, file);
		struct strbuf shown = STRBUF_INIT;
		int ret;

		if (e && e->patched)
			continue;
		strbuf_add_printable(&shown, file);
		ret = error_set(CA_E_INPUT, "%s changes '%s', which %s does not record as a file "
				"of the advice: refusing the whole patch; re-write it with "
				"'cacheadvise report DIR --all'", patch_name, shown.buf, sources_name);
		strbuf_release(&shown);
		return ret;
	}
	return 0;
}

/*
 * The file root/rel is reached without a symbolic link below root, and is
 * a regular file: apply writes no file through a link (git apply refuses
 * "beyond a symbolic link" too). Returns 0 or CA_E_INPUT saying which
 * component is what.
 */
static int check_no_link(const char *root, const char *rel)
{
	char *full = xasprintf("%s/%s", root, rel);
	char *p = full + strlen(root) + 1;
	struct stat st;
	int ret = 0;

	for (;;) {
		char *slash = strchr(p, '/');

		if (slash)
			*slash = '\0';
		if (lstat(full, &st)) {
			ret = error_set(CA_E_INPUT, "cannot read '%s', which the source patch changes: "
					"pass --source-root with the directory that holds '%s'",
					full, rel);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlink(full, target, sizeof(target) - 1);
			struct strbuf shown = STRBUF_INIT;

			target[n > 0 ? n : 0] = '\0';
			strbuf_add_printable(&shown, target);
			ret = error_set(CA_E_INPUT, "'%s' is a symbolic link (to '%s'): apply writes "
					"no file through a link; apply the patch where the file is "
					"(--source-root), or replace the link with a copy of the file",
					full, shown.buf);
			strbuf_release(&shown);
			break;
		}
		if (!slash) {
			if (!S_ISREG(st.st_mode))
				ret = error_set(CA_E_INPUT, "'%s' is not a regular file: the source "
						"patch changes only regular files", full);
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			ret = error_set(CA_E_INPUT, "'%s' is not a directory: cannot reach '%s'", full,
					rel);
			break;
		}
		*slash = '/';
		p = slash + 1;
	}
	free(full);
	return ret;
}

/* Where path cannot be written, says why: read-only, or not writable. */
static int check_writable(const char *root, const char *file)
{
	char *full = xasprintf("%s/%s", root, file), *slash;
	int ret = 0;

	if (access(full, W_OK) && errno != ENOENT)
		goto refuse;
	slash = strrchr(full, '/');
	*slash = '\0';      /* git and patch replace the file: its directory too */
	if (!access(full, W_OK))
		goto out;
	*slash = '/';
refuse:
	if (errno == EROFS)
		ret = error_set(CA_E_INPUT, "the source tree '%s' is read-only: cannot change '%s'; "
				"copy the sources somewhere writable and pass --source-root",
				root, full);
	else
		ret = error_set(CA_E_INPUT, "'%s' is not writable (%s): cannot apply the patch "
				"there; make it writable, or copy the sources and pass --source-root",
				full, strerror(errno));
out:
	free(full);
	return ret;
}

/* The loads of in that the source plan (source_plan 1) or the plan
 * changes go to res->skips, with why the patch leaves them; how many. */
static size_t add_skips(struct source_apply *res, int source_plan)
{
	const struct report_input *in = &res->in;
	size_t i, j, n = 0;

	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];

		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];
			struct source_apply_skip *s;

			if (!(source_plan ? l->patch_changes : l->changes))
				continue;
			n++;
			res->skips = xrealloc(res->skips, (res->nr_skips + 1) * sizeof(*res->skips));
			s = &res->skips[res->nr_skips++];
			s->label = report_kernel_label(k);
			s->ordinal = l->ordinal;
			s->path = l->file ? (l->hint.path ? l->hint.path : l->file) : NULL;
			s->line = l->line;
			s->action = source_plan ? l->patch_action : l->action;
			if (!s->action)
				s->action = "?";
			s->reason = l->hint.message ? l->hint.message : "no reason recorded";
		}
	}
	return n;
}

/*
 * The patch is empty. Where neither plan changes a load there is nothing
 * to apply (0, SOURCE_APPLY_NO_CHANGES); otherwise every load the source
 * plan changes (else, where it changes none, every load the advice
 * changes, which only `run --plan` applies) goes to res->skips with why
 * the patch leaves it, and the answer is CA_E_INPUT: the advice cannot
 * reach the sources this way.
 */
static int nothing_rewritten(const struct source_apply_options *o, struct source_apply *res)
{
	size_t changes = add_skips(res, 1), plan_only = changes ? 0 : add_skips(res, 0);

	if (!changes && !plan_only) {
		res->state = SOURCE_APPLY_NO_CHANGES;
		return 0;
	}
	if (!changes)
		return error_set(CA_E_INPUT, "nothing to apply: the source plan changes no load, "
				 "and the %zu load%s the advice changes take forms their source "
				 "cannot carry (reasons above); 'cacheadvise run --plan "
				 "%s/plan.json -- PROGRAM' applies the advice without a rebuild",
				 plan_only, plan_only == 1 ? "" : "s", o->dir);
	return error_set(CA_E_INPUT, "nothing to apply: the source patch rewrites none of the %zu "
			 "load%s the plan changes (reasons above)%s; 'cacheadvise run --plan "
			 "%s/plan.json -- PROGRAM' applies the advice without a rebuild", changes,
			 changes == 1 ? "" : "s",
			 o->source_root ? "" : "; where the sources were not readable, pass "
			 "--source-root", o->dir);
}

/* The patch and sources.json made from the sources as they are now. */
static int make_patch(const struct source_apply_options *o, struct source_apply *res,
		      size_t *lines)
{
	size_t n = source_patch_write(&res->in, &res->patch);
	int ret;

	if (lines && !n)
		return 0;
	if (lines)
		*lines = n;
	sources_file_release(&res->sources);
	source_patch_sources(&res->in, &res->sources);
	if (o->dry_run)
		return 0;
	ret = write_file_atomic(res->patch_path, res->patch.buf, res->patch.len);
	return ret ? ret : sources_file_write(&res->sources, res->sources_path);
}

static int read_patch(const struct source_apply_options *o, struct source_apply *res)
{
	int ret;

	if (!exists(res->patch_path) || !exists(res->sources_path)) {
		/* Made from the capture and the sources as they are now; a dry
		 * run keeps it in memory. */
		ret = make_patch(o, res, NULL);
		if (ret)
			return ret;
		res->made = SOURCE_APPLY_MADE;
		res->name = o->dry_run ? xstrdup("the patch made from the capture") :
			    xasprintf("'%s'", res->patch_path);
		return 0;
	}
	ret = sources_file_load(&res->sources, res->sources_path);
	if (ret)
		return ret;
	ret = strbuf_read_file(&res->patch, res->patch_path, 0);
	if (ret)
		return ret;
	res->name = xasprintf("'%s'", res->patch_path);
	if (res->patch.len)
		return 0;
	/* The capture could not read the sources, or rewrote nothing there:
	 * make the patch from the sources as they are now (--source-root). */
	ret = make_patch(o, res, &res->remade_lines);
	if (!ret && res->remade_lines)
		res->made = SOURCE_APPLY_REMADE;
	return ret;
}

int source_apply_prepare(const struct source_apply_options *o, struct source_apply *res)
{
	struct report_input_options iopt = { o->source_root, o->python };
	struct stat st;
	size_t i;
	int ret;

	memset(res, 0, sizeof(*res));
	strbuf_init(&res->patch, 0);
	unified_diff_init(&res->diff);
	res->patch_path = capture_layout_file(o->dir, CAPTURE_LAYOUT_SOURCE_PATCH);
	res->sources_path = capture_layout_file(o->dir, CAPTURE_LAYOUT_SOURCES);
	/* capture.json (and its PTX and plan) first: a corrupt capture is
	 * refused before anything is applied or written. */
	ret = report_input_load(&res->in, o->dir, &iopt);
	if (!ret)
		ret = report_check_input(&res->in);
	if (!ret)
		ret = read_patch(o, res);
	if (ret)
		return ret;
	/* An empty patch is what profile writes when no load could be
	 * rewritten; anything else is parsed once, strictly, and what parses
	 * is what is checked and applied. */
	if (!res->patch.len)
		return nothing_rewritten(o, res);
	ret = unified_diff_parse(&res->diff, res->patch.buf, res->patch.len, res->name);
	if (ret) {
		char *why = xstrdup(error_message());

		ret = error_set(ret, "%s; re-write it with 'cacheadvise report %s --all'", why,
				o->dir);
		free(why);
		return ret;
	}
	res->root = o->source_root ? o->source_root : res->sources.read_from;
	if (!res->root)
		res->root = res->sources.root;
	if (!res->root)
		return error_set(CA_E_INPUT, "'%s' records no source root: pass --source-root",
				 res->sources_path);
	if (stat(res->root, &st) || !S_ISDIR(st.st_mode))
		return error_set(CA_E_INPUT, "the source root '%s' is not a directory: pass "
				 "--source-root with the directory the sources are in", res->root);
	ret = source_apply_check_files(&res->diff, &res->sources, res->name, res->sources_path);
	for (i = 0; !ret && i < res->diff.nr_files; i++)
		ret = check_no_link(res->root, res->diff.files[i].path);
	if (ret)
		return ret;
	ret = source_patch_check_sources(&res->sources, res->sources_path, res->root);
	if (ret == 1) {
		res->state = SOURCE_APPLY_ALREADY;
		return 0;
	}
	for (i = 0; !ret && !o->dry_run && i < res->diff.nr_files; i++)
		ret = check_writable(res->root, res->diff.files[i].path);
	return ret;
}

void source_apply_release(struct source_apply *res)
{
	size_t i;

	for (i = 0; i < res->nr_skips; i++)
		free(res->skips[i].label);
	free(res->skips);
	strbuf_release(&res->patch);
	unified_diff_release(&res->diff);
	sources_file_release(&res->sources);
	report_input_release(&res->in);
	free(res->name);
	free(res->patch_path);
	free(res->sources_path);
}

/* ---- applying: every file or none ------------------------------------ */

/* One file of the patch: its contents before, and after until renamed. */
struct staged {
	char *path;                 /* root/FILE */
	struct strbuf old;          /* as read */
	mode_t mode;
	char *tmp;                  /* the new contents, beside it; NULL once renamed */
};

/* path's contents, read not through a link, into sb; *mode its permissions. */
static int read_source(const char *path, struct strbuf *sb, mode_t *mode)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), ret = 0;
	struct stat st;
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return error_set(CA_E_INPUT, errno == ELOOP ? "'%s' is a symbolic link: apply "
				 "writes no file through a link" : "cannot read '%s': %s", path,
				 strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = error_set(CA_E_INPUT, "'%s' is not a regular file: the source patch changes "
				"only regular files", path);
		goto out;
	}
	if ((unsigned long long)st.st_size > INPUT_MAX_TEXT) {
		ret = error_set(CA_E_INPUT, "'%s' is larger than %zu MiB: not a source file",
				path, INPUT_MAX_TEXT >> 20);
		goto out;
	}
	*mode = st.st_mode & 07777;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = error_set(CA_E_INPUT, "cannot read '%s': %s", path, strerror(errno));
			goto out;
		}
		if (sb->len + (size_t)n > INPUT_MAX_TEXT) {
			ret = error_set(CA_E_INPUT, "'%s' is larger than %zu MiB: not a source file",
					path, INPUT_MAX_TEXT >> 20);
			goto out;
		}
		strbuf_add(sb, buf, (size_t)n);
	}
out:
	close(fd);
	return ret;
}

/*
 * Writes data to a new file beside path (mkstemp: a name nobody had, never
 * a link) with path's permissions, synced; *tmp gets its name.
 */
static int stage(const char *path, const char *data, size_t len, mode_t mode, char **tmp)
{
	const char *slash = strrchr(path, '/');
	char *name = xasprintf("%.*s/.%s.cacheadvise-XXXXXX", (int)(slash - path), path, slash + 1);
	int fd = mkstemp(name), ret = 0;

	if (fd < 0) {
		ret = error_set(CA_E_IO, "cannot create a temporary file beside '%s': %s", path,
				strerror(errno));
		free(name);
		return ret;
	}
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = error_set(CA_E_IO, "cannot write '%s': %s", name,
					n < 0 ? strerror(errno) : "nothing written");
			break;
		}
		data += n;
		len -= (size_t)n;
	}
	if (!ret && (fchmod(fd, mode) || fsync(fd)))
		ret = error_set(CA_E_IO, "cannot write '%s': %s", name, strerror(errno));
	if (close(fd) && !ret)
		ret = error_set(CA_E_IO, "cannot write '%s': %s", name, strerror(errno));
	if (ret) {
		unlink(name);
		free(name);
		return ret;
	}
	*tmp = name;
	return 0;
}

/* Puts back the old contents of the first n files, already renamed.
 * Returns how many could not be put back. */
static size_t roll_back(struct staged *s, size_t n)
{
	size_t i, failed = 0;

	for (i = 0; i < n; i++) {
		char *tmp = NULL;

		if (stage(s[i].path, s[i].old.buf, s[i].old.len, s[i].mode, &tmp)) {
			failed++;
		} else if (rename(tmp, s[i].path)) {
			unlink(tmp);
			failed++;
		}
		free(tmp);
	}
	error_clear();
	return failed;
}

int source_apply_write(const struct source_apply *res, int dry_run)
{
	const struct unified_diff *diff = &res->diff;
	size_t n = diff->nr_files, i;
	struct staged *s = xcalloc(n + 1, sizeof(*s));
	struct strbuf after = STRBUF_INIT;
	char hex[65];
	int ret = 0;

	for (i = 0; i < n; i++)
		strbuf_init(&s[i].old, 0);
	for (i = 0; !ret && i < n; i++) {
		const struct unified_diff_file *f = &diff->files[i];
		const struct sources_file_entry *e = sources_file_find(&res->sources, f->path);

		s[i].path = xasprintf("%s/%s", res->root, f->path);
		/* the guard passed; checked again on what is read now */
		if (!e || !e->patched) {
			ret = error_set(CA_E_INTERNAL, "'%s' is not a file of the advice", s[i].path);
			break;
		}
		ret = check_no_link(res->root, f->path);
		if (!ret)
			ret = read_source(s[i].path, &s[i].old, &s[i].mode);
		if (ret)
			break;
		digest_sha256_hex(s[i].old.buf, s[i].old.len, hex);
		if (strcmp(hex, e->sha256)) {
			ret = error_set(CA_E_INPUT, "'%s' changed since the capture (its SHA-256 "
					"differs): the patch's line numbers may no longer fit; rebuild "
					"and run cacheadvise profile again", s[i].path);
			break;
		}
		strbuf_reset(&after);
		ret = unified_diff_apply(f, s[i].old.buf, s[i].old.len, &after, s[i].path);
		if (ret) {
			ret = error_prefix(ret, "%s does not apply", res->name);
			break;
		}
		digest_sha256_hex(after.buf, after.len, hex);
		if (e->patched_sha256 && strcmp(hex, e->patched_sha256)) {
			ret = error_set(CA_E_INPUT, "%s does not give '%s' as '%s' records it once "
					"patched (\"patched_sha256\"): the patch and sources.json do not "
					"belong together; re-write them with 'cacheadvise report DIR "
					"--all'", res->name, s[i].path, res->sources_path);
			break;
		}
		if (!dry_run)
			ret = stage(s[i].path, after.buf, after.len, s[i].mode, &s[i].tmp);
	}
	/* every file is written beside its own: now all are renamed, or none */
	for (i = 0; !ret && !dry_run && i < n; i++) {
		if (rename(s[i].tmp, s[i].path)) {
			int err = errno;
			size_t left = roll_back(s, i);

			ret = error_set(CA_E_IO, "cannot rename '%s' to '%s': %s; %s", s[i].tmp,
					s[i].path, strerror(err), !i ? "no file was changed" :
					left ? "some files already changed could not be put back: "
					"restore them from version control" :
					"the files already changed were put back");
			break;
		}
		free(s[i].tmp);
		s[i].tmp = NULL;
	}
	for (i = 0; i < n; i++) {
		if (s[i].tmp) {
			unlink(s[i].tmp);
			free(s[i].tmp);
		}
		free(s[i].path);
		strbuf_release(&s[i].old);
	}
	free(s);
	strbuf_release(&after);
	return ret;
}
