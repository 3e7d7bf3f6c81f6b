/*
 * A job's ranks apart (issue 29): capture.json's kernels[].ranks read and
 * written by the one reader and writer, refused where wrong, and
 * analysis/rank_spread.h's spread and naming of the rank that differs.
 */
#include <math.h>

#include <jansson.h>

#include "analysis/capture_model.h"
#include "analysis/rank_spread.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "check.h"

static json_t *real_capture(void)
{
	char *path = xasprintf("%s/tests/fixtures/capture-real/capture.json",
			       getenv("CA_SOURCE_DIR") ? getenv("CA_SOURCE_DIR") : ".");
	json_t *doc = json_file_load(path);

	free(path);
	return doc;
}

/* A rank's entry: hits per launch of loads 3, 0 and (hit2 >= 0) 1. */
static json_t *rank(int r, const char *gpu, double hit3, double hit0, double hit1)
{
	json_t *loads = json_pack("[{s:i, s:f, s:i}, {s:i, s:f, s:i}]", "ordinal", 3,
				  "hit_per_launch", hit3, "samples", 8, "ordinal", 0,
				  "hit_per_launch", hit0, "samples", 8);

	if (hit1 >= 0)
		json_array_append_new(loads, json_pack("{s:i, s:f, s:i}", "ordinal", 1,
						       "hit_per_launch", hit1, "samples", 4));
	return json_pack("{s:i, s:s?, s:i, s:o}", "rank", r, "gpu", gpu, "launches", 24,
			 "loads", loads);
}

/* Reads doc with kernels[0].ranks = ranks (stolen); the reader's result. */
static int read_with(json_t *doc, json_t *ranks, struct capture *cap)
{
	json_object_set_new(json_array_get(json_object_get(doc, "kernels"), 0), "ranks", ranks);
	capture_init(cap);
	error_clear();
	return capture_from_json(cap, doc, "capture.json");
}

static void test_read_write(void)
{
	json_t *doc = real_capture(), *back;
	struct capture cap;
	const struct capture_kernel *k;

	if (!doc) {
		CHECK(!"capture-real/capture.json reads");
		return;
	}
	CHECK_INT(read_with(doc, json_pack("[o, o]", rank(0, "0000:1b:00.0", 100, 5, 2),
					   rank(1, NULL, 60, 5, -1)), &cap), 0);
	k = &cap.kernels[0];
	CHECK_INT(k->nr_ranks, 2);
	if (k->nr_ranks == 2) {
		CHECK_INT(k->ranks[0].rank, 0);
		CHECK_STR(k->ranks[0].gpu, "0000:1b:00.0");
		CHECK(k->ranks[1].gpu == NULL);
		CHECK_INT(k->ranks[0].launches, 24);
		CHECK_INT(k->ranks[0].nr_loads, 3);
		CHECK_INT(k->ranks[1].nr_loads, 2);
		CHECK_NEAR(k->ranks[1].loads[0].hit_per_launch, 60, 0);
		CHECK_NEAR(k->ranks[0].loads[2].samples, 4, 0);
	}
	back = capture_to_json(&cap);
	CHECK(json_equal(back, doc));
	json_decref(back);
	capture_release(&cap);

	/* refused, each naming the field */
	CHECK_INT(read_with(doc, json_pack("[o, o]", rank(0, NULL, 1, 1, -1), rank(0, NULL, 1, 1, -1)),
			    &cap), CA_E_INPUT);
	CHECK(strstr(error_message(), "kernels[0].ranks[1].rank: rank 0 is listed twice") != NULL);
	capture_release(&cap);
	CHECK_INT(read_with(doc, json_pack("[o]", rank(0, NULL, -3, 1, -1)), &cap), CA_E_INPUT);
	CHECK(strstr(error_message(), "kernels[0].ranks[0].loads[0].hit_per_launch: -3 is not a count") != NULL);
	capture_release(&cap);
	CHECK_INT(read_with(doc, json_pack("[{s:i, s:[{s:i, s:f, s:i}]}]", "rank", 0, "loads",
					   "ordinal", 77, "hit_per_launch", 1.0, "samples", 1), &cap),
		  CA_E_INPUT);
	CHECK(strstr(error_message(), "kernels[0].ranks[0].loads[0].ordinal: not a load of the kernel") != NULL);
	capture_release(&cap);
	CHECK_INT(read_with(doc, json_pack("[{s:i, s:[{s:i, s:f, s:i}]}]", "rank", 0, "loads",
					   "ordinal", 3, "hit_per_launch", 1.0, "samples", 0), &cap),
		  CA_E_INPUT);
	CHECK(strstr(error_message(), "samples: 0 is not a size") != NULL);
	capture_release(&cap);
	CHECK_INT(read_with(doc, json_pack("[{s:s}]", "gpu", "x"), &cap), CA_E_INPUT);
	CHECK(strstr(error_message(), "kernels[0].ranks[0].rank: missing") != NULL);
	capture_release(&cap);
	CHECK_INT(read_with(doc, json_string("all"), &cap), CA_E_INPUT);
	CHECK(strstr(error_message(), "kernels[0].ranks: not an array") != NULL);
	capture_release(&cap);
	json_decref(doc);
}

/* rank_spread of kernels[0] with the given ranks. */
static void spread_of(json_t *ranks, struct rank_spread *rs)
{
	json_t *doc = real_capture();
	struct capture cap;

	memset(rs, 0, sizeof(*rs));
	if (!doc || read_with(doc, ranks, &cap)) {
		CHECK(!"the capture reads");
		json_decref(doc);
		return;
	}
	rank_spread_compute(&cap.kernels[0], rs);
	capture_release(&cap);
	json_decref(doc);
}

static void test_spread(void)
{
	struct rank_spread rs;

	/* three ranks: rank 2 reads 40% fewer hits on load 3, the load that
	 * matters; load 0 is too small to matter (5 < 10% of 100) whatever rank
	 * 2 does there; load 1 was measured on one rank */
	spread_of(json_pack("[o, o, o]", rank(0, "A", 100, 5, 7), rank(1, "B", 104, 5, -1),
			    rank(2, "C", 60, 1, -1)), &rs);
	CHECK_INT(rs.nr_ranks, 3);
	CHECK_INT(rs.nr_loads, 2);          /* loads 0 and 3, by ordinal */
	if (rs.nr_loads == 2) {
		CHECK_INT(rs.loads[0].ordinal, 0);
		CHECK_INT(rs.loads[1].ordinal, 3);
		CHECK_NEAR(rs.loads[1].median, 100, 1e-9);
		CHECK_NEAR(rs.loads[1].min, 60, 1e-9);
		CHECK_INT(rs.loads[1].min_rank, 2);
		CHECK_INT(rs.loads[1].max_rank, 1);
		CHECK_NEAR(rs.loads[1].spread, 0.44, 1e-9);
	}
	CHECK_NEAR(rs.max_spread, 0.44, 1e-9);  /* load 0's 0.8 does not matter */
	CHECK_INT(rs.nr_differs, 1);
	if (rs.nr_differs == 1) {
		CHECK_INT(rs.differs[0].rank, 2);
		CHECK_STR(rs.differs[0].gpu, "C");
		CHECK_INT(rs.differs[0].ordinal, 3);
		CHECK_NEAR(rs.differs[0].hit_per_launch, 60, 1e-9);
	}
	rank_spread_release(&rs);

	/* within 25% of the median: nobody is named */
	spread_of(json_pack("[o, o, o]", rank(0, NULL, 100, 5, -1), rank(1, NULL, 110, 5, -1),
			    rank(2, NULL, 80, 5, -1)), &rs);
	CHECK_INT(rs.nr_differs, 0);
	CHECK_NEAR(rs.max_spread, 0.3, 1e-9);
	rank_spread_release(&rs);

	/* two ranks apart: neither is the majority, both are named */
	spread_of(json_pack("[o, o]", rank(0, NULL, 100, 5, -1), rank(1, NULL, 50, 5, -1)), &rs);
	CHECK_INT(rs.nr_differs, 2);
	rank_spread_release(&rs);

	/* a difference below a sector per launch is noise */
	spread_of(json_pack("[o, o, o]", rank(0, NULL, 2, 0, -1), rank(1, NULL, 2, 0, -1),
			    rank(2, NULL, 1.2, 0, -1)), &rs);
	CHECK_INT(rs.nr_differs, 0);
	rank_spread_release(&rs);

	/* one rank: nothing to compare */
	spread_of(json_pack("[o]", rank(0, NULL, 100, 5, -1)), &rs);
	CHECK_INT(rs.nr_ranks, 1);
	CHECK_INT(rs.nr_loads, 0);
	CHECK(isnan(rs.max_spread));
	rank_spread_release(&rs);
}

int main(void)
{
	test_read_write();
	test_spread();
	return check_done();
}
