#include "analysis/load_choice.h"
#include "tests/unit/check.h"

/* Few enough loads: all of them, in text order. */
static void test_all(void)
{
	unsigned p[] = { 0, 2, 3 }, m[3] = { 9, 9, 9 };
	struct load_choice lc;

	load_choice_pick(p, NULL, NULL, 3, 24, m, &lc);
	CHECK_INT(lc.nr_measured, 3);
	CHECK_INT(lc.left_out, 0);
	CHECK(m[0] == 0 && m[1] == 2 && m[2] == 3);
}

/* Over --max-loads without monitor counts: the first in the PTX. */
static void test_text_order(void)
{
	unsigned p[] = { 1, 4, 5, 7, 8 }, m[5] = { 0 };
	struct load_choice lc;

	load_choice_pick(p, NULL, NULL, 5, 2, m, &lc);
	CHECK_INT(lc.nr_measured, 2);
	CHECK_INT(lc.left_out, 3);
	CHECK_INT(lc.by_traffic, 0);
	CHECK(m[0] == 1 && m[1] == 4);
}

/* Over --max-loads with counts: the busiest, listed in ordinal order; ties
 * go to the earlier load. */
static void test_busiest(void)
{
	unsigned p[] = { 1, 4, 5, 7, 8 }, m[5] = { 0 };
	uint64_t s[] = { 10, 500, 20, 900, 20 };
	struct load_choice lc;

	load_choice_pick(p, s, NULL, 5, 3, m, &lc);
	CHECK_INT(lc.nr_measured, 3);
	CHECK_INT(lc.left_out, 2);
	CHECK_INT(lc.by_traffic, 1);
	CHECK(m[0] == 4 && m[1] == 5 && m[2] == 7);
	CHECK_INT(lc.kept_sectors, 1420);
	CHECK_INT(lc.total_sectors, 1450);
}

/*
 * Loads of one site (helper_loads' consume: the table's gather unrolled
 * into copies 1, 3, 5, 7, busier than the stream's 0, 2, 4, 6): one load
 * of every site comes before a second copy of any. With counts, the
 * busiest copy of each; without, the first of each in the text.
 */
static void test_sites(void)
{
	unsigned p[] = { 0, 1, 2, 3, 4, 5, 6, 7 }, m[8] = { 0 };
	uint64_t s[] = { 69, 553, 69, 554, 69, 553, 70, 552 };
	size_t site[] = { 0, 1, 0, 1, 0, 1, 0, 1 };
	struct load_choice lc;

	load_choice_pick(p, s, site, 8, 3, m, &lc);
	CHECK_INT(lc.nr_measured, 3);
	/* round 1: load 3 (the gather's busiest), load 6 (the stream's); then load 1 */
	CHECK(m[0] == 1 && m[1] == 3 && m[2] == 6);
	CHECK_INT(lc.kept_sectors, 553 + 554 + 70);
	/* without sites the busiest three are all the gather's */
	load_choice_pick(p, s, NULL, 8, 3, m, &lc);
	CHECK(m[0] == 1 && m[1] == 3 && m[2] == 5);
	/* without counts: the first load of each site, then the next in the text */
	load_choice_pick(p, NULL, site, 8, 3, m, &lc);
	CHECK_INT(lc.by_traffic, 0);
	CHECK(m[0] == 0 && m[1] == 1 && m[2] == 2);
	/* a site alone: the text order, as before */
	{
		size_t one[] = { 0, 0, 0, 0, 0, 0, 0, 0 };

		load_choice_pick(p, NULL, one, 8, 2, m, &lc);
		CHECK(m[0] == 0 && m[1] == 1);
	}
}

int main(void)
{
	test_sites();
	test_all();
	test_text_order();
	test_busiest();
	return check_done();
}
