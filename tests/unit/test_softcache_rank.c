/*
 * The software-cache ranking: CLN from the occupancy model, the 2x
 * read-write rule both ways, CLN = 0, and the capture.json entry points.
 * Every expected number is worked out by hand in the comments.
 */
#include <limits.h>

#include "base/error.h"
#include "analysis/softcache_rank.h"
#include "tests/unit/check.h"

static struct softcache_launch launch(unsigned threads, unsigned long long shared)
{
	struct softcache_launch l = { { threads, 1, 1 }, { 0, 0, 0 }, shared, 0 };
	return l;
}

static void test_cln_threads_limited(void)
{
	struct softcache_device d;
	struct softcache_launch l = launch(256, 0);
	struct softcache_rank r;

	softcache_device_init(&d);
	softcache_rank_init(&r);
	/* 2048/256 = 8 blocks; 8 x (0 + 1024 reserve) = 8192 used;
	 * (233472 - 8192) / 2048 = 110 bytes per thread -> 6 lines */
	CHECK_INT(softcache_rank_compute(&r, &d, &l, NULL, 0), 0);
	CHECK_INT(r.threads_per_block, 256);
	CHECK_INT(r.blocks_per_sm, 8);
	CHECK_STR(r.limited_by, "threads");
	CHECK_INT(r.threads_per_sm, 2048);
	CHECK_INT(r.shared_used_per_sm, 8192);
	CHECK_INT(r.shared_free_per_sm, 225280);
	CHECK_INT(r.cln_per_sm, 6);
	CHECK_INT(r.cln_per_block, 232448 / (16 * 256));
	CHECK_INT(r.cln, 6);
	CHECK_INT(r.enabled, 0);        /* nothing to cache */
	CHECK(strstr(r.reason, "measured no data structure") != NULL);
	softcache_rank_release(&r);
}

/* 8 blocks of 256 threads with 23040 bytes each: 8 x 24064 = 192512 used,
 * 40960 free, 20 bytes per thread: exactly one line. */
static const unsigned long long ONE_LINE_SHARED = 23040;

static int pick_one(uint64_t ro_hits, uint64_t rw_hits, int *selected_param)
{
	struct softcache_device d;
	struct softcache_launch l = launch(256, ONE_LINE_SHARED);
	struct softcache_candidate c[2] = {
		{ .param = 0, .read_only = 1, .sim_hits = ro_hits, .sim_accesses = 300 },
		{ .param = 3, .read_only = 0, .sim_hits = rw_hits, .sim_accesses = 300 },
	};
	struct softcache_rank r;
	int ret;

	softcache_device_init(&d);
	softcache_rank_init(&r);
	ret = softcache_rank_compute(&r, &d, &l, c, 2);
	CHECK_INT(r.cln, 1);
	CHECK_INT(r.nr_selected, ret ? 0 : 1);
	*selected_param = r.nr_selected ? r.selected[0] : -1;
	softcache_rank_release(&r);
	return ret;
}

static void test_two_x_rule(void)
{
	int p = -2;

	/* read-write with less than twice the hits: the read-only one wins */
	CHECK_INT(pick_one(100, 199, &p), 0);
	CHECK_INT(p, 0);
	/* exactly twice: the read-write one wins */
	CHECK_INT(pick_one(100, 200, &p), 0);
	CHECK_INT(p, 3);
	CHECK_INT(pick_one(100, 1000, &p), 0);
	CHECK_INT(p, 3);
	/* read-only with more hits: obviously read-only */
	CHECK_INT(pick_one(250, 200, &p), 0);
	CHECK_INT(p, 0);
	/* no read-only candidate with hits: the read-write one */
	CHECK_INT(pick_one(0, 5, &p), 0);
	CHECK_INT(p, 3);
}

static void test_two_lines_order_and_reasons(void)
{
	struct softcache_device d;
	/* 8 blocks x (14848 + 1024) = 126976 used, 106496 free, 52 bytes per
	 * thread -> 3 lines; the per-block check: 14848 + 3*16*256 = 27136 fits */
	struct softcache_launch l = launch(256, 14848);
	struct softcache_candidate c[5] = {
		{ .param = 0, .read_only = 1, .sim_hits = 100, .sim_accesses = 300 },
		{ .param = 1, .read_only = 1, .sim_hits = 50, .sim_accesses = 300 },
		{ .param = 2, .read_only = 0, .sim_hits = 150, .sim_accesses = 300 },
		{ .param = 3, .read_only = -1, .sim_hits = 300, .sim_accesses = 300 },
		{ .param = 4, .read_only = 1, .sim_hits = 0, .sim_accesses = 300 },
	};
	struct softcache_rank r;
	json_t *j;

	softcache_device_init(&d);
	softcache_rank_init(&r);
	CHECK_INT(softcache_rank_compute(&r, &d, &l, c, 5), 0);
	CHECK_INT(r.cln, 3);
	/* round 1: ro 0 (100) vs rw 3 (300, unknown = read-write) >= 200 -> 3
	 * round 2: ro 0 (100) vs rw 2 (150) < 200 -> 0
	 * round 3: ro 1 (50) vs rw 2 (150) >= 100 -> 2 */
	CHECK_INT(r.nr_selected, 3);
	CHECK_INT(r.selected[0], 3);
	CHECK_INT(r.selected[1], 0);
	CHECK_INT(r.selected[2], 2);
	CHECK_INT(r.enabled, 1);
	/* candidates sorted by hits: 3, 2, 0, 1, 4 */
	CHECK_INT(r.candidates[0].param, 3);
	CHECK_INT(r.candidates[1].param, 2);
	CHECK_INT(r.candidates[2].param, 0);
	CHECK_INT(r.candidates[3].param, 1);
	CHECK_INT(r.candidates[3].selected, 0);
	CHECK_STR(r.candidates[4].why, "no simulated hits");
	CHECK(strstr(r.candidates[3].why, "ranked first") != NULL);
	CHECK(strstr(r.reason, "CLN = 3") != NULL);
	CHECK(strstr(r.reason, "parameters 3, 0, 2") != NULL);

	j = softcache_rank_to_json(&r);
	CHECK(json_is_true(json_object_get(j, "enabled")));
	CHECK_INT(json_integer_value(json_object_get(j, "cln")), 3);
	CHECK_INT(json_integer_value(json_object_get(j, "line_bytes")), 16);
	CHECK_INT(json_array_size(json_object_get(j, "selected")), 3);
	CHECK_INT(json_integer_value(json_array_get(json_object_get(j, "selected"), 1)), 0);
	CHECK(json_is_null(json_object_get(json_array_get(json_object_get(j, "candidates"), 0),
					   "read_only")));
	CHECK_NEAR(json_real_value(json_object_get(json_array_get(json_object_get(j, "candidates"), 3),
						   "hit_rate")), 50.0 / 300.0, 1e-12);
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "occupancy"), "limited_by")),
		  "threads");
	json_decref(j);
	softcache_rank_release(&r);
}

static void test_cln_zero(void)
{
	struct softcache_device d;
	/* 1024 threads with 100 KB: 2 blocks by threads, 233472/103424 = 2 by
	 * shared memory; 233472 - 206848 = 26624 free over 2048 threads = 13
	 * bytes per thread: no 16-byte line */
	struct softcache_launch l = launch(1024, 102400);
	struct softcache_candidate c[1] = {
		{ .param = 0, .read_only = 1, .sim_hits = 290, .sim_accesses = 300 },
	};
	struct softcache_rank r;
	json_t *j;

	softcache_device_init(&d);
	softcache_rank_init(&r);
	CHECK_INT(softcache_rank_compute(&r, &d, &l, c, 1), 0);
	CHECK_INT(r.blocks_per_sm, 2);
	CHECK_INT(r.shared_free_per_sm, 26624);
	CHECK_INT(r.cln, 0);
	CHECK_INT(r.enabled, 0);
	CHECK_INT(r.nr_selected, 0);
	CHECK(strstr(r.reason, "CLN = 0") != NULL);
	CHECK(strstr(r.reason, "13 bytes") != NULL);
	CHECK(strstr(r.reason, "disabled") != NULL);
	CHECK(strstr(r.candidates[0].why, "CLN = 0") != NULL);
	j = softcache_rank_to_json(&r);
	CHECK(json_is_false(json_object_get(j, "enabled")));
	CHECK_INT(json_integer_value(json_object_get(j, "cln")), 0);
	CHECK_INT(json_array_size(json_object_get(j, "selected")), 0);
	json_decref(j);
	softcache_rank_release(&r);
}

static void test_shared_and_grid_limits(void)
{
	struct softcache_device d;
	struct softcache_launch l = launch(128, 48 * 1024);
	struct softcache_rank r;

	softcache_device_init(&d);
	softcache_rank_init(&r);
	/* 48 KB + 1 KB = 50176 per block: 233472 / 50176 = 4 blocks (threads
	 * would allow 16); 233472 - 200704 = 32768 free over 512 threads = 64
	 * bytes -> 4 lines; 4 x (49152 + 4*16*128 + 1024) = 233472 fits exactly */
	CHECK_INT(softcache_rank_compute(&r, &d, &l, NULL, 0), 0);
	CHECK_INT(r.blocks_per_sm, 4);
	CHECK_STR(r.limited_by, "shared_memory");
	CHECK_INT(r.threads_per_sm, 512);
	CHECK_INT(r.cln, 4);

	/* a grid of 132 blocks on 132 SMs: one block of 256 threads per SM;
	 * 232448 free / 256 = 908 bytes = 56 lines; the opt-in limit allows
	 * 232448 / 4096 = 56 as well */
	d.sm_count = 132;
	l = launch(256, 0);
	l.grid[0] = 132;
	l.grid[1] = l.grid[2] = 1;
	CHECK_INT(softcache_rank_compute(&r, &d, &l, NULL, 0), 0);
	CHECK_INT(r.blocks_per_sm, 1);
	CHECK_STR(r.limited_by, "grid");
	CHECK_INT(r.cln, 56);

	/* the blocks-per-SM limit: 32-thread blocks, 2048/32 = 64 by threads */
	l = launch(32, 0);
	CHECK_INT(softcache_rank_compute(&r, &d, &l, NULL, 0), 0);
	CHECK_INT(r.blocks_per_sm, 32);
	CHECK_STR(r.limited_by, "blocks");
	CHECK_INT(r.threads_per_sm, 1024);
	/* (233472 - 32 x 1024) / 1024 = 196 bytes -> 12 lines */
	CHECK_INT(r.cln, 12);

	/* a warp is the allocation unit: 33 threads take 64 thread slots */
	l = launch(33, 0);
	d.max_blocks_per_sm = 1000;
	CHECK_INT(softcache_rank_compute(&r, &d, &l, NULL, 0), 0);
	CHECK_INT(r.blocks_per_sm, 32);

	/* invalid blocks */
	l = launch(2048, 0);
	CHECK_INT(softcache_rank_compute(&r, &d, &l, NULL, 0), CA_E_INPUT);
	l = launch(0, 0);
	CHECK_INT(softcache_rank_compute(&r, &d, &l, NULL, 0), CA_E_INPUT);
	l = launch(256, 300000);
	CHECK_INT(softcache_rank_compute(&r, &d, &l, NULL, 0), CA_E_INPUT);
	CHECK(strstr(error_message(), "shared memory") != NULL);
	softcache_rank_release(&r);
}

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fprintf(stderr, "bad test JSON: %s\n", e.text);
	return j;
}

/* The ranking of a kernel given as a capture.json "kernels" item, on the
 * device of a device.json text (NULL: defaults), both read through their
 * readers as the profile reads them. */
static int rank_of(struct softcache_rank *r, const char *kernel, const char *device)
{
	struct capture_kernel k;
	struct device_model dm;
	json_t *kj = parse(kernel), *dj = device ? parse(device) : NULL;
	int ret;

	memset(&k, 0, sizeof(k));
	device_model_init(&dm);
	ret = capture_kernel_from_json(&k, kj, "capture.json");
	if (!ret && dj)
		ret = device_model_from_json(&dm, dj, "device.json");
	if (!ret)
		ret = softcache_rank_from_capture(r, &k, dj ? &dm : NULL);
	capture_kernel_release(&k);
	device_model_release(&dm);
	json_decref(kj);
	json_decref(dj);
	return ret;
}

static void test_from_capture(void)
{
	const char *dev = "{\"schema\": \"cacheadvise.device/1\", \"name\": \"NVIDIA H200\","
			  " \"cc\": \"9.0\", \"shared_per_sm\": 233472,"
			  " \"shared_per_block_optin\": 232448, \"max_threads_per_sm\": 2048,"
			  " \"sm_count\": 132}";
	const char *k = "{\"module\": \"m\", \"name\": \"_Z4stepPKfPfi\", \"block\": [256, 1, 1],"
			" \"grid\": [4096, 1, 1],"
			" \"static_shared_bytes\": 23040, \"dynamic_shared_bytes\": 0,"
			" \"data_structures\": ["
			"  {\"param\": 0, \"read_only\": true, \"sim_hits\": 130, \"sim_accesses\": 300},"
			"  {\"param\": 1, \"read_only\": false, \"sim_hits\": 250, \"sim_accesses\": 300},"
			"  {\"param\": 2, \"read_only\": true, \"sim_hits\": null, \"sim_accesses\": null}]}";
	struct softcache_rank r;
	json_t *j;

	softcache_rank_init(&r);
	CHECK_INT(rank_of(&r, k, dev), 0);
	CHECK_INT(r.cln, 1);                /* the one-line configuration above */
	CHECK_INT(r.nr_candidates, 2);      /* param 2 was not measured */
	CHECK_INT(r.nr_selected, 1);
	CHECK_INT(r.selected[0], 0);        /* 250 < 2 x 130 */
	CHECK(strstr(r.candidates[0].why, "less than twice") != NULL);
	j = softcache_rank_to_json(&r);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(j, "occupancy"), "blocks_per_sm")), 8);
	json_decref(j);

	/* defaults without a device */
	CHECK_INT(rank_of(&r, k, NULL), 0);
	CHECK_INT(r.cln, 1);

	CHECK_INT(rank_of(&r, "{\"module\": \"m\", \"name\": \"k\", \"grid\": [1, 1, 1]}", dev),
		  CA_E_INPUT);
	CHECK(strstr(error_message(), "kernel 'k'") != NULL);
	CHECK(strstr(error_message(), "block") != NULL);
	CHECK_INT(rank_of(&r, "{\"module\": \"m\", \"name\": \"k\", \"block\": [64, 1, 1],"
			  " \"data_structures\": [{\"param\": 0, \"read_only\": 1, \"sim_hits\": 1,"
			  " \"sim_accesses\": 2}]}", dev), CA_E_INPUT);
	CHECK(strstr(error_message(), "data_structures[0]") != NULL);
	CHECK_INT(rank_of(&r, "{\"module\": \"m\", \"name\": \"k\", \"block\": [64, 1, 1],"
			  " \"data_structures\": [{\"param\": 0, \"read_only\": true, \"sim_hits\": 3,"
			  " \"sim_accesses\": 2}]}", dev), CA_E_INPUT);
	CHECK(strstr(error_message(), "more sim_hits than sim_accesses") != NULL);
	CHECK_INT(rank_of(&r, "{\"module\": \"m\", \"name\": \"k\", \"block\": [64, 1, 1],"
			  " \"data_structures\": [{\"param\": 0, \"sim_hits\": 3}]}", dev), CA_E_INPUT);
	CHECK(strstr(error_message(), "both") != NULL);
	CHECK_INT(rank_of(&r, "{\"module\": \"m\", \"name\": \"k\", \"block\": [0, 1, 1]}", dev),
		  CA_E_INPUT);
	/* before sm_80 the driver reserves no shared memory per block */
	{
		struct softcache_device d;
		struct device_model dm;
		json_t *volta = parse("{\"schema\": \"cacheadvise.device/1\", \"cc\": \"7.0\","
				      " \"shared_per_sm\": 98304}");
		json_t *h200 = parse(dev);

		device_model_init(&dm);
		CHECK_INT(device_model_from_json(&dm, volta, "volta"), 0);
		softcache_device_from_model(&d, &dm);
		CHECK_INT(d.reserved_shared_per_block, 0);
		CHECK_INT(d.shared_per_sm, 98304);
		CHECK_INT(d.max_threads_per_sm, 2048);
		device_model_release(&dm);
		device_model_init(&dm);
		CHECK_INT(device_model_from_json(&dm, h200, "h200"), 0);
		softcache_device_from_model(&d, &dm);
		CHECK_INT(d.reserved_shared_per_block, 1024);
		CHECK_INT(d.sm_count, 132);
		device_model_release(&dm);
		json_decref(volta);
		json_decref(h200);
	}
	/* a device the reader refuses */
	CHECK_INT(rank_of(&r, k, "{\"schema\": \"cacheadvise.device/1\", \"shared_per_sm\": \"lots\"}"),
		  CA_E_INPUT);
	CHECK(strstr(error_message(), "shared_per_sm") != NULL);
	CHECK_INT(rank_of(&r, k, "{\"schema\": \"cacheadvise.device/1\", \"shared_per_sm\": 0}"),
		  CA_E_INPUT);

	softcache_rank_release(&r);
	softcache_rank_release(&r);  /* released twice is fine */
}

int main(void)
{
	test_cln_threads_limited();
	test_two_x_rule();
	test_two_lines_order_and_reasons();
	test_cln_zero();
	test_shared_and_grid_limits();
	test_from_capture();
	return check_done();
}
