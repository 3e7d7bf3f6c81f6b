#include "analysis/launch_sampling.h"

#include <math.h>
#include <stdio.h>

#include "analysis/ptx.h"
#include "base/xalloc.h"

size_t launch_sample_ordinals(uint64_t launches, size_t samples, uint64_t *out)
{
	uint64_t first, span;
	size_t i;

	if (!launches || !samples)
		return 0;
	if (launches <= samples) {
		for (i = 0; i < launches; i++)
			out[i] = i;
		return (size_t)launches;
	}
	/* launches > samples >= 1: skip launch 0, spread over [1, launches) */
	first = 1;
	span = launches - first;
	for (i = 0; i < samples; i++)
		out[i] = first + (uint64_t)((double)span * (2 * i + 1) / (2.0 * samples));
	return samples;
}

static void set_variant(struct measure_variant *v, uint64_t mask, const char *fmt, size_t a, size_t b)
{
	v->mask = mask;
	snprintf(v->label, sizeof(v->label), fmt, a, b);
	v->when_hits[0] = v->when_hits[1] = -1;
}

struct measure_variant *measure_singles(size_t n, size_t *nr)
{
	struct measure_variant *v = xcalloc(n + 2, sizeof(*v));
	uint64_t all = n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
	size_t i;

	set_variant(&v[0], all, "all", 0, 0);
	set_variant(&v[1], 0, "none", 0, 0);
	for (i = 0; i < n; i++)
		set_variant(&v[2 + i], (uint64_t)1 << i, "%zu", i, 0);
	*nr = n + 2;
	return v;
}

int launch_single_moves_hits(double hits, double none_hits)
{
	double base = isnan(none_hits) || none_hits < 0 ? 0 : none_hits;

	return !isnan(hits) && fabs(hits - base) > LAUNCH_HITS_TOLERANCE * base && hits != base;
}

struct measure_variant *measure_pairs(size_t n, const double *hit, double none_hits, int all_pairs,
				      size_t *nr, size_t *skipped)
{
	struct measure_variant *v = xcalloc(n * (n - (n > 0)) / 2 + 1, sizeof(*v));
	size_t i, j;

	*nr = 0;
	*skipped = 0;
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			int hi = hit && launch_single_moves_hits(hit[i], none_hits);
			int hj = hit && launch_single_moves_hits(hit[j], none_hits);
			int unknown = !hit || isnan(hit[i]) || isnan(hit[j]);

			if (!all_pairs && !hi && !hj && !unknown) {
				(*skipped)++;
				continue;
			}
			set_variant(&v[(*nr)++], ((uint64_t)1 << i) | ((uint64_t)1 << j), "%zu,%zu", i, j);
		}
	}
	return v;
}

int launch_replay_written(const struct ptx_function *fn, int own_modules, unsigned *written,
			  size_t *nr, char **why)
{
	size_t i, j;

	*nr = 0;
	*why = NULL;
	for (i = 0; i < fn->nr_memops; i++) {
		const struct ptx_memop *op = &fn->memops[i];
		int seen = 0;

		if (op->kind != PTX_MEMOP_STORE && op->kind != PTX_MEMOP_ATOMIC)
			continue;
		if (op->param < 0 && op->module_var >= 0 && own_modules)
			continue;
		if (op->param < 0 && op->module_var >= 0) {
			*why = xasprintf("PTX line %u (%s) writes a module-scope variable, which a "
					 "replay in the program's own module would change",
					 op->ptx_line, op->opcode);
			*nr = 0;
			return 0;
		}
		if (op->param < 0) {
			*why = xasprintf("PTX line %u (%s) writes through an address not derived from "
					 "one parameter", op->ptx_line, op->opcode);
			*nr = 0;
			return 0;
		}
		for (j = 0; j < *nr; j++)
			seen |= written[j] == (unsigned)op->param;
		if (!seen && *nr < fn->nr_params)
			written[(*nr)++] = (unsigned)op->param;
	}
	return 1;
}

int launch_writes_module_var(const struct ptx_function *fn)
{
	size_t i;

	for (i = 0; i < fn->nr_memops; i++)
		if ((fn->memops[i].kind == PTX_MEMOP_STORE || fn->memops[i].kind == PTX_MEMOP_ATOMIC) &&
		    fn->memops[i].param < 0 && fn->memops[i].module_var >= 0)
			return 1;
	return 0;
}

struct measure_variant *measure_pairs_when_hits(size_t n, size_t *nr)
{
	struct measure_variant *v = measure_pairs(n, NULL, NAN, 1, nr, &(size_t){ 0 });
	size_t i;

	for (i = 0; i < *nr; i++) {
		int b;
		for (b = 0; b < 64; b++)
			if (v[i].mask >> b & 1)
				v[i].when_hits[v[i].when_hits[0] < 0 ? 0 : 1] = b;
	}
	return v;
}

double count_resolve_noise(double measured, double *noise)
{
	*noise = NAN;
	if (!(measured < 0))
		return measured;
	*noise = measured;
	return 0;
}

double pair_hits_at_one_launch(double pair_at, double i_at, double j_at, double hit_i,
			       double hit_j, double launches)
{
	return hit_i + hit_j + (pair_at - i_at - j_at) * launches;
}
