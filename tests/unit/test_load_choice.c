#include "analysis/load_choice.h"
#include "tests/unit/check.h"

/* Few enough loads: all of them, in text order. */
static void test_all(void)
{
	unsigned p[] = { 0, 2, 3 }, m[3] = { 9, 9, 9 };
	struct load_choice lc;

	load_choice_pick(p, NULL, 3, 24, m, &lc);
	CHECK_INT(lc.nr_measured, 3);
	CHECK_INT(lc.left_out, 0);
	CHECK(m[0] == 0 && m[1] == 2 && m[2] == 3);
}

/* Over --max-loads without monitor counts: the first in the PTX. */
static void test_text_order(void)
{
	unsigned p[] = { 1, 4, 5, 7, 8 }, m[5] = { 0 };
	struct load_choice lc;

	load_choice_pick(p, NULL, 5, 2, m, &lc);
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

	load_choice_pick(p, s, 5, 3, m, &lc);
	CHECK_INT(lc.nr_measured, 3);
	CHECK_INT(lc.left_out, 2);
	CHECK_INT(lc.by_traffic, 1);
	CHECK(m[0] == 4 && m[1] == 5 && m[2] == 7);
	CHECK_INT(lc.kept_sectors, 1420);
	CHECK_INT(lc.total_sectors, 1450);
}

int main(void)
{
	test_all();
	test_text_order();
	test_busiest();
	return check_done();
}
