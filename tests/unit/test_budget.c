/* The profile's time budget (analysis/budget.h). */
#include <math.h>

#include "analysis/budget.h"
#include "tests/unit/check.h"

int main(void)
{
	/* 20x a 17 s program: 340 s; a 0.26 s program gets the 15 s floor */
	CHECK_NEAR(budget_limit_seconds(20, 17), 340, 1e-9);
	CHECK_NEAR(budget_limit_seconds(20, 0.26), BUDGET_MIN_SECONDS, 1e-9);
	CHECK(isinf(budget_limit_seconds(0, 17)));       /* --budget 0: none */
	CHECK(isinf(budget_limit_seconds(20, NAN)));     /* no native time known */
	CHECK(isinf(budget_limit_seconds(20, 0)));
	CHECK_NEAR(budget_estimate_seconds(11, 18.5), 203.5, 1e-9);
	CHECK_NEAR(budget_estimate_seconds(11, NAN), 0, 0);
	/* the torch.compile program: two L2 windows timed over 5 rounds (22
	 * runs of 18 s) after 120 s spent do not fit in 340 s; a screening
	 * round does */
	CHECK(!budget_allows(340, 120, budget_estimate_seconds(22, 18)));
	CHECK(budget_allows(340, 120, budget_estimate_seconds(3, 18)));
	CHECK(budget_allows(INFINITY, 1e9, 1e9));
	CHECK(budget_allows(15, 15, 0));
	CHECK(!budget_allows(15, 15, 0.1));
	return check_done();
}
