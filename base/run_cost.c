/*
 * The run cost mechanisms' names: see run_cost.h.
 */
#include "base/run_cost.h"

#include <string.h>

/* In the order of enum run_cost_mechanism. */
const char *const run_cost_mechanisms[RUN_COST_NR_MECHANISMS] = {
	"injection_setup", "module_reading", "module_jit", "counter_config", "counter_setup",
	"counter_reading", "replays", "event_writing",
};

int run_cost_mechanism_of(const char *name)
{
	int i;

	for (i = 0; i < RUN_COST_NR_MECHANISMS; i++)
		if (!strcmp(name, run_cost_mechanisms[i]))
			return i;
	return -1;
}
