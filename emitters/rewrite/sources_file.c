/* sources.json's one reader and writer (emitters/rewrite/sources_file.h). */
#include "emitters/rewrite/sources_file.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"

void sources_file_init(struct sources_file *sf)
{
	memset(sf, 0, sizeof(*sf));
}

void sources_file_release(struct sources_file *sf)
{
	size_t i;

	for (i = 0; i < sf->nr_files; i++) {
		free(sf->files[i].path);
		free(sf->files[i].sha256);
		free(sf->files[i].patched_sha256);
	}
	free(sf->files);
	for (i = 0; i < sf->nr_left_out; i++) {
		free(sf->left_out[i].kernel);
		free(sf->left_out[i].reason);
	}
	free(sf->left_out);
	free(sf->root);
	free(sf->read_from);
	memset(sf, 0, sizeof(*sf));
}

void sources_file_add(struct sources_file *sf, const char *path, const char *sha256,
		      const char *patched_sha256, long rewritten_lines)
{
	struct sources_file_entry *e;

	sf->files = xrealloc(sf->files, (sf->nr_files + 1) * sizeof(*sf->files));
	e = &sf->files[sf->nr_files++];
	e->path = xstrdup(path);
	e->sha256 = xstrdup(sha256);
	e->patched = patched_sha256 != NULL;
	e->patched_sha256 = patched_sha256 ? xstrdup(patched_sha256) : NULL;
	e->rewritten_lines = rewritten_lines;
}

void sources_file_add_left_out(struct sources_file *sf, const char *kernel, unsigned ordinal,
			       const char *reason)
{
	struct sources_file_left_out *e;

	sf->left_out = xrealloc(sf->left_out, (sf->nr_left_out + 1) * sizeof(*sf->left_out));
	e = &sf->left_out[sf->nr_left_out++];
	e->kernel = xstrdup(kernel);
	e->ordinal = ordinal;
	e->reason = xstrdup(reason);
}

const char *sources_file_left_out_reason(const struct sources_file *sf, const char *kernel,
					 unsigned ordinal)
{
	size_t i;

	for (i = 0; i < sf->nr_left_out; i++)
		if (sf->left_out[i].ordinal == ordinal && !strcmp(sf->left_out[i].kernel, kernel))
			return sf->left_out[i].reason;
	return NULL;
}

const struct sources_file_entry *sources_file_find(const struct sources_file *sf,
						   const char *path)
{
	size_t i;

	for (i = 0; i < sf->nr_files; i++)
		if (!strcmp(sf->files[i].path, path))
			return &sf->files[i];
	return NULL;
}

static int is_sha256(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == 64;
}

/* A string member, or NULL when absent or null; *bad set when not a string. */
static const char *str(json_t *o, const char *key, int *bad)
{
	json_t *v = json_object_get(o, key);

	if (v && !json_is_null(v) && !json_is_string(v))
		*bad = 1;
	return json_string_value(v);
}

static int from_json(struct sources_file *sf, json_t *doc, const char *name)
{
	json_t *files, *f;
	const char *s;
	int bad = 0, ret;
	size_t i;

	if ((ret = json_check_schema(doc, name, SOURCES_SCHEMA)))
		return ret;
	s = str(doc, "root", &bad);
	if (bad || (s && s[0] != '/'))
		return error_set(CA_E_INPUT, "'%s': \"root\" is not an absolute path", name);
	sf->root = s ? xstrdup(s) : NULL;
	s = str(doc, "read_from", &bad);
	if (bad)
		return error_set(CA_E_INPUT, "'%s': \"read_from\" is not a string", name);
	sf->read_from = s ? xstrdup(s) : NULL;
	files = json_object_get(doc, "files");
	if (!json_is_array(files))
		return error_set(CA_E_INPUT, "'%s': \"files\" is missing or not a list", name);
	json_array_foreach(files, i, f) {
		const char *path = str(f, "path", &bad), *sha = str(f, "sha256", &bad);
		const char *after = str(f, "patched_sha256", &bad);
		json_t *patched = json_object_get(f, "patched"), *lines;

		if (bad || !json_is_object(f) || !path || !sha)
			return error_set(CA_E_INPUT, "'%s': files[%zu] needs \"path\" and \"sha256\"",
					 name, i);
		if (!*path || path[0] == '/' || !strcmp(path, "..") || !strncmp(path, "../", 3) ||
		    strstr(path, "/../") || (strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/..")))
			return error_set(CA_E_INPUT, "'%s': files[%zu].path '%s' is not relative to "
					 "the source root", name, i, path);
		if (sources_file_find(sf, path))
			return error_set(CA_E_INPUT, "'%s': files[%zu].path '%s' is listed twice",
					 name, i, path);
		if (!is_sha256(sha) || (after && !is_sha256(after)))
			return error_set(CA_E_INPUT, "'%s': files[%zu]: a SHA-256 is 64 lowercase hex "
					 "digits", name, i);
		if (patched && !json_is_boolean(patched))
			return error_set(CA_E_INPUT, "'%s': files[%zu].patched is not true or false",
					 name, i);
		lines = json_object_get(f, "rewritten_lines");
		if (lines && !json_is_null(lines) &&
		    (!json_is_integer(lines) || json_integer_value(lines) < 0))
			return error_set(CA_E_INPUT, "'%s': files[%zu].rewritten_lines is not a count",
					 name, i);
		sources_file_add(sf, path, sha, NULL, 0);
		sf->files[sf->nr_files - 1].patched = json_is_true(patched);
		sf->files[sf->nr_files - 1].patched_sha256 = after ? xstrdup(after) : NULL;
		sf->files[sf->nr_files - 1].rewritten_lines =
			json_is_integer(lines) ? (long)json_integer_value(lines) : 0;
	}
	files = json_object_get(doc, "left_out");
	if (files && !json_is_array(files))
		return error_set(CA_E_INPUT, "'%s': \"left_out\" is not a list", name);
	json_array_foreach(files, i, f) {
		int bad = 0;
		const char *kernel = str(f, "kernel", &bad), *reason = str(f, "reason", &bad);
		json_t *ord = json_object_get(f, "ordinal");

		if (bad || !kernel || !reason || !json_is_integer(ord) ||
		    json_integer_value(ord) < 0 || json_integer_value(ord) > 0xffffffffLL)
			return error_set(CA_E_INPUT, "'%s': left_out[%zu] needs \"kernel\", a "
					 "non-negative \"ordinal\" and \"reason\"", name, i);
		sources_file_add_left_out(sf, kernel, (unsigned)json_integer_value(ord), reason);
	}
	return 0;
}

int sources_file_load(struct sources_file *sf, const char *path)
{
	json_t *doc = json_file_load(path);
	int ret;

	if (!doc)
		return CA_E_INPUT;
	ret = from_json(sf, doc, path);
	json_decref(doc);
	return ret;
}

int sources_file_write(const struct sources_file *sf, const char *path)
{
	json_t *doc = json_object(), *files = json_array();
	size_t i;
	int ret;

	json_object_set_new(doc, "schema", json_string(SOURCES_SCHEMA));
	json_object_set_new(doc, "root", sf->root ? json_string(sf->root) : json_null());
	json_object_set_new(doc, "read_from", sf->read_from ? json_string(sf->read_from) :
			    json_null());
	for (i = 0; i < sf->nr_files; i++) {
		const struct sources_file_entry *e = &sf->files[i];
		json_t *f = json_object();

		json_object_set_new(f, "path", json_string(e->path));
		json_object_set_new(f, "sha256", json_string(e->sha256));
		json_object_set_new(f, "patched", json_boolean(e->patched));
		if (e->patched_sha256) {
			json_object_set_new(f, "patched_sha256", json_string(e->patched_sha256));
			json_object_set_new(f, "rewritten_lines", json_integer(e->rewritten_lines));
		}
		json_array_append_new(files, f);
	}
	json_object_set_new(doc, "files", files);
	if (sf->nr_left_out) {
		json_t *lo = json_array();

		for (i = 0; i < sf->nr_left_out; i++)
			json_array_append_new(lo, json_pack("{s:s, s:I, s:s}", "kernel",
				sf->left_out[i].kernel, "ordinal", (json_int_t)sf->left_out[i].ordinal,
				"reason", sf->left_out[i].reason));
		json_object_set_new(doc, "left_out", lo);
	}
	ret = json_file_write(path, doc);
	json_decref(doc);
	return ret;
}
