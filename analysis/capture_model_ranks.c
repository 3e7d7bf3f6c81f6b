/* The capture model (analysis/capture_model_internal.h): kernels[].ranks (issue 29). */
#include "analysis/capture_model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/xalloc.h"

/* kernels[].ranks (issue 29). */
int capture_read_ranks(const struct rd *r, json_t *arr, const char *path, struct capture_kernel *k)
{
	json_t *v, *loads, *x;
	char sub[240], lsub[280];
	size_t i, j, a;
	int ret;

	if (!json_is_array(arr))
		return capture_fail(r, path, NULL, "not an array");
	k->ranks = xcalloc(json_array_size(arr) + 1, sizeof(*k->ranks));
	json_array_foreach(arr, i, v) {
		struct capture_kernel_rank *rk = &k->ranks[k->nr_ranks++];
		long long rank;

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		rk->source = SEC(v);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_int(r, v, sub, "rank", &rank, 0, 1 << 30, -1)) ||
		    (ret = capture_rd_str(r, v, sub, "gpu", &rk->gpu, 0)) ||
		    (ret = capture_rd_int(r, v, sub, "launches", &rk->launches, 0,
					  (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = capture_rd_array(r, v, sub, "loads", &loads)))
			return ret;
		if (rank < 0)
			return capture_fail(r, sub, "rank", "missing: the rank of the job");
		rk->rank = (int)rank;
		for (a = 0; a + 1 < k->nr_ranks; a++)
			if (k->ranks[a].rank == rk->rank)
				return capture_fail(r, sub, "rank", "rank %d is listed twice", rk->rank);
		rk->loads = xcalloc(json_array_size(loads) + 1, sizeof(*rk->loads));
		json_array_foreach(loads, j, x) {
			struct capture_rank_load *l = &rk->loads[rk->nr_loads++];
			long long ord;

			snprintf(lsub, sizeof(lsub), "%s.loads[%zu]", sub, j);
			l->source = SEC(x);
			if ((ret = capture_rd_object(r, x, lsub)) ||
			    (ret = capture_rd_int(r, x, lsub, "ordinal", &ord, 0, 0x7fffffff, -1)) ||
			    (ret = capture_rd_num(r, x, lsub, "hit_per_launch", &l->hit_per_launch,
						  NUM_COUNT)) ||
			    (ret = capture_rd_num(r, x, lsub, "samples", &l->samples, NUM_POSITIVE)))
				return ret;
			if (ord < 0 || !capture_kernel_find_load(k, (unsigned)ord))
				return capture_fail(r, lsub, "ordinal", "not a load of the kernel");
			if (isnan(l->hit_per_launch) || isnan(l->samples))
				return capture_fail(r, lsub, NULL, "hit_per_launch and samples are required");
			l->ordinal = (unsigned)ord;
			for (a = 0; a + 1 < rk->nr_loads; a++)
				if (rk->loads[a].ordinal == l->ordinal)
					return capture_fail(r, lsub, "ordinal", "load %u is listed twice",
							    l->ordinal);
		}
	}
	return 0;
}

/* kernels[].ranks */
json_t *capture_ranks_json(const struct capture_kernel *k)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < k->nr_ranks; i++) {
		const struct capture_kernel_rank *rk = &k->ranks[i];
		json_t *rj = capture_start(rk->source), *loads = json_array();
		size_t a;

		json_object_set_new(rj, "rank", json_integer(rk->rank));
		capture_put_str(rj, "gpu", rk->gpu);
		capture_put_int(rj, "launches", rk->launches, -1);
		for (a = 0; a < rk->nr_loads; a++) {
			json_t *lj = capture_start(rk->loads[a].source);

			json_object_set_new(lj, "ordinal", json_integer(rk->loads[a].ordinal));
			capture_put_num(lj, "hit_per_launch", rk->loads[a].hit_per_launch);
			capture_put_num(lj, "samples", rk->loads[a].samples);
			json_array_append_new(loads, lj);
		}
		json_object_set_new(rj, "loads", loads);
		json_array_append_new(arr, rj);
	}
	return arr;
}

void capture_ranks_release(struct capture_kernel *k)
{
	size_t i;

	for (i = 0; i < k->nr_ranks; i++) {
		free(k->ranks[i].gpu);
		free(k->ranks[i].loads);
	}
	free(k->ranks);
}
