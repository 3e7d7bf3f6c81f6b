#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "emitters/report.h"
#include "emitters/source_apply.h"
#include "emitters/source_patch.h"

static int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/*
 * The files a patch changes ("+++ b/FILE" lines), each passed to fn until
 * it returns non-zero. Returns the number of files, or fn's result.
 */
static int for_each_patched_file(const struct strbuf *patch,
				 int (*fn)(const char *root, const char *file), const char *root)
{
	const char *line = patch->buf;
	int n = 0, ret;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (len > 6 && !strncmp(line, "+++ b/", 6)) {
			char *file = xstrndup(line + 6, len - 6);
			ret = fn ? fn(root, file) : 0;
			free(file);
			if (ret)
				return ret;
			n++;
		}
		line = end ? end + 1 : NULL;
	}
	return n;
}

static int starts(const char *line, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !strncmp(line, prefix, n);
}

/*
 * Every file the patch names must be one sources.json records as patched,
 * changed in place: "--- a/F" then "+++ b/F" with the same F. A patch that
 * creates, deletes, renames or changes the mode of a file, or reaches one
 * the capture never read, is refused whole (issue 25): `apply` changes
 * only the files it checked.
 */
static int check_patch_files(const struct strbuf *patch, const struct sources_file *sf,
			     const char *patch_name, const char *sources_name)
{
	static const char *const refused[] = {
		"new file mode", "deleted file mode", "rename from", "rename to", "copy from",
		"copy to", "old mode", "new mode", "GIT binary patch", "Binary files",
	};
	const char *line = patch->buf, *old = NULL;
	size_t old_len = 0, i;
	long old_left = 0, new_left = 0;    /* lines of the current hunk still to come */

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (old_left > 0 || new_left > 0) {
			/* a hunk's body: "--- x" here is a removed line "-- x" */
			if (line[0] == ' ' || line[0] == '-')
				old_left--;
			if (line[0] == ' ' || line[0] == '+')
				new_left--;
			line = end ? end + 1 : NULL;
			continue;
		}
		if (starts(line, len, "@@ -")) {
			long a = 1, b = 1;
			const char *p = line + 4, *q;

			strtol(p, (char **)&q, 10);
			if (*q == ',')
				a = strtol(q + 1, (char **)&q, 10);
			q = strstr(q, " +");
			if (q) {
				strtol(q + 2, (char **)&q, 10);
				if (*q == ',')
					b = strtol(q + 1, NULL, 10);
			}
			old_left = a;
			new_left = b;
			line = end ? end + 1 : NULL;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(refused); i++)
			if (starts(line, len, refused[i]))
				return error_set(CA_E_INPUT, "%s: '%.*s': the patch may only change the "
						 "recorded source files in place; re-write it with "
						 "'cacheadvise report DIR --all'", patch_name, (int)len,
						 line);
		if (starts(line, len, "--- ")) {
			old = line + 4;
			old_len = len - 4;
		} else if (starts(line, len, "+++ ") && old) {
			const char *new = line + 4;
			size_t new_len = len - 4;
			const struct sources_file_entry *e;
			char *file;

			if (old_len < 2 || strncmp(old, "a/", 2) || new_len < 2 ||
			    strncmp(new, "b/", 2) || old_len != new_len ||
			    strncmp(old + 2, new + 2, new_len - 2))
				return error_set(CA_E_INPUT, "%s: '--- %.*s' / '+++ %.*s': the patch may "
						 "only change a file in place (a/FILE to b/FILE); it "
						 "does not create, delete or rename files", patch_name,
						 (int)old_len, old, (int)new_len, new);
			file = xstrndup(new + 2, new_len - 2);
			e = sources_file_find(sf, file);
			if (!e || !e->patched) {
				int ret = error_set(CA_E_INPUT, "%s changes '%s', which %s does not "
						    "record as a file of the advice: refusing the whole "
						    "patch; re-write it with 'cacheadvise report DIR "
						    "--all'", patch_name, file, sources_name);
				free(file);
				return ret;
			}
			free(file);
			old = NULL;
		} else {
			old = NULL;
		}
		line = end ? end + 1 : NULL;
	}
	return 0;
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

/*
 * The patch is empty. Where the plan changes no load there is nothing to
 * apply (0, SOURCE_APPLY_NO_CHANGES); otherwise every load the plan
 * changes goes to res->skips with why the patch leaves it, and the answer
 * is CA_E_INPUT: the advice cannot reach the sources this way.
 */
static int nothing_rewritten(const struct source_apply_options *o, struct source_apply *res)
{
	const struct report_input *in = &res->in;
	size_t i, j, changes = 0;

	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];

		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];
			struct source_apply_skip *s;

			if (!l->changes)
				continue;
			changes++;
			res->skips = xrealloc(res->skips, (res->nr_skips + 1) * sizeof(*res->skips));
			s = &res->skips[res->nr_skips++];
			s->label = report_kernel_label(k);
			s->ordinal = l->ordinal;
			s->path = l->file ? (l->hint.path ? l->hint.path : l->file) : NULL;
			s->line = l->line;
			s->action = l->action ? l->action : "?";
			s->reason = l->hint.message ? l->hint.message : "no reason recorded";
		}
	}
	if (!changes) {
		res->state = SOURCE_APPLY_NO_CHANGES;
		return 0;
	}
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
	int ret;

	memset(res, 0, sizeof(*res));
	strbuf_init(&res->patch, 0);
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
	 * rewritten; anything else must name the files it changes. */
	if (res->patch.len && for_each_patched_file(&res->patch, NULL, NULL) <= 0)
		return error_set(CA_E_INPUT, "'%s' is not a patch (no '+++ b/FILE' line): re-write "
				 "it with 'cacheadvise report %s --all'", res->patch_path, o->dir);
	if (!res->patch.len)
		return nothing_rewritten(o, res);
	res->root = o->source_root ? o->source_root : res->sources.read_from;
	if (!res->root)
		res->root = res->sources.root;
	if (!res->root)
		return error_set(CA_E_INPUT, "'%s' records no source root: pass --source-root",
				 res->sources_path);
	if (stat(res->root, &st) || !S_ISDIR(st.st_mode))
		return error_set(CA_E_INPUT, "the source root '%s' is not a directory: pass "
				 "--source-root with the directory the sources are in", res->root);
	ret = check_patch_files(&res->patch, &res->sources, res->name, res->sources_path);
	if (ret)
		return ret;
	ret = source_patch_check_sources(&res->sources, res->sources_path, res->root);
	if (ret == 1) {
		res->state = SOURCE_APPLY_ALREADY;
		return 0;
	}
	if (ret || o->dry_run)
		return ret;
	ret = for_each_patched_file(&res->patch, check_writable, res->root);
	return ret < 0 ? ret : 0;
}

void source_apply_release(struct source_apply *res)
{
	size_t i;

	for (i = 0; i < res->nr_skips; i++)
		free(res->skips[i].label);
	free(res->skips);
	strbuf_release(&res->patch);
	sources_file_release(&res->sources);
	report_input_release(&res->in);
	free(res->name);
	free(res->patch_path);
	free(res->sources_path);
}
