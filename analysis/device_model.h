#ifndef CACHEADVISE_DEVICE_MODEL_H
#define CACHEADVISE_DEVICE_MODEL_H

#include <jansson.h>

/*
 * The device model (DESIGN.md "The device model", docs/device-json.md):
 * the cache geometry and latencies the analysis uses, as measured by
 * `cacheadvise probe` (device.json, schema "cacheadvise.device/1"), given
 * by the user (--device FILE), or the documented defaults (an H100 SXM5,
 * the GPU the method is tuned for).
 *
 * Sizes are bytes and 0 means "unknown"; latencies are SM clock cycles as
 * the probe measured them (a dependent load and the clock reads around it)
 * and a negative value means "unknown". Unknown values are written as JSON
 * null.
 *
 * `profile` resolves its model with device_model_resolve(): --device FILE,
 * else the last probe result cached for the GPU's UUID
 * ($XDG_CACHE_HOME/cacheadvise/device-<uuid>.json, or
 * ~/.cache/cacheadvise/...), else the defaults; `source` says which.
 */

#define DEVICE_MODEL_SCHEMA "cacheadvise.device/1"

enum device_model_source {
	DEVICE_MODEL_DEFAULTS,  /* "defaults": nothing measured */
	DEVICE_MODEL_PROBE,     /* "probe": the probe measured this GPU */
	DEVICE_MODEL_FILE,      /* "file": a device.json given with --device */
};

struct device_model {
	enum device_model_source source;
	char *origin;           /* file it was read from; NULL for defaults */
	char *name;             /* "NVIDIA H100 80GB HBM3" */
	char *uuid;             /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; NULL unknown */
	char *cc;               /* compute capability, "9.0" */
	char *created;          /* ISO 8601 UTC time of the probe; NULL unknown */
	unsigned sm_count;
	unsigned clock_khz;     /* peak SM clock */
	unsigned max_threads_per_sm;
	/* L1 data cache (ld.global, ld.global.ca) */
	unsigned l1_line_bytes;         /* tag granularity: 128 on Volta and later */
	unsigned sector_bytes;          /* fill granularity: 32 on Volta and later */
	unsigned long long l1_bytes;    /* capacity at the default carve-out */
	unsigned long long l1_bytes_min;/* capacity with the largest shared carve-out */
	unsigned l1_sets, l1_ways;      /* 0 where not measurable */
	unsigned long long readonly_bytes; /* capacity through ld.global.nc */
	/* shared memory (the software cache's space) */
	unsigned long long shared_per_sm;
	unsigned long long shared_per_block_optin;
	unsigned long long reserved_shared_per_block;
	/* L2 */
	unsigned long long l2_bytes;            /* as the driver reports it */
	unsigned long long l2_bytes_measured;   /* P-chase: largest footprint that still hits */
	unsigned long long persisting_l2_max_bytes;
	unsigned long long access_policy_max_window_bytes;
	/* latencies, cycles */
	double lat_l1_hit, lat_readonly_hit, lat_l2_hit, lat_dram;
	json_t *probe;          /* the probe's curves and notes (owned), or NULL */
};

/*
 * Fills dm with the documented defaults (docs/device-json.md), source
 * DEVICE_MODEL_DEFAULTS. Release with device_model_release().
 */
void device_model_init(struct device_model *dm);
void device_model_release(struct device_model *dm);

/* "defaults", "probe", "file". */
const char *device_model_source_name(enum device_model_source s);

/*
 * Reads a device.json document into dm, which must be initialised: fields
 * the document lacks keep their current (default) values, unknown fields
 * are ignored, and the source becomes the document's "source" ("probe"
 * when it says so, else "file"). A wrong schema, a field of the wrong type,
 * a zero or negative size where one is given, or a sector size that does
 * not divide the line size is CA_E_INPUT, naming `name` and the field; dm
 * is then left as it was.
 */
int device_model_from_json(struct device_model *dm, json_t *doc, const char *name);

/* A new JSON document (caller owns) that device_model_from_json reads back. */
json_t *device_model_to_json(const struct device_model *dm);

/* Loads path with device_model_from_json and records it as dm->origin.
 * Returns 0 or CA_E_INPUT. */
int device_model_load_file(struct device_model *dm, const char *path);
/* Writes dm to path atomically. Returns 0 or CA_E_IO. */
int device_model_write_file(const struct device_model *dm, const char *path);

/*
 * The folder where probe results are cached: $XDG_CACHE_HOME/cacheadvise
 * when XDG_CACHE_HOME is set to an absolute path, else
 * $HOME/.cache/cacheadvise. Returns a new string (caller frees), or NULL
 * with the message set when neither variable is usable.
 */
char *device_model_cache_dir(void);

/*
 * The cache file for a GPU: <cache dir>/device-<uuid>.json (caller frees).
 * Returns NULL with the message set (CA_E_INPUT) when uuid is empty or
 * holds anything but letters, digits and '-', or the cache dir is unknown.
 */
char *device_model_cache_path(const char *uuid);

/*
 * Loads the last probe result cached for uuid into dm (initialised).
 * Returns 1 when one was loaded, 0 when none is cached (dm untouched), or
 * CA_E_INPUT when the cached file is unreadable or invalid, or was
 * measured on another GPU (the message says to run `cacheadvise probe`).
 */
int device_model_load_cached(struct device_model *dm, const char *uuid);

/* Stores dm under its uuid in the cache folder (created as needed).
 * Returns 0, CA_E_INPUT without a usable uuid, or CA_E_IO. */
int device_model_save_cached(const struct device_model *dm);

/*
 * What `profile` uses (DESIGN.md): device_file when given, else the cached
 * probe result for uuid (may be NULL), else the defaults. dm must be
 * initialised. Returns 0 or the error of the step that failed (a bad
 * --device file or a corrupt cache file: CA_E_INPUT).
 */
int device_model_resolve(struct device_model *dm, const char *device_file, const char *uuid);

/* What the probe recorded about itself: how long it took (NAN unknown) and
 * its i-th note (NULL past the last). */
double device_model_probe_seconds(const struct device_model *dm);
const char *device_model_probe_note(const struct device_model *dm, size_t i);

#endif
