/*
 * analysis/patch_plan.c: the plan a source patch delivers, on the advice of
 * the committed real capture (stream_table: loads 0 and 2 bypassed, load 3
 * left as is).
 */
#include "analysis/patch_plan.h"
#include "analysis/plan_query.h"
#include "tests/unit/check.h"

#define DK "_Z11decode_keysPK5uint4jmjPKjjS3_jjPj"
#define MOD "83c50ebd491c19e2"

static void advice(struct plan *p)
{
	plan_init(p);
	plan_set(p, MOD, DK, 0, LOAD_ACTION_NO_ALLOCATE);
	plan_set(p, MOD, DK, 2, LOAD_ACTION_NO_ALLOCATE);
	plan_set(p, MOD, DK, 3, LOAD_ACTION_DEFAULT);
}

static size_t count(const struct plan *p)
{
	size_t m, f, n = 0;

	for (m = 0; m < p->nr_modules; m++)
		for (f = 0; f < p->modules[m].nr_functions; f++)
			n += p->modules[m].functions[f].nr_loads;
	return n;
}

int main(void)
{
	struct plan a, out;
	/* Before issue 17: the patch rewrote load 0 only (load 2 is in an inlined helper). */
	const struct patch_plan_load old[] = { { MOD, DK, 0 }, { MOD, DK, 3 } };
	const struct patch_plan_load all[] = { { MOD, DK, 0 }, { NULL, DK, 2 }, { MOD, DK, 3 } };
	const struct patch_plan_load other[] = { { "ffffffffffffffff", DK, 2 }, { MOD, "k", 0 } };

	advice(&a);
	plan_init(&out);
	CHECK_INT(patch_plan_from(&a, old, 2, &out), 1);
	CHECK_INT(count(&out), 2);
	CHECK_INT(out.nr_modules, 1);
	if (out.nr_modules == 1 && out.modules[0].nr_functions == 1) {
		CHECK_STR(out.modules[0].id, MOD);
		CHECK_INT(out.modules[0].functions[0].loads[0].ordinal, 0);
		CHECK_INT(out.modules[0].functions[0].loads[0].action, LOAD_ACTION_NO_ALLOCATE);
		CHECK_INT(out.modules[0].functions[0].loads[1].ordinal, 3);
	}
	plan_release(&out);

	/* Everything delivered: the same plan, nothing to time again. */
	plan_init(&out);
	CHECK_INT(patch_plan_from(&a, all, 3, &out), 0);
	CHECK_INT(count(&out), 3);
	plan_release(&out);

	/* Another module's load or another function delivers nothing here. */
	plan_init(&out);
	CHECK_INT(patch_plan_from(&a, other, 2, &out), 3);
	CHECK_INT(count(&out), 0);
	CHECK(!plan_has_loads(&out));
	plan_release(&out);

	/* No advice: nothing left out. */
	plan_release(&a);
	plan_init(&a);
	plan_init(&out);
	CHECK_INT(patch_plan_from(&a, all, 3, &out), 0);
	plan_release(&out);
	plan_release(&a);
	return check_done();
}
