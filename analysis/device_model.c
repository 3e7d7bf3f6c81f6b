#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/atomic_file.h"
#include "analysis/device_model.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"

/*
 * The documented defaults (docs/device-json.md): NVIDIA's published figures
 * for the H100 SXM5 (CUDA programming guide, compute capability 9.0: 228 KB
 * of shared memory per SM, 227 KB per block, 2048 threads per SM; 50 MB of
 * L2; 128-byte lines of 32-byte sectors), and the L1 capacities the probe
 * measured on an H200, whose SMs are the H100's (bench/results/device.md):
 * 185 KB at the default carve-out, 21 KB with the most shared memory. The
 * persisting-L2 limit and the latencies are unknown until probed.
 */
static const struct device_model defaults = {
	.source = DEVICE_MODEL_DEFAULTS,
	.sm_count = 132,
	.clock_khz = 1980000,
	.max_threads_per_sm = 2048,
	.l1_line_bytes = 128,
	.sector_bytes = 32,
	.l1_bytes = 189440,
	.l1_bytes_min = 21504,
	.shared_per_sm = 228 * 1024,
	.shared_per_block_optin = 227 * 1024,
	.reserved_shared_per_block = 1024,
	.l2_bytes = 50ULL * 1024 * 1024,
	.persisting_l2_max_bytes = 0,
	.access_policy_max_window_bytes = 128ULL * 1024 * 1024,
	.lat_l1_hit = -1,
	.lat_readonly_hit = -1,
	.lat_l2_hit = -1,
	.lat_dram = -1,
};

void device_model_init(struct device_model *dm)
{
	*dm = defaults;
	dm->name = xstrdup("unknown GPU (documented defaults: H100 SXM5)");
	dm->cc = xstrdup("9.0");
}

void device_model_release(struct device_model *dm)
{
	free(dm->origin);
	free(dm->name);
	free(dm->uuid);
	free(dm->cc);
	free(dm->created);
	json_decref(dm->probe);
	memset(dm, 0, sizeof(*dm));
}

const char *device_model_source_name(enum device_model_source s)
{
	switch (s) {
	case DEVICE_MODEL_PROBE:
		return "probe";
	case DEVICE_MODEL_FILE:
		return "file";
	case DEVICE_MODEL_DEFAULTS:
		break;
	}
	return "defaults";
}

/* Field tables: one row per number, so reading and writing cannot drift. */
struct size_field {
	const char *key;
	size_t offset;
	int is_ull;              /* unsigned long long, else unsigned */
	int zero_ok;             /* 0 may be written (e.g. no persisting L2) */
};

#define SZ(key, member, zero_ok) \
	{ key, offsetof(struct device_model, member), \
	  sizeof(((struct device_model *)0)->member) == sizeof(unsigned long long), zero_ok }

static const struct size_field size_fields[] = {
	SZ("sm_count", sm_count, 0),
	SZ("clock_khz", clock_khz, 0),
	SZ("max_threads_per_sm", max_threads_per_sm, 0),
	SZ("l1_line_bytes", l1_line_bytes, 0),
	SZ("sector_bytes", sector_bytes, 0),
	SZ("l1_bytes", l1_bytes, 0),
	SZ("l1_bytes_min", l1_bytes_min, 0),
	SZ("l1_sets", l1_sets, 0),
	SZ("l1_ways", l1_ways, 0),
	SZ("readonly_bytes", readonly_bytes, 0),
	SZ("shared_per_sm", shared_per_sm, 0),
	SZ("shared_per_block_optin", shared_per_block_optin, 0),
	SZ("reserved_shared_per_block", reserved_shared_per_block, 1),
	SZ("l2_bytes", l2_bytes, 0),
	SZ("l2_bytes_measured", l2_bytes_measured, 0),
	SZ("persisting_l2_max_bytes", persisting_l2_max_bytes, 1),
	SZ("access_policy_max_window_bytes", access_policy_max_window_bytes, 1),
};

struct latency_field {
	const char *key;
	size_t offset;
};

static const struct latency_field latency_fields[] = {
	{ "l1_hit", offsetof(struct device_model, lat_l1_hit) },
	{ "readonly_hit", offsetof(struct device_model, lat_readonly_hit) },
	{ "l2_hit", offsetof(struct device_model, lat_l2_hit) },
	{ "dram", offsetof(struct device_model, lat_dram) },
};

static void set_size(struct device_model *dm, const struct size_field *f, unsigned long long v)
{
	char *p = (char *)dm + f->offset;

	if (f->is_ull)
		*(unsigned long long *)p = v;
	else
		*(unsigned *)p = (unsigned)v;
}

static unsigned long long get_size(const struct device_model *dm, const struct size_field *f)
{
	const char *p = (const char *)dm + f->offset;

	return f->is_ull ? *(const unsigned long long *)p : *(const unsigned *)p;
}

static int read_string(json_t *doc, const char *key, const char *name, char **out)
{
	json_t *v = json_object_get(doc, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return error_set(CA_E_INPUT, "device model '%s': \"%s\" must be a string", name, key);
	free(*out);
	*out = xstrdup(json_string_value(v));
	return 0;
}

static int is_valid_uuid(const char *uuid)
{
	const char *p;

	if (!uuid || !*uuid || strlen(uuid) > 64)
		return 0;
	for (p = uuid; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-'))
			return 0;
	return 1;
}

static int parse_into(struct device_model *dm, json_t *doc, const char *name)
{
	json_t *v, *lat;
	size_t i;
	int ret;

	if ((ret = json_check_schema(doc, name, DEVICE_MODEL_SCHEMA)))
		return ret;

	v = json_object_get(doc, "source");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return error_set(CA_E_INPUT, "device model '%s': \"source\" must be a string", name);
		dm->source = !strcmp(json_string_value(v), "probe") ? DEVICE_MODEL_PROBE
								      : DEVICE_MODEL_FILE;
	} else {
		dm->source = DEVICE_MODEL_FILE;
	}
	if ((ret = read_string(doc, "name", name, &dm->name)) ||
	    (ret = read_string(doc, "uuid", name, &dm->uuid)) ||
	    (ret = read_string(doc, "cc", name, &dm->cc)) ||
	    (ret = read_string(doc, "created", name, &dm->created)))
		return ret;
	if (dm->uuid && !is_valid_uuid(dm->uuid))
		return error_set(CA_E_INPUT, "device model '%s': \"uuid\" '%s' is not a GPU UUID",
				 name, dm->uuid);

	for (i = 0; i < ARRAY_SIZE(size_fields); i++) {
		const struct size_field *f = &size_fields[i];
		json_int_t n;

		v = json_object_get(doc, f->key);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_integer(v))
			return error_set(CA_E_INPUT, "device model '%s': \"%s\" must be an integer",
					 name, f->key);
		n = json_integer_value(v);
		if (n < 0 || (n == 0 && !f->zero_ok) ||
		    (!f->is_ull && (unsigned long long)n > 0xffffffffULL))
			return error_set(CA_E_INPUT, "device model '%s': \"%s\" is out of range (%lld)",
					 name, f->key, (long long)n);
		set_size(dm, f, (unsigned long long)n);
	}

	lat = json_object_get(doc, "latency_cycles");
	if (lat && !json_is_null(lat)) {
		if (!json_is_object(lat))
			return error_set(CA_E_INPUT, "device model '%s': \"latency_cycles\" must be an object",
					 name);
		for (i = 0; i < ARRAY_SIZE(latency_fields); i++) {
			double *d = (double *)((char *)dm + latency_fields[i].offset);

			v = json_object_get(lat, latency_fields[i].key);
			if (!v || json_is_null(v))
				continue;
			if (!json_is_number(v) || json_number_value(v) <= 0)
				return error_set(CA_E_INPUT,
						 "device model '%s': \"latency_cycles.%s\" must be a positive number",
						 name, latency_fields[i].key);
			*d = json_number_value(v);
		}
	}

	if (!dm->sector_bytes || !dm->l1_line_bytes || dm->l1_line_bytes % dm->sector_bytes)
		return error_set(CA_E_INPUT,
				 "device model '%s': sector size %u does not divide the line size %u",
				 name, dm->sector_bytes, dm->l1_line_bytes);

	v = json_object_get(doc, "probe");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v))
			return error_set(CA_E_INPUT, "device model '%s': \"probe\" must be an object", name);
		json_decref(dm->probe);
		dm->probe = json_deep_copy(v);
	}
	return 0;
}

static void copy_model(struct device_model *dst, const struct device_model *src)
{
	*dst = *src;
	dst->origin = src->origin ? xstrdup(src->origin) : NULL;
	dst->name = src->name ? xstrdup(src->name) : NULL;
	dst->uuid = src->uuid ? xstrdup(src->uuid) : NULL;
	dst->cc = src->cc ? xstrdup(src->cc) : NULL;
	dst->created = src->created ? xstrdup(src->created) : NULL;
	dst->probe = src->probe ? json_deep_copy(src->probe) : NULL;
}

int device_model_from_json(struct device_model *dm, json_t *doc, const char *name)
{
	struct device_model work;
	int ret;

	/* Parse into a copy so a bad document leaves dm as it was. */
	copy_model(&work, dm);
	ret = parse_into(&work, doc, name);
	if (ret) {
		device_model_release(&work);
		return ret;
	}
	device_model_release(dm);
	*dm = work;
	return 0;
}

static json_t *size_or_null(unsigned long long v, int zero_ok)
{
	if (!v && !zero_ok)
		return json_null();
	return json_integer((json_int_t)v);
}

static json_t *string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *device_model_to_json(const struct device_model *dm)
{
	json_t *doc = json_object(), *lat = json_object();
	size_t i;

	json_object_set_new(doc, "schema", json_string(DEVICE_MODEL_SCHEMA));
	json_object_set_new(doc, "source", json_string(device_model_source_name(dm->source)));
	json_object_set_new(doc, "created", string_or_null(dm->created));
	json_object_set_new(doc, "name", string_or_null(dm->name));
	json_object_set_new(doc, "uuid", string_or_null(dm->uuid));
	json_object_set_new(doc, "cc", string_or_null(dm->cc));
	for (i = 0; i < ARRAY_SIZE(size_fields); i++)
		json_object_set_new(doc, size_fields[i].key,
				    size_or_null(get_size(dm, &size_fields[i]), size_fields[i].zero_ok));
	for (i = 0; i < ARRAY_SIZE(latency_fields); i++) {
		double d = *(const double *)((const char *)dm + latency_fields[i].offset);

		json_object_set_new(lat, latency_fields[i].key, d > 0 ? json_real(d) : json_null());
	}
	json_object_set_new(doc, "latency_cycles", lat);
	if (dm->probe)
		json_object_set_new(doc, "probe", json_deep_copy(dm->probe));
	return doc;
}

int device_model_load_file(struct device_model *dm, const char *path)
{
	json_t *doc = json_file_load(path);
	int ret;

	if (!doc)
		return CA_E_INPUT;
	ret = device_model_from_json(dm, doc, path);
	json_decref(doc);
	if (ret)
		return ret;
	free(dm->origin);
	dm->origin = xstrdup(path);
	return 0;
}

int device_model_write_file(const struct device_model *dm, const char *path)
{
	json_t *doc = device_model_to_json(dm);
	int ret = json_file_write(path, doc);

	json_decref(doc);
	return ret;
}

char *device_model_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	/* The XDG base directory spec says relative paths are to be ignored. */
	if (xdg && xdg[0] == '/')
		return xasprintf("%s/cacheadvise", xdg);
	if (home && home[0])
		return xasprintf("%s/.cache/cacheadvise", home);
	error_set(CA_E_IO, "cannot find the cache folder: neither XDG_CACHE_HOME nor HOME is set");
	return NULL;
}

char *device_model_cache_path(const char *uuid)
{
	char *dir, *path;

	if (!is_valid_uuid(uuid)) {
		error_set(CA_E_INPUT, "GPU UUID '%s' cannot name a cache file", uuid ? uuid : "");
		return NULL;
	}
	dir = device_model_cache_dir();
	if (!dir)
		return NULL;
	path = xasprintf("%s/device-%s.json", dir, uuid);
	free(dir);
	return path;
}

int device_model_load_cached(struct device_model *dm, const char *uuid)
{
	struct device_model work;
	struct stat st;
	char *path = device_model_cache_path(uuid);
	int ret;

	if (!path)
		return CA_E_INPUT;
	if (stat(path, &st)) {
		ret = errno == ENOENT ? 0
				      : error_set(CA_E_INPUT, "cannot read cached probe result '%s': %s",
						  path, strerror(errno));
		free(path);
		return ret;
	}
	copy_model(&work, dm);
	ret = device_model_load_file(&work, path);
	if (!ret && (!work.uuid || strcmp(work.uuid, uuid)))
		ret = error_set(CA_E_INPUT, "cached probe result '%s' was measured on GPU '%s', not '%s'",
				path, work.uuid ? work.uuid : "(none)", uuid);
	if (ret) {
		char *msg = xstrdup(error_message());

		ret = error_set(ret, "%s; run 'cacheadvise probe' to measure this GPU again", msg);
		free(msg);
		device_model_release(&work);
		free(path);
		return ret;
	}
	work.source = DEVICE_MODEL_PROBE;
	device_model_release(dm);
	*dm = work;
	free(path);
	return 1;
}

int device_model_save_cached(const struct device_model *dm)
{
	char *dir, *path;
	int ret;

	path = device_model_cache_path(dm->uuid);
	if (!path)
		return dm->uuid ? CA_E_INPUT
				: error_set(CA_E_INPUT, "cannot cache a device model without a GPU UUID");
	dir = device_model_cache_dir();
	ret = dir ? mkdir_p(dir) : CA_E_IO;
	if (!ret)
		ret = device_model_write_file(dm, path);
	free(dir);
	free(path);
	return ret;
}

int device_model_resolve(struct device_model *dm, const char *device_file, const char *uuid)
{
	int ret;

	if (device_file) {
		ret = device_model_load_file(dm, device_file);
		/* --device FILE is the user's choice, even when a probe wrote it */
		if (!ret)
			dm->source = DEVICE_MODEL_FILE;
		return ret;
	}
	if (uuid && *uuid) {
		ret = device_model_load_cached(dm, uuid);
		if (ret < 0)
			return ret;
		if (ret == 1)
			return 0;
	}
	device_model_release(dm);
	device_model_init(dm);
	return 0;
}

double device_model_probe_seconds(const struct device_model *dm)
{
	json_t *v = dm->probe ? json_object_get(dm->probe, "seconds") : NULL;

	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *device_model_probe_note(const struct device_model *dm, size_t i)
{
	json_t *notes = dm->probe ? json_object_get(dm->probe, "notes") : NULL;

	return json_is_array(notes) && i < json_array_size(notes) ?
	       json_string_value(json_array_get(notes, i)) : NULL;
}
