#include "analysis/plan_query.h"
#include "tests/unit/check.h"

static void test_queries(void)
{
	struct plan p;
	unsigned measured[] = { 0, 1, 2 };

	plan_init(&p);
	CHECK_INT(plan_has_loads(&p), 0);
	plan_set(&p, "aaaa", "k1", 1, LOAD_ACTION_NO_ALLOCATE);
	plan_set(&p, "aaaa", "k1", 2, LOAD_ACTION_EVICT_LAST);
	plan_set(&p, NULL, "k2", 0, LOAD_ACTION_BYPASS);
	CHECK_INT(plan_has_loads(&p), 1);
	CHECK_INT(plan_has_l2(&p), 0);
	CHECK_INT(plan_l2(&p, "aaaa", "k1", 1), L2_PRIORITY_NONE);
	CHECK_INT(plan_l2(&p, "aaaa", "k1", 7), -1);
	plan_set_l2(&p, "aaaa", "k1", 2, L2_PRIORITY_EVICT_LAST);
	CHECK_INT(plan_has_l2(&p), 1);
	CHECK_INT(plan_l2(&p, "aaaa", "k1", 2), L2_PRIORITY_EVICT_LAST);
	CHECK_INT(plan_mentions(&p, "k1"), 1);
	CHECK_INT(plan_mentions(&p, "k3"), 0);
	CHECK_INT(plan_action(&p, "aaaa", "k1", 1), LOAD_ACTION_NO_ALLOCATE);
	CHECK_INT(plan_action(&p, "bbbb", "k1", 1), -1);
	/* an entry without a module id applies to every module */
	CHECK_INT(plan_action(&p, "bbbb", "k2", 0), LOAD_ACTION_BYPASS);
	CHECK_INT(plan_action_bypasses(LOAD_ACTION_BYPASS), 1);
	CHECK_INT(plan_action_bypasses(LOAD_ACTION_EVICT_LAST), 0);
	CHECK_INT(plan_action_bypasses(-1), 0);
	/* load 1 bypassed; 0 (no entry) and 2 (evict_last) allocate */
	CHECK_INT(plan_cached_mask(&p, "aaaa", "k1", measured, 3), 0x5);
	plan_drop_function(&p, "k1");
	CHECK_INT(plan_has_l2(&p), 0);
	CHECK_INT(plan_mentions(&p, "k1"), 0);
	CHECK_INT(plan_action(&p, "aaaa", "k1", 1), -1);
	CHECK_INT(plan_has_loads(&p), 1);
	plan_drop_function(&p, "k2");
	CHECK_INT(plan_has_loads(&p), 0);
	plan_release(&p);
}

int main(void)
{
	test_queries();
	return check_done();
}
