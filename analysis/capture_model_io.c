/*
 * The capture model's reading and writing (analysis/capture_model_internal.h):
 * the reader's typed getters, the writer's puts, the sections as written.
 */
#include "analysis/capture_model_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/xalloc.h"

json_t *capture_section_json(const struct capture_section *sec)
{
	return sec && !json_is_null(JS(sec)) ? JS(sec) : NULL;
}

json_t *capture_members_json(const struct capture_section *sec, const char *const *keys)
{
	json_t *out = json_object(), *v;
	size_t i;

	for (i = 0; keys[i]; i++) {
		v = sec && json_is_object(JS(sec)) ? json_object_get(JS(sec), keys[i]) : NULL;
		json_object_set_new(out, keys[i], v ? json_deep_copy(v) : json_null());
	}
	return out;
}

int capture_fail(const struct rd *r, const char *path, const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_set(CA_E_INPUT, "capture '%s': %s%s%s: %s", r->name, path,
			 *path && key ? "." : "", key ? key : "", msg);
}

/* A member, or NULL when absent or null. */
json_t *capture_member(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return v && !json_is_null(v) ? v : NULL;
}

int capture_rd_str(const struct rd *r, json_t *o, const char *path, const char *key,
		   char **out, int required)
{
	json_t *v = capture_member(o, key);

	*out = NULL;
	if (!v)
		return required ? capture_fail(r, path, key, "missing: a string is required") : 0;
	if (!json_is_string(v))
		return capture_fail(r, path, key, "not a string");
	*out = xstrdup(json_string_value(v));
	return 0;
}

int capture_check_num(const struct rd *r, const char *path, const char *key, double d,
		      enum num_kind kind)
{
	if (!isfinite(d))
		return capture_fail(r, path, key, "not a finite number");
	if (kind == NUM_COUNT && d < 0)
		return capture_fail(r, path, key, "%g is not a count: counts are non-negative", d);
	if (kind == NUM_POSITIVE && !(d > 0))
		return capture_fail(r, path, key, "%g is not a size: sizes are positive", d);
	if (kind != NUM_FINITE && d > CAPTURE_COUNT_MAX)
		return capture_fail(r, path, key, "%g is out of range: at most %.0f is accepted", d,
				    CAPTURE_COUNT_MAX);
	return 0;
}

/* A number, NAN when absent or null. */
int capture_rd_num(const struct rd *r, json_t *o, const char *path, const char *key,
		   double *out, enum num_kind kind)
{
	json_t *v = capture_member(o, key);

	*out = NAN;
	if (!v)
		return 0;
	if (!json_is_number(v))
		return capture_fail(r, path, key, "not a number");
	*out = json_number_value(v);
	return capture_check_num(r, path, key, *out, kind);
}

/* An integer in [lo, hi]; `unknown` when absent or null. */
int capture_rd_int(const struct rd *r, json_t *o, const char *path, const char *key,
		   long long *out, long long lo, long long hi, long long unknown)
{
	json_t *v = capture_member(o, key);

	*out = unknown;
	if (!v)
		return 0;
	if (!json_is_integer(v))
		return capture_fail(r, path, key, "not an integer");
	*out = json_integer_value(v);
	if (*out < lo || *out > hi)
		return capture_fail(r, path, key, "%lld is out of range [%lld, %lld]", *out, lo, hi);
	return 0;
}

int capture_rd_intv(const struct rd *r, json_t *o, const char *path, const char *key,
		    int *out, long long lo, long long hi, int unknown)
{
	long long v;
	int ret = capture_rd_int(r, o, path, key, &v, lo, hi, unknown);

	*out = (int)v;
	return ret;
}

/* A boolean: 1, 0, or -1 when absent or null. */
int capture_rd_bool(const struct rd *r, json_t *o, const char *path, const char *key, int *out)
{
	json_t *v = capture_member(o, key);

	*out = -1;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return capture_fail(r, path, key, "not true or false");
	*out = json_is_true(v);
	return 0;
}

/* An array member: *arr is NULL when absent or null. */
int capture_rd_array(const struct rd *r, json_t *o, const char *path, const char *key,
		     json_t **arr)
{
	json_t *v = capture_member(o, key);

	*arr = v;
	if (!v)
		return 0;
	if (!json_is_array(v))
		return capture_fail(r, path, key, "not an array");
	if (json_array_size(v) > CAPTURE_LIST_MAX)
		return capture_fail(r, path, key, "%zu items: at most %d are accepted",
				    json_array_size(v), CAPTURE_LIST_MAX);
	return 0;
}

int capture_rd_strings(const struct rd *r, json_t *o, const char *path, const char *key,
		       char ***out, size_t *nr, int *has)
{
	json_t *arr, *v;
	size_t i;
	int ret;

	*out = NULL;
	*nr = 0;
	if (has)
		*has = json_object_get(o, key) != NULL;
	if ((ret = capture_rd_array(r, o, path, key, &arr)) || !arr)
		return ret;
	*out = xcalloc(json_array_size(arr) + 1, sizeof(**out));
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v))
			return capture_fail(r, path, key, "item %zu is not a string", i);
		(*out)[(*nr)++] = xstrdup(json_string_value(v));
	}
	return 0;
}

int capture_rd_object(const struct rd *r, json_t *v, const char *path)
{
	return json_is_object(v) ? 0 : capture_fail(r, path, NULL, "not an object");
}

/* An array of integers in [lo, hi]; *out NULL (and *has 0) when absent or null. */
int capture_rd_ints(const struct rd *r, json_t *o, const char *path, const char *key,
		    long long **out, size_t *nr, int *has, long long lo, long long hi)
{
	json_t *arr, *v;
	size_t i;
	int ret;

	*out = NULL;
	*nr = 0;
	if (has)
		*has = 0;
	if ((ret = capture_rd_array(r, o, path, key, &arr)) || !arr)
		return ret;
	if (has)
		*has = 1;
	*out = xcalloc(json_array_size(arr) + 1, sizeof(**out));
	json_array_foreach(arr, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
			return capture_fail(r, path, key, "item %zu is not an integer in [%lld, %lld]", i,
					    lo, hi);
		(*out)[(*nr)++] = json_integer_value(v);
	}
	return 0;
}

/* The object to write into: a copy of the source, or a new object. */
json_t *capture_start(const struct capture_section *source)
{
	return source && json_is_object(JS(source)) ? json_copy(JS(source)) : json_object();
}

/* Writes key when the value is known or the source had the key. */
static void put(json_t *o, const char *key, json_t *v, int known)
{
	if (known)
		json_object_set_new(o, key, v);
	else {
		json_decref(v);
		if (json_object_get(o, key))
			json_object_set_new(o, key, json_null());
	}
}

void capture_put_str(json_t *o, const char *key, const char *s)
{
	put(o, key, s ? json_string(s) : json_null(), s != NULL);
}

/* A number as the source wrote it (an integer stays an integer). */
void capture_put_num(json_t *o, const char *key, double d)
{
	json_t *old = json_object_get(o, key);

	if (isnan(d)) {
		put(o, key, json_null(), 0);
		return;
	}
	if (json_is_integer(old) && d == floor(d) && fabs(d) <= CAPTURE_COUNT_MAX)
		json_object_set_new(o, key, json_integer((json_int_t)d));
	else
		json_object_set_new(o, key, json_real(d));
}

void capture_put_int(json_t *o, const char *key, long long v, long long unknown)
{
	put(o, key, json_integer(v), v != unknown);
}

void capture_put_bool(json_t *o, const char *key, int b)
{
	put(o, key, json_boolean(b > 0), b >= 0);
}

json_t *capture_strings_json(char **s, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(arr, json_string(s[i]));
	return arr;
}

void capture_free_strings(char **s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i]);
	free(s);
}
