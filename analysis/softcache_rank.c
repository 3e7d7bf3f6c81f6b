#include "analysis/softcache_rank.h"

#include <limits.h>
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

/* Reads an optional non-negative integer field; 1 when present. */
static int get_uint(const json_t *obj, const char *key, const char *name, int nonzero,
		    unsigned long long max, unsigned long long *out)
{
	const json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (unsigned long long)json_integer_value(v) > max)
		return error_set(CA_E_INPUT, "%s: \"%s\" must be an integer from %d to %llu", name,
				 key, nonzero, max);
	if (nonzero && json_integer_value(v) == 0)
		return error_set(CA_E_INPUT, "%s: \"%s\" must not be 0", name, key);
	*out = (unsigned long long)json_integer_value(v);
	return 1;
}

int softcache_device_from_json(struct softcache_device *d, const json_t *device,
			       const char *name)
{
	struct softcache_device t;
	unsigned long long v;
	const char *cc;
	int r;

	softcache_device_init(&t);
	if (!device || json_is_null(device)) {
		*d = t;
		return 0;
	}
	if (!json_is_object(device))
		return error_set(CA_E_INPUT, "%s: \"device\" must be an object", name);
	/* the driver's per-block reserve of shared memory came with sm_80 */
	cc = json_string_value(json_object_get(device, "cc"));
	if (cc && atoi(cc) > 0 && atoi(cc) < 8)
		t.reserved_shared_per_block = 0;
#define FIELD(key, nonzero, max, dst)                                          \
	do {                                                                   \
		r = get_uint(device, key, name, nonzero, max, &v);             \
		if (r < 0)                                                     \
			return r;                                              \
		if (r)                                                         \
			dst = v;                                               \
	} while (0)
	FIELD("shared_per_sm", 1, 1ULL << 40, t.shared_per_sm);
	FIELD("shared_per_block_optin", 0, 1ULL << 40, t.shared_per_block_optin);
	FIELD("reserved_shared_per_block", 0, 1ULL << 30, t.reserved_shared_per_block);
	FIELD("shared_alloc_unit", 1, 1ULL << 20, t.shared_alloc_unit);
	FIELD("max_threads_per_sm", 1, 1 << 20, t.max_threads_per_sm);
	FIELD("max_blocks_per_sm", 1, 1 << 20, t.max_blocks_per_sm);
	FIELD("warp_size", 1, 1024, t.warp_size);
	FIELD("sm_count", 0, 1 << 20, t.sm_count);
#undef FIELD
	*d = t;
	return 0;
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

static int get_dims(const json_t *kernel, const char *key, const char *name, int required,
		    unsigned dims[3])
{
	const json_t *v = json_object_get(kernel, key);
	size_t i;

	dims[0] = dims[1] = dims[2] = required ? 1 : 0;
	if (!v || json_is_null(v)) {
		if (required)
			return error_set(CA_E_INPUT, "kernel '%s': \"%s\" is missing", name, key);
		return 0;
	}
	if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > 3)
		return error_set(CA_E_INPUT, "kernel '%s': \"%s\" must be an array of 1 to 3 integers",
				 name, key);
	dims[1] = dims[2] = 1;
	for (i = 0; i < json_array_size(v); i++) {
		const json_t *e = json_array_get(v, i);

		if (!json_is_integer(e) || json_integer_value(e) < 1 ||
		    json_integer_value(e) > 0x7fffffff)
			return error_set(CA_E_INPUT, "kernel '%s': %s[%zu] must be a positive integer",
					 name, key, i);
		dims[i] = (unsigned)json_integer_value(e);
	}
	return 0;
}

static int get_count(const json_t *obj, const char *key, const char *what, uint64_t *out,
		     int *present)
{
	const json_t *v = json_object_get(obj, key);

	*present = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return error_set(CA_E_INPUT, "%s: \"%s\" must be a non-negative integer", what, key);
	*out = (uint64_t)json_integer_value(v);
	*present = 1;
	return 0;
}

int softcache_rank_from_capture(struct softcache_rank *r, const json_t *kernel,
				const json_t *device)
{
	struct softcache_device d;
	struct softcache_launch l;
	struct softcache_candidate *c = NULL;
	const json_t *jds;
	const char *name;
	char *what = NULL;
	size_t i, nr = 0;
	uint64_t v;
	int present, ret;

	if (!json_is_object(kernel))
		return error_set(CA_E_INPUT, "kernel is not a JSON object");
	name = json_string_value(json_object_get(kernel, "name"));
	if (!name)
		name = "(unnamed)";
	what = xasprintf("kernel '%s'", name);
	ret = softcache_device_from_json(&d, device, "device");
	if (ret)
		goto out;
	memset(&l, 0, sizeof(l));
	ret = get_dims(kernel, "block", name, 1, l.block);
	if (!ret)
		ret = get_dims(kernel, "grid", name, 0, l.grid);
	if (!ret)
		ret = get_count(kernel, "static_shared_bytes", what, &v, &present);
	if (ret)
		goto out;
	l.static_shared_bytes = present ? v : 0;
	ret = get_count(kernel, "dynamic_shared_bytes", what, &v, &present);
	if (ret)
		goto out;
	l.dynamic_shared_bytes = present ? v : 0;

	jds = json_object_get(kernel, "data_structures");
	if (jds && !json_is_null(jds) && !json_is_array(jds)) {
		ret = error_set(CA_E_INPUT, "%s: \"data_structures\" must be an array", what);
		goto out;
	}
	c = xcalloc(json_array_size(jds) + 1, sizeof(*c));
	for (i = 0; i < json_array_size(jds); i++) {
		const json_t *e = json_array_get(jds, i), *p, *ro;
		char *item = xasprintf("%s: data_structures[%zu]", what, i);

		p = json_object_get(e, "param");
		ro = json_object_get(e, "read_only");
		if (!json_is_object(e) || !json_is_integer(p) || json_integer_value(p) < 0 ||
		    json_integer_value(p) > 0xffff) {
			ret = error_set(CA_E_INPUT, "%s: needs an integer \"param\"", item);
		} else if (ro && !json_is_null(ro) && !json_is_boolean(ro)) {
			ret = error_set(CA_E_INPUT, "%s: \"read_only\" must be true, false or null", item);
		} else {
			uint64_t h = 0, a = 0;
			int ph = 0, pa = 0;

			c[nr].param = (int)json_integer_value(p);
			c[nr].read_only = ro && json_is_boolean(ro) ? json_is_true(ro) : -1;
			ret = get_count(e, "sim_hits", item, &h, &ph);
			if (!ret)
				ret = get_count(e, "sim_accesses", item, &a, &pa);
			if (!ret && ph != pa) {
				ret = error_set(CA_E_INPUT, "%s: \"sim_hits\" and \"sim_accesses\" must both be numbers or both null",
						item);
			} else if (!ret && ph && h > a) {
				ret = error_set(CA_E_INPUT, "%s: more sim_hits than sim_accesses", item);
			} else if (!ret && ph) {
				c[nr].sim_hits = h;
				c[nr].sim_accesses = a;
				nr++;
			}
		}
		free(item);
		if (ret)
			goto out;
	}
	ret = softcache_rank_compute(r, &d, &l, c, nr);
	if (ret)
		error_prefix(ret, "%s", what);
out:
	free(c);
	free(what);
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
