#include "analysis/softcache_rank.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

void softcache_device_init(struct softcache_device *d)
{
	d->shared_per_sm = 233472;
	d->shared_per_block_optin = 232448;
	d->reserved_shared_per_block = 1024;
	d->shared_alloc_unit = 128;
	d->max_threads_per_sm = 2048;
	d->max_blocks_per_sm = 32;
	d->warp_size = 32;
	d->sm_count = 0;
}

void softcache_device_from_model(struct softcache_device *d, const struct device_model *dm)
{
	softcache_device_init(d);
	if (!dm)
		return;
	/* the driver's per-block reserve of shared memory came with sm_80 */
	if (dm->cc && atoi(dm->cc) > 0 && atoi(dm->cc) < 8)
		d->reserved_shared_per_block = 0;
	if (dm->shared_per_sm)
		d->shared_per_sm = dm->shared_per_sm;
	if (dm->shared_per_block_optin)
		d->shared_per_block_optin = dm->shared_per_block_optin;
	if (dm->cc && atoi(dm->cc) >= 8)
		d->reserved_shared_per_block = dm->reserved_shared_per_block;
	if (dm->max_threads_per_sm)
		d->max_threads_per_sm = dm->max_threads_per_sm;
	d->sm_count = dm->sm_count;
}

void softcache_rank_init(struct softcache_rank *r)
{
	memset(r, 0, sizeof(*r));
}

void softcache_rank_release(struct softcache_rank *r)
{
	free(r->reason);
	free(r->candidates);
	free(r->selected);
	softcache_rank_init(r);
}

static unsigned long long round_up(unsigned long long v, unsigned unit)
{
	return unit > 1 ? (v + unit - 1) / unit * unit : v;
}

static double hit_rate(const struct softcache_candidate *c)
{
	return c->sim_accesses ? (double)c->sim_hits / (double)c->sim_accesses : 0.0;
}

static int cmp_candidate(const void *a, const void *b)
{
	const struct softcache_candidate *x = a, *y = b;
	double rx = hit_rate(x), ry = hit_rate(y);

	if (x->sim_hits != y->sim_hits)
		return x->sim_hits > y->sim_hits ? -1 : 1;
	if (rx != ry)
		return rx > ry ? -1 : 1;
	return (x->param > y->param) - (x->param < y->param);
}

/* Shared memory a block takes with cln lines per thread, reserve included. */
static unsigned long long block_shared(const struct softcache_device *d,
				       unsigned long long own, unsigned threads, unsigned cln)
{
	return round_up(own + (unsigned long long)cln * SOFTCACHE_LINE_BYTES * threads,
			d->shared_alloc_unit) + d->reserved_shared_per_block;
}

static int occupancy(struct softcache_rank *r, const struct softcache_device *d,
		     const struct softcache_launch *l)
{
	unsigned long long t = 1, own, by_threads, by_shared, by_blocks, blocks, grid = 1;
	unsigned warp = d->warp_size ? d->warp_size : 32;
	int i;

	for (i = 0; i < 3; i++) {
		if (!l->block[i])
			return error_set(CA_E_INPUT, "block dimension %d is 0", i);
		t *= l->block[i];
		if (t > 1024)
			return error_set(CA_E_INPUT, "block of %ux%ux%u threads: more than 1024",
					 l->block[0], l->block[1], l->block[2]);
	}
	if (t > d->max_threads_per_sm)
		return error_set(CA_E_INPUT, "block of %llu threads: more than the %u threads of an SM",
				 t, d->max_threads_per_sm);
	r->threads_per_block = (unsigned)t;
	own = l->static_shared_bytes + l->dynamic_shared_bytes;
	r->shared_per_block = block_shared(d, own, r->threads_per_block, 0);
	if (r->shared_per_block > d->shared_per_sm)
		return error_set(CA_E_INPUT, "a block uses %llu bytes of shared memory with the reserve: more than the %llu of an SM",
				 r->shared_per_block, d->shared_per_sm);

	by_threads = d->max_threads_per_sm / ((t + warp - 1) / warp * warp);
	by_shared = r->shared_per_block ? d->shared_per_sm / r->shared_per_block : ULLONG_MAX;
	by_blocks = d->max_blocks_per_sm;
	blocks = by_threads;
	r->limited_by = "threads";
	if (by_shared < blocks) {
		blocks = by_shared;
		r->limited_by = "shared_memory";
	}
	if (by_blocks < blocks) {
		blocks = by_blocks;
		r->limited_by = "blocks";
	}
	for (i = 0; i < 3; i++)
		grid *= l->grid[i];
	if (grid && d->sm_count) {
		unsigned long long per_sm = (grid + d->sm_count - 1) / d->sm_count;

		if (per_sm < blocks) {
			blocks = per_sm;
			r->limited_by = "grid";
		}
	}
	r->blocks_per_sm = (unsigned)blocks;
	r->threads_per_sm = (unsigned)(blocks * t < d->max_threads_per_sm ? blocks * t
									   : d->max_threads_per_sm);
	r->shared_used_per_sm = blocks * r->shared_per_block;
	r->shared_free_per_sm = d->shared_per_sm - r->shared_used_per_sm;
	return 0;
}

static void compute_cln(struct softcache_rank *r, const struct softcache_device *d,
			const struct softcache_launch *l)
{
	unsigned long long own = l->static_shared_bytes + l->dynamic_shared_bytes;
	unsigned long long per_thread = r->shared_free_per_sm / r->threads_per_sm;
	unsigned cln;

	r->cln_per_sm = (unsigned)(per_thread / SOFTCACHE_LINE_BYTES);
	r->cln_per_block = UINT_MAX;
	if (d->shared_per_block_optin) {
		unsigned long long room = d->shared_per_block_optin > own ?
						  d->shared_per_block_optin - own : 0;
		unsigned long long c = room / ((unsigned long long)SOFTCACHE_LINE_BYTES *
					       r->threads_per_block);

		r->cln_per_block = c < UINT_MAX ? (unsigned)c : UINT_MAX - 1;
		while (r->cln_per_block &&
		       block_shared(d, own, r->threads_per_block, r->cln_per_block) -
				       d->reserved_shared_per_block > d->shared_per_block_optin)
			r->cln_per_block--;
	}
	cln = r->cln_per_sm < r->cln_per_block ? r->cln_per_sm : r->cln_per_block;
	/* the allocation unit may round a block past what the SM has left */
	while (cln && r->blocks_per_sm * block_shared(d, own, r->threads_per_block, cln) >
			      d->shared_per_sm)
		cln--;
	r->cln = cln;
}

static void select_candidates(struct softcache_rank *r)
{
	size_t i;

	r->selected = xcalloc(r->nr_candidates ? r->nr_candidates : 1, sizeof(int));
	for (i = 0; i < r->nr_candidates; i++)
		r->candidates[i].why = r->candidates[i].sim_hits ? "every line was given to a structure ranked first"
							 : "no simulated hits";
	while (r->nr_selected < r->cln) {
		struct softcache_candidate *ro = NULL, *rw = NULL, *pick;

		for (i = 0; i < r->nr_candidates; i++) {
			struct softcache_candidate *c = &r->candidates[i];

			if (c->selected || !c->sim_hits)
				continue;
			if (c->read_only == 1 && !ro)
				ro = c;
			else if (c->read_only != 1 && !rw)
				rw = c;
		}
		if (!ro && !rw)
			break;
		if (!ro) {
			pick = rw;
			pick->why = "read-write, and no read-only structure with hits is left";
		} else if (!rw) {
			pick = ro;
			pick->why = "read-only, most simulated hits left";
		} else if (rw->sim_hits >= SOFTCACHE_RW_FACTOR * ro->sim_hits) {
			pick = rw;
			pick->why = "read-write with at least twice the hits of the best read-only structure left";
		} else {
			pick = ro;
			pick->why = "read-only, preferred to read-write structures with less than twice its hits";
			if (rw->sim_hits > ro->sim_hits)
				rw->why = "read-write with less than twice the hits of a read-only structure chosen instead";
		}
		pick->selected = 1;
		r->selected[r->nr_selected++] = pick->param;
	}
	if (!r->cln)
		for (i = 0; i < r->nr_candidates; i++)
			r->candidates[i].why = "CLN = 0: no line to give";
}

static void explain(struct softcache_rank *r)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned long long per_thread = r->shared_free_per_sm / r->threads_per_sm;
	size_t i;

	if (!r->cln) {
		if (r->cln_per_sm == 0)
			strbuf_addf(&sb, "CLN = 0: the %u resident blocks of %u threads leave %llu bytes of shared memory per SM, %llu bytes for each of %u threads, less than one %d-byte line; the software cache is disabled",
				    r->blocks_per_sm, r->threads_per_block, r->shared_free_per_sm,
				    per_thread, r->threads_per_sm, SOFTCACHE_LINE_BYTES);
		else
			strbuf_addf(&sb, "CLN = 0: a block of %u threads cannot opt in to one more %d-byte line per thread; the software cache is disabled",
				    r->threads_per_block, SOFTCACHE_LINE_BYTES);
	} else if (!r->nr_candidates) {
		strbuf_addf(&sb, "CLN = %u, but the monitor run measured no data structure of this kernel", r->cln);
	} else if (!r->nr_selected) {
		strbuf_addf(&sb, "CLN = %u, but no data structure had a simulated hit in its thread-private line",
			    r->cln);
	} else {
		strbuf_addf(&sb, "CLN = %u: %llu bytes of shared memory free per SM over %u threads per SM leave %llu bytes per thread",
			    r->cln, r->shared_free_per_sm, r->threads_per_sm, per_thread);
		if (r->cln_per_block < r->cln_per_sm)
			strbuf_addf(&sb, " (the per-block opt-in limit allows %u lines)", r->cln_per_block);
		strbuf_addf(&sb, "; caching parameter%s ", r->nr_selected > 1 ? "s" : "");
		for (i = 0; i < r->nr_selected; i++)
			strbuf_addf(&sb, "%s%d", i ? ", " : "", r->selected[i]);
	}
	r->reason = strbuf_detach(&sb, NULL);
}

int softcache_rank_compute(struct softcache_rank *r, const struct softcache_device *d,
			   const struct softcache_launch *l,
			   const struct softcache_candidate *c, size_t nr)
{
	int ret;
	size_t i;

	softcache_rank_release(r);
	ret = occupancy(r, d, l);
	if (ret) {
		softcache_rank_release(r);
		return ret;
	}
	compute_cln(r, d, l);
	r->nr_candidates = nr;
	r->candidates = xcalloc(nr ? nr : 1, sizeof(*c));
	for (i = 0; i < nr; i++) {
		r->candidates[i] = c[i];
		r->candidates[i].selected = 0;
		r->candidates[i].why = NULL;
	}
	qsort(r->candidates, nr, sizeof(*c), cmp_candidate);
	select_candidates(r);
	r->enabled = r->nr_selected > 0;
	explain(r);
	return 0;
}

int softcache_rank_from_capture(struct softcache_rank *r, const struct capture_kernel *k,
				const struct device_model *dm)
{
	struct softcache_device d;
	struct softcache_launch l;
	struct softcache_candidate *c;
	size_t i, nr = 0;
	int ret;

	softcache_device_from_model(&d, dm);
	memset(&l, 0, sizeof(l));
	if (!(k->has_extents & 2))
		return error_set(CA_E_INPUT, "kernel '%s': \"block\" is missing", k->name);
	for (i = 0; i < 3; i++) {
		if (k->block[i] < 1)
			return error_set(CA_E_INPUT, "kernel '%s': block[%zu] must be a positive "
					 "integer", k->name, i);
		l.block[i] = (unsigned)k->block[i];
		/* a grid not recorded (0s) does not limit the blocks per SM */
		l.grid[i] = k->has_extents & 1 ? (unsigned)k->grid[i] : 0;
	}
	l.static_shared_bytes = k->static_shared_bytes > 0 ? (uint64_t)k->static_shared_bytes : 0;
	l.dynamic_shared_bytes = k->dynamic_shared_bytes > 0 ? (uint64_t)k->dynamic_shared_bytes : 0;
	c = xcalloc(k->nr_data_structures + 1, sizeof(*c));
	for (i = 0; i < k->nr_data_structures; i++) {
		const struct capture_data_structure *e = &k->data_structures[i];

		if (isnan(e->sim_hits) != isnan(e->sim_accesses)) {
			ret = error_set(CA_E_INPUT, "kernel '%s': data_structures[%zu]: \"sim_hits\" "
					"and \"sim_accesses\" must both be numbers or both null",
					k->name, i);
			goto out;
		}
		if (isnan(e->sim_hits))
			continue;   /* not measured: left out */
		if (e->sim_hits > e->sim_accesses) {
			ret = error_set(CA_E_INPUT, "kernel '%s': data_structures[%zu]: more sim_hits "
					"than sim_accesses", k->name, i);
			goto out;
		}
		c[nr].param = e->param;
		c[nr].read_only = e->read_only;
		c[nr].sim_hits = (uint64_t)e->sim_hits;
		c[nr].sim_accesses = (uint64_t)e->sim_accesses;
		nr++;
	}
	ret = softcache_rank_compute(r, &d, &l, c, nr);
	if (ret)
		error_prefix(ret, "kernel '%s'", k->name);
out:
	free(c);
	return ret;
}

json_t *softcache_rank_to_json(const struct softcache_rank *r)
{
	json_t *o = json_object(), *occ = json_object(), *cands = json_array(),
	       *sel = json_array();
	size_t i;

	json_object_set_new(o, "enabled", json_boolean(r->enabled));
	json_object_set_new(o, "cln", json_integer(r->cln));
	json_object_set_new(o, "line_bytes", json_integer(SOFTCACHE_LINE_BYTES));
	json_object_set_new(o, "reason", json_string(r->reason ? r->reason : ""));
	json_object_set_new(occ, "threads_per_block", json_integer(r->threads_per_block));
	json_object_set_new(occ, "blocks_per_sm", json_integer(r->blocks_per_sm));
	json_object_set_new(occ, "limited_by", r->limited_by ? json_string(r->limited_by) : json_null());
	json_object_set_new(occ, "threads_per_sm", json_integer(r->threads_per_sm));
	json_object_set_new(occ, "shared_per_block", json_integer((json_int_t)r->shared_per_block));
	json_object_set_new(occ, "shared_used_per_sm", json_integer((json_int_t)r->shared_used_per_sm));
	json_object_set_new(occ, "shared_free_per_sm", json_integer((json_int_t)r->shared_free_per_sm));
	json_object_set_new(occ, "cln_per_sm", json_integer(r->cln_per_sm));
	json_object_set_new(occ, "cln_per_block", r->cln_per_block == UINT_MAX
							  ? json_null()
							  : json_integer(r->cln_per_block));
	json_object_set_new(occ, "registers", json_string("not modelled"));
	json_object_set_new(o, "occupancy", occ);
	for (i = 0; i < r->nr_candidates; i++) {
		const struct softcache_candidate *c = &r->candidates[i];
		json_t *jc = json_object();

		json_object_set_new(jc, "param", json_integer(c->param));
		json_object_set_new(jc, "read_only", c->read_only < 0 ? json_null()
								      : json_boolean(c->read_only));
		json_object_set_new(jc, "sim_hits", json_integer((json_int_t)c->sim_hits));
		json_object_set_new(jc, "sim_accesses", json_integer((json_int_t)c->sim_accesses));
		json_object_set_new(jc, "hit_rate", c->sim_accesses ? json_real(hit_rate(c)) : json_null());
		json_object_set_new(jc, "selected", json_boolean(c->selected));
		json_object_set_new(jc, "why", json_string(c->why ? c->why : ""));
		json_array_append_new(cands, jc);
	}
	json_object_set_new(o, "candidates", cands);
	for (i = 0; i < r->nr_selected; i++)
		json_array_append_new(sel, json_integer(r->selected[i]));
	json_object_set_new(o, "selected", sel);
	return o;
}
