/*
 * `profile`'s analyse and emit steps. The analysis (analysis/advise.h:
 * graphs, every solver, the plan) runs once per profile; every emit after
 * it writes that analysis with the plan as the later steps left it
 * (verification drops what was not kept, L2 adds its windows).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/advise.h"
#include "analysis/capture_model.h"
#include "analysis/plan.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "emitters/capture_layout.h"
#include "emitters/capture_write.h"
#include "src/profile/internal.h"

/* graphs/<kernel>.json: each kernel's traffic reduction graph, as `solve` reads it. */
static int write_graphs(struct profile_ctx *c, const struct analysis *analysis)
{
	size_t i;

	for (i = 0; i < analysis->nr_kernels; i++) {
		char *path = capture_layout_graph(c->dir, analysis->kernels[i].name);
		json_t *g;
		int ret;

		if (!path)
			continue;
		g = graph_to_json(&analysis->kernels[i].g);
		ret = json_file_write(path, g);
		json_decref(g);
		free(path);
		if (ret)
			return ret;
	}
	return 0;
}

int profile_analyse(struct profile_ctx *c)
{
	struct advise_options ao;
	struct capture cap;
	int ret;

	if (c->plan)
		return 0;
	advise_options_init(&ao);
	ao.model = !strcmp(c->opt->model, "classic") ? ADVISE_MODEL_CLASSIC : ADVISE_MODEL_SECTOR;
	c->plan = xcalloc(1, sizeof(*c->plan));
	plan_init(c->plan);
	c->source_plan = xcalloc(1, sizeof(*c->source_plan));
	plan_init(c->source_plan);
	/* the analysis reads the capture as `report` will: through its one reader */
	capture_init(&cap);
	ret = capture_from_json(&cap, c->capture, CAPTURE_LAYOUT_CAPTURE);
	if (!ret)
		ret = advise_capture(&cap, &ao, c->plan, c->source_plan, &c->analysis);
	capture_release(&cap);
	if (ret)
		return error_prefix(ret, "cannot analyse the capture in '%s'", c->dir);
	return write_graphs(c, &c->analysis);
}

int profile_emit(struct profile_ctx *c)
{
	int ret = capture_write_analysed(c->dir, c->capture, &c->analysis, c->plan,
					 c->source_plan, NULL);

	if (ret)
		return error_prefix(ret, "cannot write the results into '%s'", c->dir);
	return 0;
}
