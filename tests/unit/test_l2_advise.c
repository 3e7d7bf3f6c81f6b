#include <string.h>

#include "analysis/capture_model.h"
#include "analysis/l2_advise.h"
#include "base/error.h"
#include "tests/unit/check.h"


/* l2_advise_window_file() of window i of an "l2" section, read as the
 * profile reads it (capture_l2_from_json). */
static json_t *window_file(json_t *l2, size_t i)
{
	struct capture_l2 t;
	json_t *f = NULL;

	memset(&t, 0, sizeof(t));
	if (!capture_l2_from_json(&t, l2, "l2") && i < t.nr_windows)
		f = l2_advise_window_file(&t.windows[i]);
	else
		fprintf(stderr, "%s\n", error_message());
	capture_l2_release(&t);
	return f ? f : json_object();
}

/* l2_advise() of a capture document, read as every caller reads it: the
 * document gets what a capture always has (schema, its kernels' modules). */
static json_t *advise_doc(json_t *doc)
{
	struct capture cap;
	json_t *copy = json_deep_copy(doc), *k, *out = NULL;
	size_t i;

	const char *key;
	json_t *v;

	/* the sizes below are written as doubles; device.json's are integers */
	json_object_foreach(json_object_get(copy, "device"), key, v)
		if (json_is_real(v))
			json_object_set_new(json_object_get(copy, "device"), key,
					    json_integer((json_int_t)json_real_value(v)));
	json_object_set_new(copy, "schema", json_string(CAPTURE_SCHEMA));
	if (!json_object_get(copy, "modules"))
		json_object_set_new(copy, "modules", json_pack("[{s:s}]", "id", "app"));
	if (!json_object_get(copy, "kernels"))
		json_object_set_new(copy, "kernels", json_array());
	json_array_foreach(json_object_get(copy, "kernels"), i, k) {
		size_t j;

		json_object_set_new(k, "module", json_string("app"));
		json_array_foreach(json_object_get(k, "loads"), j, v)
			if (!json_object_get(v, "ordinal"))
				json_object_set_new(v, "ordinal", json_integer((json_int_t)j));
	}
	capture_init(&cap);
	if (!capture_from_json(&cap, copy, "test"))
		out = l2_advise(&cap);
	else
		fprintf(stderr, "%s\n", error_message());
	capture_release(&cap);
	json_decref(copy);
	return out;
}

/* A capture shaped like samples/l2_reuse on an H200: a 24 MB hot buffer read
 * by 20 gather launches, a 1.5 GB cold buffer streamed by both kernels. */
static json_t *capture(double l2, double persist_max, const char *partitioned)
{
	json_t *c = json_pack(
		"{s:{s:f, s:f, s:f},"
		" s:[{s:i, s:f}, {s:i, s:f}],"
		" s:[{s:s, s:[{s:i, s:i, s:i}, {s:i, s:i, s:i}], s:[]},"
		"    {s:s, s:[{s:i, s:i, s:i}], s:[]}]}",
		"device", "l2_bytes", l2, "persisting_l2_max_bytes", persist_max,
		"access_policy_max_window_bytes", 134217728.0,
		"allocations", "seq", 0, "bytes", 25165824.0, "seq", 1, "bytes", 1610612736.0,
		"kernels",
		"name", "gather_mix", "allocs_used", "param", 0, "alloc", 0, "launches", 20,
		"param", 1, "alloc", 1, "launches", 20, "loads",
		"name", "stream_scale", "allocs_used", "param", 0, "alloc", 1, "launches", 20, "loads");
	if (partitioned)
		json_object_set_new(json_object_get(c, "device"), "partitioned", json_string(partitioned));
	return c;
}

static void test_advised(void)
{
	json_t *c = capture(62914560.0, 38797312.0, NULL), *r = advise_doc(c), *w;

	CHECK(r != NULL);
	CHECK_STR(json_string_value(json_object_get(r, "status")), "advised");
	/* set-aside = min(3/4 of L2, persisting max) */
	CHECK_INT(json_integer_value(json_object_get(r, "set_aside_bytes")), 38797312);
	/* the hot buffer ranks first: read 20 times over */
	CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(r, "candidates"), 0), "alloc")), 0);
	w = json_array_get(json_object_get(r, "windows"), 0);
	CHECK_STR(json_string_value(json_object_get(w, "variant")), "guide");
	CHECK_INT(json_integer_value(json_object_get(w, "num_bytes")), 25165824);
	CHECK_NEAR(json_number_value(json_object_get(w, "hit_ratio")), 1.0, 1e-9);
	CHECK_STR(json_string_value(json_array_get(json_object_get(w, "kernels"), 0)), "gather_mix");
	CHECK_INT(json_array_size(json_object_get(w, "kernels")), 1);
	/* code a programmer pastes, with device/l2window.h's helpers */
	{
		const char *code = json_string_value(json_object_get(w, "snippet"));
		CHECK(code != NULL);
		CHECK(code && strstr(code, "l2window_set_aside(38797312ull") != NULL);
		CHECK(code && strstr(code, "l2window_stream_set(stream, (const char *)buffer + 0, 25165824ull, 1.000f") != NULL);
		CHECK(code && strstr(code, "l2window_stream_reset(stream") != NULL);
		CHECK(code && strstr(code, "gather_mix") != NULL);
	}
	/* the window-file form the injection library reads */
	{
		json_t *f = window_file(r, 0);
		CHECK_INT(json_integer_value(json_object_get(f, "set_aside_bytes")), 38797312);
		CHECK(json_object_get(json_array_get(json_object_get(f, "windows"), 0), "variant") == NULL);
		CHECK(json_object_get(json_array_get(json_object_get(f, "windows"), 0), "snippet") == NULL);
		json_decref(f);
	}
	json_decref(r);
	json_decref(c);
}

static void test_hit_ratio_below_one(void)
{
	/* a 16 MB set-aside for a 24 MB window: hitRatio = 16/24 */
	json_t *c = capture(62914560.0, 16777216.0, NULL), *r = advise_doc(c), *w;

	w = json_array_get(json_object_get(r, "windows"), 0);
	CHECK_NEAR(json_number_value(json_object_get(w, "hit_ratio")), 16777216.0 / 25165824.0, 1e-6);
	/* and a variant whose window is cut to the set-aside */
	CHECK_INT(json_array_size(json_object_get(r, "windows")), 3);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(r, "windows"), 2), "num_bytes")), 16777216);
	json_decref(r);
	json_decref(c);
}

static void test_none(void)
{
	json_t *c = capture(62914560.0, 38797312.0, "MIG is enabled on this GPU"), *r = advise_doc(c);

	CHECK_STR(json_string_value(json_object_get(r, "status")), "none");
	CHECK(strstr(json_string_value(json_object_get(r, "reason")), "MIG") != NULL);
	json_decref(r);
	json_decref(c);

	c = capture(62914560.0, 0.0, NULL);
	r = advise_doc(c);
	CHECK_STR(json_string_value(json_object_get(r, "status")), "none");
	CHECK(strstr(json_string_value(json_object_get(r, "reason")), "no persisting L2") != NULL);
	json_decref(r);
	json_decref(c);

	/* everything fits in a (hypothetical) 4 GB L2: no window */
	c = capture(4294967296.0, 3221225472.0, NULL);
	r = advise_doc(c);
	CHECK_STR(json_string_value(json_object_get(r, "status")), "none");
	CHECK(strstr(json_string_value(json_object_get(r, "reason")), "fits in the") != NULL);
	json_decref(r);
	json_decref(c);

	c = json_object();
	CHECK(advise_doc(c) == NULL);
	json_decref(c);
}

/* Shaped like samples/cfd_iter on an H100: a 44 KB table read 67 GB over
 * 2,000 launches (it stays in L2 within each launch), two 64 MB arrays
 * streamed by 8,000 launches. At most 88 MB of reloads could be saved, far
 * under 1% of what the kernels read: no window. */
static void test_small_hot_buffer(void)
{
	json_t *c = json_pack(
		"{s:{s:f, s:f, s:f},"
		" s:[{s:i, s:f}, {s:i, s:f}, {s:i, s:f}],"
		" s:[{s:s, s:[{s:i, s:i, s:i}, {s:i, s:i, s:i}], s:[{s:i, s:f}]},"
		"    {s:s, s:[{s:i, s:i, s:i}], s:[]}]}",
		"device", "l2_bytes", 52428800.0, "persisting_l2_max_bytes", 32768000.0,
		"access_policy_max_window_bytes", 134217728.0,
		"allocations", "seq", 0, "bytes", 67108864.0, "seq", 1, "bytes", 67108864.0,
		"seq", 5, "bytes", 45056.0,
		"kernels",
		"name", "compute_flux", "allocs_used", "param", 0, "alloc", 0, "launches", 2000,
		"param", 1, "alloc", 5, "launches", 2000, "loads", "param", 1, "bytes", 67108864000.0,
		"name", "time_step", "allocs_used", "param", 0, "alloc", 1, "launches", 6000, "loads");
	json_t *r = advise_doc(c), *top;

	CHECK_STR(json_string_value(json_object_get(r, "status")), "none");
	CHECK(strstr(json_string_value(json_object_get(r, "reason")), "stay in L2 within a launch") != NULL);
	/* the table's score is its reloads, one a launch after the first */
	top = json_array_get(json_object_get(r, "candidates"), 0);
	CHECK_INT(json_integer_value(json_object_get(top, "alloc")), 5);
	CHECK_NEAR(json_number_value(json_object_get(top, "score")), 45056.0 * 1999, 1.0);
	CHECK_INT(json_array_size(json_object_get(r, "windows")), 0);
	json_decref(r);
	json_decref(c);
}

/*
 * Shaped like tests/gpu/t_pytorch.sh on an H100: a 26 MB weight matrix read
 * by 48 GEMM launches of a cubin-only library (no PTX, so no "kernels"
 * entry, no monitor bytes: only "all_kernels" with allocs_used), 250 MB of
 * activations streamed, a 10 MB output. One kernel with PTX was measured:
 * its all_kernels entry repeats its allocs_used and must not count twice.
 */
static void test_no_ptx(void)
{
	json_t *c = json_pack(
		"{s:{s:f, s:f, s:f},"
		" s:[{s:i, s:f}, {s:i, s:f}, {s:i, s:f}],"
		" s:[{s:s, s:b, s:[s]}, {s:s, s:b}],"
		" s:[{s:s, s:[{s:i, s:i, s:i}], s:[]}],"
		" s:[{s:s, s:i, s:[{s:i, s:i, s:i}, {s:i, s:i, s:i}, {s:i, s:i, s:i}]},"
		"    {s:s, s:i, s:[{s:i, s:i, s:i}]}]}",
		"device", "l2_bytes", 52428800.0, "persisting_l2_max_bytes", 39321600.0,
		"access_policy_max_window_bytes", 134217728.0,
		"allocations", "seq", 0, "bytes", 26214400.0, "seq", 1, "bytes", 251658240.0,
		"seq", 2, "bytes", 10485760.0,
		"modules", "id", "lib", "has_ptx", 0, "kernels", "sm90_xmma_gemm_f32f32_nn",
		"id", "app", "has_ptx", 1,
		"kernels",
		"name", "scale", "allocs_used", "param", 0, "alloc", 2, "launches", 48, "loads",
		"all_kernels",
		"name", "sm90_xmma_gemm_f32f32_nn", "launches", 48, "allocs_used",
		"param", 0, "alloc", 0, "launches", 48, "param", 0, "alloc", 1, "launches", 48,
		"param", 0, "alloc", 2, "launches", 48,
		"name", "scale", "launches", 48, "allocs_used", "param", 0, "alloc", 2, "launches", 48);
	json_t *r = advise_doc(c), *w, *cand;
	size_t i;

	CHECK_STR(json_string_value(json_object_get(r, "status")), "advised");
	w = json_array_get(json_object_get(r, "windows"), 0);
	CHECK_INT(json_integer_value(json_object_get(w, "alloc")), 0);
	CHECK_INT(json_integer_value(json_object_get(w, "num_bytes")), 26214400);
	CHECK_STR(json_string_value(json_array_get(json_object_get(w, "kernels"), 0)),
		  "sm90_xmma_gemm_f32f32_nn");
	CHECK_INT(json_array_size(json_object_get(w, "kernels_without_ptx")), 1);
	CHECK_STR(json_string_value(json_array_get(json_object_get(w, "kernels_without_ptx"), 0)),
		  "sm90_xmma_gemm_f32f32_nn");
	/* every buffer counts in the footprint: 26 + 250 + 10 MB */
	CHECK_INT(json_integer_value(json_object_get(r, "footprint_bytes")), 288358400);
	/* the output: 48 GEMM launches and 48 of the measured kernel, not 96 of it */
	json_array_foreach(json_object_get(r, "candidates"), i, cand) {
		if (json_integer_value(json_object_get(cand, "alloc")) != 2)
			continue;
		CHECK_NEAR(json_number_value(json_object_get(cand, "launches")), 96, 1e-9);
		CHECK_INT(json_array_size(json_object_get(cand, "kernels")), 2);
		CHECK_INT(json_array_size(json_object_get(cand, "kernels_without_ptx")), 1);
	}
	/* the streamed activations, over twice the set-aside, score nothing */
	json_array_foreach(json_object_get(r, "candidates"), i, cand)
		if (json_integer_value(json_object_get(cand, "alloc")) == 1)
			CHECK_NEAR(json_number_value(json_object_get(cand, "score")), 0, 1e-9);
	/* the window file the injection library reads names kernels only */
	{
		json_t *f = window_file(r, 0);
		CHECK(json_object_get(json_array_get(json_object_get(f, "windows"), 0),
				      "kernels_without_ptx") == NULL);
		json_decref(f);
	}
	json_decref(r);
	json_decref(c);
}

int main(void)
{
	test_no_ptx();
	test_small_hot_buffer();
	test_advised();
	test_hit_ratio_below_one();
	test_none();
	return check_done();
}
