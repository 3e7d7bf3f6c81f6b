/*
 * collectors/variant_sums.h: the in-run capture's variants summed over its
 * passes, from real events files read by the events reader.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "collectors/events.h"
#include "collectors/variant_sums.h"
#include "tests/unit/check.h"

/* Reads text as one run's events.jsonl into ev. */
static void load(struct run_events *ev, const char *text)
{
	char path[] = "/tmp/ca-test-variant-sums-XXXXXX";
	int fd = mkstemp(path);
	size_t n = strlen(text);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n) {
		perror("temporary file");
		exit(1);
	}
	close(fd);
	run_events_init(ev);
	CHECK_INT(run_events_load(ev, path), 0);
	unlink(path);
}

int main(void)
{
	struct run_events ev;
	struct variant_sums s;
	const struct variant_sum *v;
	double h = -1;
	json_t *j;

	variant_sums_init(&s);
	/* pass 1 (run 3): "all" with every counter at two launches; single "0"
	 * and pair "0,1" with their hits, the pair at one of them */
	load(&ev,
	     "{\"ev\":\"metrics\",\"seq\":5,\"kernel\":\"k\",\"variant\":\"all\",\"ordinal\":5,\"values\":{\"l1_hits\":10,\"l1_sectors\":40,\"dram_bytes_read\":4096}}\n"
	     "{\"ev\":\"metrics\",\"seq\":9,\"kernel\":\"k\",\"variant\":\"all\",\"ordinal\":9,\"values\":{\"l1_hits\":14,\"l1_sectors\":40,\"dram_bytes_read\":2048}}\n"
	     "{\"ev\":\"metrics\",\"seq\":5,\"kernel\":\"k\",\"variant\":\"0\",\"ordinal\":5,\"values\":{\"l1_hits\":7}}\n"
	     "{\"ev\":\"metrics\",\"seq\":9,\"kernel\":\"k\",\"variant\":\"0\",\"ordinal\":9,\"values\":{\"l1_hits\":9}}\n"
	     "{\"ev\":\"metrics\",\"seq\":5,\"kernel\":\"k\",\"variant\":\"0,1\",\"ordinal\":5,\"values\":{\"l1_hits\":12}}\n");
	CHECK(variant_sums_add(&s, run_events_kernel(&ev, "k"), "all", 3));
	CHECK(variant_sums_add(&s, run_events_kernel(&ev, "k"), "0", 3));
	CHECK(variant_sums_add(&s, run_events_kernel(&ev, "k"), "0,1", 3));
	CHECK(!variant_sums_add(&s, run_events_kernel(&ev, "k"), "1", 3));   /* not measured */
	CHECK(!variant_sums_add(&s, run_events_kernel(&ev, "other"), "all", 3));
	run_events_release(&ev);
	CHECK_INT(s.nr, 3);
	CHECK(variant_sums_get(&s, "1") == NULL);
	v = variant_sums_get(&s, "all");
	CHECK(v != NULL);
	if (v) {
		CHECK_NEAR(variant_sum_metric(v, "l1_hits"), 24, 0);
		CHECK_NEAR(variant_sum_metric(v, "dram_bytes_read"), 6144, 0);
		CHECK(isnan(variant_sum_metric(v, "duration_ns")));   /* not measured */
		CHECK(isnan(variant_sum_metric(v, "nonsense")));
		CHECK_NEAR(v->samples, 2, 0);
		CHECK_INT(v->run, 3);
		/* scaled to the kernel's 20 launches: x10 */
		j = variant_sum_scaled_json(v, 20);
		CHECK_NEAR(json_number_value(json_object_get(j, "l1_hits")), 240, 1e-9);
		CHECK_INT(json_integer_value(json_object_get(j, "run")), 3);
		CHECK_INT(json_integer_value(json_object_get(j, "launches")), 20);
		CHECK_INT(json_integer_value(json_object_get(j, "sampled_launches")), 2);
		CHECK(json_object_get(j, "duration_ns") == NULL);
		json_decref(j);
	}

	/* pass 2 (run 4): the single again at launch 9 (its value there is the
	 * later pass's) and at a new launch 13 */
	load(&ev,
	     "{\"ev\":\"metrics\",\"seq\":9,\"kernel\":\"k\",\"variant\":\"0\",\"ordinal\":9,\"values\":{\"l1_hits\":11}}\n"
	     "{\"ev\":\"metrics\",\"seq\":13,\"kernel\":\"k\",\"variant\":\"0\",\"ordinal\":13,\"values\":{\"l1_hits\":1}}\n");
	CHECK(variant_sums_add(&s, run_events_kernel(&ev, "k"), "0", 4));
	run_events_release(&ev);
	v = variant_sums_get(&s, "0");
	CHECK(v != NULL);
	if (v) {
		CHECK_NEAR(variant_sum_metric(v, "l1_hits"), 7 + 9 + 11 + 1, 0);
		CHECK_NEAR(v->samples, 4, 0);
		CHECK_INT(v->run, 4);
		CHECK_INT(v->nr_at, 3);
		CHECK(variant_sum_hits_at(v, -1, 9, &h));
		CHECK_NEAR(h, 11, 0);
		CHECK(variant_sum_hits_at(v, -1, 5, &h));
		CHECK_NEAR(h, 7, 0);
		CHECK(!variant_sum_hits_at(v, -1, 6, &h));
	}
	/* capture.json's record of them */
	j = variant_sums_to_json(&s);
	CHECK_INT(json_object_size(j), 3);
	CHECK_NEAR(json_number_value(json_object_get(json_object_get(j, "0,1"), "l1_hits")), 12, 0);
	CHECK_NEAR(json_number_value(json_object_get(json_object_get(j, "0"), "samples")), 4, 0);
	json_decref(j);
	variant_sums_release(&s);
	return check_done();
}
