#include "base/json_file.h"

#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/input_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

json_t *json_file_load(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	json_error_t jerr;
	json_t *doc;

	if (input_file_read(&sb, path, INPUT_MAX_JSON))
		return NULL;
	doc = json_loadb(sb.buf, sb.len, JSON_REJECT_DUPLICATES, &jerr);
	strbuf_release(&sb);
	if (!doc) {
		if (jerr.line <= 0)
			error_set(CA_E_INPUT, "cannot read '%s': %s", path, jerr.text);
		else
			error_set(CA_E_INPUT, "invalid JSON in '%s' at line %d column %d: %s",
				  path, jerr.line, jerr.column, jerr.text);
	}
	return doc;
}

int json_check_schema(json_t *doc, const char *path, const char *expected_schema)
{
	const char *schema;
	const char *slash = strrchr(expected_schema, '/');
	size_t family = slash ? (size_t)(slash - expected_schema) : strlen(expected_schema);

	if (!json_is_object(doc))
		return error_set(CA_E_INPUT, "'%s' is not a JSON object", path);
	if (!expected_schema)
		return 0;
	schema = json_string_value(json_object_get(doc, "schema"));
	if (!schema)
		return error_set(CA_E_INPUT, "'%s' has no \"schema\" field: expected \"%s\"",
				 path, expected_schema);
	if (!strcmp(schema, expected_schema))
		return 0;
	if (!strncmp(schema, expected_schema, family) && schema[family] == '/' &&
	    atoi(schema + family + 1) > atoi(expected_schema + family + 1))
		return error_set(CA_E_INPUT,
				 "'%s' has schema \"%s\", newer than this cacheadvise reads (\"%s\"): "
				 "upgrade cacheadvise", path, schema, expected_schema);
	return error_set(CA_E_INPUT, "'%s' has schema \"%s\": expected \"%s\"", path,
			 schema, expected_schema);
}

char *json_to_string(json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	char *copy;

	if (!s)
		return xstrdup("null");
	copy = xstrdup(s);
	free(s);
	return copy;
}

int json_file_write(const char *path, json_t *doc)
{
	char *s = json_to_string(doc);
	size_t len = strlen(s);
	int ret;

	s = xrealloc(s, len + 2);
	s[len] = '\n';
	s[len + 1] = '\0';
	ret = write_file_atomic(path, s, len + 1);
	free(s);
	return ret;
}
