#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "analysis/device_model.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "tests/unit/check.h"

static char tmpdir[] = "/tmp/ca-test-device-model-XXXXXX";

static json_t *parse(const char *text)
{
	json_error_t err;
	json_t *doc = json_loads(text, 0, &err);

	if (!doc) {
		fprintf(stderr, "bad test JSON: %s\n", err.text);
		exit(1);
	}
	return doc;
}

/* A document shaped like the probe's, with every field set. */
static const char *probe_doc =
	"{\"schema\": \"cacheadvise.device/1\", \"source\": \"probe\","
	" \"created\": \"2026-11-22T03:10:00Z\", \"name\": \"NVIDIA H100 80GB HBM3\","
	" \"uuid\": \"GPU-12345678-abcd-ef01-2345-6789abcdef01\", \"cc\": \"9.0\","
	" \"sm_count\": 132, \"clock_khz\": 1980000, \"max_threads_per_sm\": 2048,"
	" \"l1_line_bytes\": 128, \"sector_bytes\": 32, \"l1_bytes\": 245760,"
	" \"l1_bytes_min\": 28672, \"l1_sets\": null, \"l1_ways\": null,"
	" \"readonly_bytes\": 245760, \"shared_per_sm\": 233472,"
	" \"shared_per_block_optin\": 232448, \"reserved_shared_per_block\": 1024,"
	" \"l2_bytes\": 52428800, \"l2_bytes_measured\": 26214400,"
	" \"persisting_l2_max_bytes\": 32768000, \"access_policy_max_window_bytes\": 134217728,"
	" \"latency_cycles\": {\"l1_hit\": 38.5, \"readonly_hit\": 38.0, \"l2_hit\": 262.0,"
	"                      \"dram\": null},"
	" \"probe\": {\"seconds\": 9.5, \"notes\": [\"x\"]},"
	" \"field_from_the_future\": 1}";

static void test_defaults(void)
{
	struct device_model dm;

	device_model_init(&dm);
	CHECK_INT(dm.source, DEVICE_MODEL_DEFAULTS);
	CHECK_STR(device_model_source_name(dm.source), "defaults");
	CHECK_INT(dm.sector_bytes, 32);
	CHECK_INT(dm.l1_line_bytes, 128);
	CHECK_INT(dm.shared_per_sm, 233472);
	CHECK(dm.lat_l1_hit < 0);
	CHECK(dm.uuid == NULL);
	device_model_release(&dm);
}

static void test_roundtrip(void)
{
	struct device_model a, b;
	json_t *doc = parse(probe_doc), *out, *lat;

	device_model_init(&a);
	CHECK_INT(device_model_from_json(&a, doc, "probe.json"), 0);
	CHECK_INT(a.source, DEVICE_MODEL_PROBE);
	CHECK_STR(a.name, "NVIDIA H100 80GB HBM3");
	CHECK_INT(a.l1_bytes, 245760);
	CHECK_INT(a.l2_bytes, 52428800ULL);
	CHECK_INT(a.l1_ways, 0);        /* null keeps the default: unknown */
	CHECK_NEAR(a.lat_l1_hit, 38.5, 1e-9);
	CHECK(a.lat_dram < 0);
	CHECK(a.probe != NULL);

	out = device_model_to_json(&a);
	CHECK_STR(json_string_value(json_object_get(out, "schema")), DEVICE_MODEL_SCHEMA);
	CHECK(json_is_null(json_object_get(out, "l1_ways")));
	lat = json_object_get(out, "latency_cycles");
	CHECK(json_is_null(json_object_get(lat, "dram")));
	CHECK_NEAR(json_number_value(json_object_get(lat, "l2_hit")), 262.0, 1e-9);
	CHECK(json_object_get(out, "field_from_the_future") == NULL);

	device_model_init(&b);
	CHECK_INT(device_model_from_json(&b, out, "again"), 0);
	CHECK_STR(b.uuid, a.uuid);
	CHECK_STR(b.created, "2026-11-22T03:10:00Z");
	CHECK_INT(b.persisting_l2_max_bytes, a.persisting_l2_max_bytes);
	CHECK_INT(b.l1_bytes_min, 28672);
	CHECK_INT(b.l2_bytes_measured, 26214400);
	CHECK_NEAR(b.lat_readonly_hit, 38.0, 1e-9);
	CHECK(json_equal(a.probe, b.probe));
	CHECK_INT(b.source, DEVICE_MODEL_PROBE);

	json_decref(out);
	json_decref(doc);
	device_model_release(&a);
	device_model_release(&b);
}

static void test_partial_and_errors(void)
{
	struct device_model dm;
	json_t *doc;

	/* A hand-written file: only what the user knows; the rest stays default. */
	device_model_init(&dm);
	doc = parse("{\"schema\": \"cacheadvise.device/1\", \"sector_bytes\": 64}");
	CHECK_INT(device_model_from_json(&dm, doc, "mine.json"), 0);
	CHECK_INT(dm.source, DEVICE_MODEL_FILE);
	CHECK_INT(dm.sector_bytes, 64);
	CHECK_INT(dm.l1_line_bytes, 128);
	json_decref(doc);

	doc = parse("{\"schema\": \"cacheadvise.device/1\", \"l2_bytes\": \"big\"}");
	CHECK_INT(device_model_from_json(&dm, doc, "bad.json"), CA_E_INPUT);
	CHECK(strstr(error_message(), "bad.json") != NULL);
	CHECK(strstr(error_message(), "\"l2_bytes\" must be an integer") != NULL);
	CHECK_INT(dm.sector_bytes, 64);   /* left as it was */
	json_decref(doc);

	doc = parse("{\"schema\": \"cacheadvise.device/1\", \"sector_bytes\": 48}");
	CHECK_INT(device_model_from_json(&dm, doc, "odd.json"), CA_E_INPUT);
	CHECK(strstr(error_message(), "does not divide") != NULL);
	CHECK_INT(dm.sector_bytes, 64);
	json_decref(doc);

	doc = parse("{\"schema\": \"cacheadvise.device/1\", \"l1_bytes\": 0}");
	CHECK_INT(device_model_from_json(&dm, doc, "zero.json"), CA_E_INPUT);
	CHECK(strstr(error_message(), "\"l1_bytes\" is out of range") != NULL);
	json_decref(doc);

	doc = parse("{\"schema\": \"cacheadvise.device/1\", \"latency_cycles\": {\"l1_hit\": -3}}");
	CHECK_INT(device_model_from_json(&dm, doc, "lat.json"), CA_E_INPUT);
	CHECK(strstr(error_message(), "latency_cycles.l1_hit") != NULL);
	json_decref(doc);

	doc = parse("{\"schema\": \"cacheadvise.device/1\", \"uuid\": \"../../etc/passwd\"}");
	CHECK_INT(device_model_from_json(&dm, doc, "uuid.json"), CA_E_INPUT);
	CHECK(strstr(error_message(), "not a GPU UUID") != NULL);
	json_decref(doc);

	doc = parse("{\"schema\": \"cacheadvise.plan/1\"}");
	CHECK_INT(device_model_from_json(&dm, doc, "plan.json"), CA_E_INPUT);
	json_decref(doc);

	doc = parse("{\"schema\": \"cacheadvise.device/2\"}");
	CHECK_INT(device_model_from_json(&dm, doc, "new.json"), CA_E_INPUT);
	CHECK(strstr(error_message(), "newer") != NULL);
	json_decref(doc);

	device_model_release(&dm);
}

static void test_cache_dir(void)
{
	char *dir, *path;

	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	setenv("HOME", "/home/u", 1);
	dir = device_model_cache_dir();
	CHECK_STR(dir, "/x/cache/cacheadvise");
	free(dir);

	setenv("XDG_CACHE_HOME", "relative/ignored", 1);
	dir = device_model_cache_dir();
	CHECK_STR(dir, "/home/u/.cache/cacheadvise");
	free(dir);

	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	CHECK(device_model_cache_dir() == NULL);
	CHECK(strstr(error_message(), "HOME") != NULL);

	setenv("HOME", "/home/u", 1);
	path = device_model_cache_path("GPU-1234-ab");
	CHECK_STR(path, "/home/u/.cache/cacheadvise/device-GPU-1234-ab.json");
	free(path);
	CHECK(device_model_cache_path("GPU/../x") == NULL);
	CHECK(device_model_cache_path("") == NULL);
	CHECK(device_model_cache_path(NULL) == NULL);
}

static void test_cache_roundtrip(void)
{
	struct device_model dm, got;
	json_t *doc = parse(probe_doc);
	const char *uuid = "GPU-12345678-abcd-ef01-2345-6789abcdef01";
	char *path, *bad;

	setenv("XDG_CACHE_HOME", tmpdir, 1);

	device_model_init(&got);
	CHECK_INT(device_model_load_cached(&got, uuid), 0);   /* nothing cached yet */
	CHECK_INT(got.source, DEVICE_MODEL_DEFAULTS);

	device_model_init(&dm);
	CHECK_INT(device_model_from_json(&dm, doc, "probe"), 0);
	CHECK_INT(device_model_save_cached(&dm), 0);
	path = device_model_cache_path(uuid);
	CHECK(access(path, R_OK) == 0);

	CHECK_INT(device_model_load_cached(&got, uuid), 1);
	CHECK_INT(got.source, DEVICE_MODEL_PROBE);
	CHECK_INT(got.l1_bytes, 245760);
	CHECK_STR(got.origin, path);
	device_model_release(&got);

	/* resolve: cache when no file is given, the file when one is, else defaults */
	device_model_init(&got);
	CHECK_INT(device_model_resolve(&got, NULL, uuid), 0);
	CHECK_INT(got.source, DEVICE_MODEL_PROBE);
	CHECK_INT(device_model_resolve(&got, path, NULL), 0);
	CHECK_INT(got.source, DEVICE_MODEL_FILE);
	CHECK_INT(device_model_resolve(&got, NULL, "GPU-not-cached"), 0);
	CHECK_INT(got.source, DEVICE_MODEL_DEFAULTS);
	CHECK_INT(got.l1_bytes, 189440);
	CHECK_INT(device_model_resolve(&got, NULL, NULL), 0);
	CHECK_INT(got.source, DEVICE_MODEL_DEFAULTS);
	CHECK_INT(device_model_resolve(&got, "/nonexistent/device.json", NULL), CA_E_INPUT);
	CHECK(strstr(error_message(), "/nonexistent/device.json") != NULL);
	device_model_release(&got);

	/* A cache file that names another GPU is refused, with what to do. */
	bad = device_model_cache_path("GPU-other");
	CHECK_INT(device_model_write_file(&dm, bad), 0);
	device_model_init(&got);
	CHECK_INT(device_model_load_cached(&got, "GPU-other"), CA_E_INPUT);
	CHECK(strstr(error_message(), "measured on GPU") != NULL);
	CHECK(strstr(error_message(), "cacheadvise probe") != NULL);
	CHECK_INT(got.source, DEVICE_MODEL_DEFAULTS);

	/* A corrupt cache file is an error, not silently the defaults. */
	CHECK_INT(write_file_atomic(bad, "{\"schema\": ", 11), 0);
	CHECK_INT(device_model_load_cached(&got, "GPU-other"), CA_E_INPUT);
	CHECK(strstr(error_message(), "cacheadvise probe") != NULL);
	CHECK_INT(device_model_resolve(&got, NULL, "GPU-other"), CA_E_INPUT);
	device_model_release(&got);

	unlink(bad);
	unlink(path);
	free(bad);
	free(path);
	json_decref(doc);
	device_model_release(&dm);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_defaults();
	test_roundtrip();
	test_partial_and_errors();
	test_cache_dir();
	test_cache_roundtrip();
	{
		char *d = xasprintf("%s/cacheadvise", tmpdir);
		rmdir(d);
		free(d);
		rmdir(tmpdir);
	}
	return check_done();
}
