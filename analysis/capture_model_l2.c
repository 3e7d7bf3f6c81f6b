/*
 * The capture model (analysis/capture_model_internal.h): "l2", the
 * persisting-L2 windows, and kernels[].l2_priority.
 */
#include "analysis/capture_model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ptx.h"
#include "base/xalloc.h"

/*
 * An l2_priority entry's loads: "ordinals" (a site measured as one, its
 * "ordinal" first) or the one "ordinal"; each a load of the kernel, and no
 * load in two entries of the section.
 */
static int read_l2_site(const struct rd *r, json_t *v, const char *sub,
			const struct capture_kernel *k, const struct capture_l2_priority *lp,
			struct capture_l2_load *l)
{
	long long *ords = NULL;
	size_t n = 0, i, a, b;
	int has, ret;

	if ((ret = capture_rd_ints(r, v, sub, "ordinals", &ords, &n, &has, 0, 0x7fffffff))) {
		free(ords);
		return ret;
	}
	if (has && (!n || (unsigned)ords[0] != l->ordinal)) {
		free(ords);
		return capture_fail(r, sub, "ordinals", "must start with the entry's ordinal (%u)",
				    l->ordinal);
	}
	l->ordinals = xcalloc(n + 2, sizeof(*l->ordinals));
	if (!has)
		l->ordinals[l->nr_ordinals++] = l->ordinal;
	for (i = 0; i < n; i++) {
		if (!capture_kernel_find_load(k, (unsigned)ords[i])) {
			long long bad = ords[i];

			free(ords);
			return capture_fail(r, sub, "ordinals", "item %zu (%lld) is not a load of the "
					    "kernel", i, bad);
		}
		l->ordinals[l->nr_ordinals++] = (unsigned)ords[i];
	}
	free(ords);
	/* this entry's loads against every entry's, this one's included */
	for (a = 0; a < lp->nr_loads; a++) {
		const struct capture_l2_load *o = &lp->loads[a];

		for (i = 0; i < l->nr_ordinals; i++)
			for (b = 0; b < o->nr_ordinals; b++) {
				if (o == l && b >= i)
					break;
				if (o->ordinals[b] == l->ordinals[i])
					return capture_fail(r, sub, has ? "ordinals" : "ordinal",
							    "load %u is listed twice", l->ordinals[i]);
			}
	}
	return 0;
}

int capture_read_l2_priority(const struct rd *r, json_t *o, const char *path,
			     const struct capture_kernel *k, struct capture_l2_priority *lp)
{
	json_t *arr, *v, *d, *x;
	char sub[240];
	size_t i, f;
	int ret;

	lp->source = SEC(o);
	if ((ret = capture_rd_object(r, o, path)) ||
	    (ret = capture_rd_strings(r, o, path, "forms", &lp->forms, &lp->nr_forms, NULL)) ||
	    (ret = capture_rd_num(r, o, path, "baseline_dram_bytes", &lp->baseline_dram_bytes,
				  NUM_COUNT)) ||
	    (ret = capture_rd_num(r, o, path, "noise_dram_bytes", &lp->noise_dram_bytes, NUM_COUNT)))
		return ret;
	if (!lp->nr_forms)
		return capture_fail(r, path, "forms", "missing or empty: the L2 priorities measured");
	for (f = 0; f < lp->nr_forms; f++) {
		enum load_action act;
		enum l2_priority pr;

		/* an L2 priority, an L1 form with one (Triton's eviction_policy),
		 * or "default" (a Triton load without one) */
		if (load_form_parse(lp->forms[f], &act, &pr) || !load_form_is_l2_choice(act, pr))
			return capture_fail(r, path, "forms", "item %zu, '%s', is not an L2 priority "
					    "(L2::evict_first, ..., an L1 form and one: "
					    "L1::evict_first+L2::evict_first, or default)", f, lp->forms[f]);
	}
	if (isnan(lp->baseline_dram_bytes))
		return capture_fail(r, path, "baseline_dram_bytes", "missing: every gain is against it");
	if ((ret = capture_rd_array(r, o, path, "loads", &arr)))
		return ret;
	lp->loads = xcalloc(json_array_size(arr) + 1, sizeof(*lp->loads));
	json_array_foreach(arr, i, v) {
		struct capture_l2_load *l = &lp->loads[lp->nr_loads++];
		long long ord;

		snprintf(sub, sizeof(sub), "%s.loads[%zu]", path, i);
		l->dram_bytes = xcalloc(lp->nr_forms + 1, sizeof(double));
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_int(r, v, sub, "ordinal", &ord, 0, 0x7fffffff, -1)))
			return ret;
		if (ord < 0 || !capture_kernel_find_load(k, (unsigned)ord))
			return capture_fail(r, sub, "ordinal", "not a load of the kernel");
		l->ordinal = (unsigned)ord;
		if ((ret = read_l2_site(r, v, sub, k, lp, l)))
			return ret;
		d = capture_member(v, "dram_bytes");
		if (!json_is_array(d) || json_array_size(d) != lp->nr_forms)
			return capture_fail(r, sub, "dram_bytes", "not an array of one count per form (%zu)",
					    lp->nr_forms);
		json_array_foreach(d, f, x) {
			l->dram_bytes[f] = NAN;
			if (json_is_null(x))
				continue;
			if (!json_is_number(x))
				return capture_fail(r, sub, "dram_bytes", "item %zu is not a number", f);
			l->dram_bytes[f] = json_number_value(x);
			if ((ret = capture_check_num(r, sub, "dram_bytes", l->dram_bytes[f], NUM_COUNT)))
				return ret;
		}
	}
	if ((ret = capture_rd_array(r, o, path, "pairs", &arr)))
		return ret;
	lp->pairs = xcalloc(json_array_size(arr) + 1, sizeof(*lp->pairs));
	json_array_foreach(arr, i, v) {
		struct capture_l2_pair *p = &lp->pairs[lp->nr_pairs++];
		long long pi, pj, fi, fj;
		json_t *forms;

		snprintf(sub, sizeof(sub), "%s.pairs[%zu]", path, i);
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_int(r, v, sub, "i", &pi, 0, 0x7fffffff, -1)) ||
		    (ret = capture_rd_int(r, v, sub, "j", &pj, 0, 0x7fffffff, -1)) ||
		    (ret = capture_rd_num(r, v, sub, "dram_bytes", &p->dram_bytes, NUM_COUNT)))
			return ret;
		forms = capture_member(v, "forms");
		if (!json_is_array(forms) || json_array_size(forms) != 2 ||
		    !json_is_integer(json_array_get(forms, 0)) ||
		    !json_is_integer(json_array_get(forms, 1)))
			return capture_fail(r, sub, "forms", "not two form indices");
		fi = json_integer_value(json_array_get(forms, 0));
		fj = json_integer_value(json_array_get(forms, 1));
		if (pi < 0 || pj < 0 || pi == pj || !capture_kernel_find_load(k, (unsigned)pi) ||
		    !capture_kernel_find_load(k, (unsigned)pj))
			return capture_fail(r, sub, NULL, "i and j must be two loads of the kernel");
		if (fi < 0 || fj < 0 || (size_t)fi >= lp->nr_forms || (size_t)fj >= lp->nr_forms)
			return capture_fail(r, sub, "forms", "an index beyond the section's %zu forms",
					    lp->nr_forms);
		if (isnan(p->dram_bytes))
			return capture_fail(r, sub, "dram_bytes", "missing");
		p->i = (unsigned)pi;
		p->j = (unsigned)pj;
		p->form_i = (unsigned)fi;
		p->form_j = (unsigned)fj;
	}
	return 0;
}

void capture_l2_priority_free(struct capture_l2_priority *lp)
{
	size_t i;

	if (!lp)
		return;
	capture_free_strings(lp->forms, lp->nr_forms);
	for (i = 0; i < lp->nr_loads; i++) {
		free(lp->loads[i].dram_bytes);
		free(lp->loads[i].ordinals);
	}
	free(lp->loads);
	free(lp->pairs);
	free(lp);
}

int capture_read_l2(const struct rd *r, json_t *o, struct capture_l2 *l2)
{
	json_t *arr, *v, *ver;
	char sub[64], vpath[96];
	size_t i;
	int ret;

	l2->source = SEC(o);
	l2->has_kept = json_object_get(o, "kept") != NULL;
	if ((ret = capture_rd_object(r, o, "l2")) ||
	    (ret = capture_rd_str(r, o, "l2", "status", &l2->status, 0)) ||
	    (ret = capture_rd_str(r, o, "l2", "reason", &l2->reason, 0)) ||
	    (ret = capture_rd_num(r, o, "l2", "baseline_dram_bytes", &l2->baseline_dram_bytes, NUM_COUNT)) ||
	    (ret = capture_rd_str(r, o, "l2", "baseline", &l2->baseline, 0)) ||
	    (ret = capture_rd_str(r, o, "l2", "kept", &l2->kept, 0)) ||
	    (ret = capture_rd_array(r, o, "l2", "windows", &arr)))
		return ret;
	l2->windows = xcalloc(json_array_size(arr) + 1, sizeof(*l2->windows));
	json_array_foreach(arr, i, v) {
		struct capture_l2_window *w = &l2->windows[l2->nr_windows++];

		snprintf(sub, sizeof(sub), "l2.windows[%zu]", i);
		w->source = SEC(v);
		w->noise = w->dram_bytes = NAN;
		w->speedup.min = w->speedup.median = w->speedup.max = NAN;
		w->ended_after_rounds = -1;
		if ((ret = capture_rd_object(r, v, sub)) ||
		    (ret = capture_rd_str(r, v, sub, "variant", &w->variant, 0)) ||
		    (ret = capture_rd_int(r, v, sub, "alloc", &w->alloc, 0,
					  (long long)CAPTURE_COUNT_MAX, -1)) ||
		    (ret = capture_rd_num(r, v, sub, "num_bytes", &w->num_bytes, NUM_COUNT)) ||
		    (ret = capture_rd_num(r, v, sub, "set_aside_bytes", &w->set_aside_bytes, NUM_COUNT)) ||
		    (ret = capture_rd_num(r, v, sub, "hit_ratio", &w->hit_ratio, NUM_COUNT)) ||
		    (ret = capture_rd_strings(r, v, sub, "kernels", &w->kernels, &w->nr_kernels, NULL)) ||
		    (ret = capture_rd_strings(r, v, sub, "kernels_without_ptx", &w->kernels_without_ptx,
					      &w->nr_kernels_without_ptx, NULL)))
			return ret;
		if (!(ver = capture_member(v, "verification")))
			continue;
		w->measured = 1;
		snprintf(vpath, sizeof(vpath), "%s.verification", sub);
		if ((ret = capture_rd_object(r, ver, vpath)) ||
		    (ret = capture_rd_bool(r, ver, vpath, "kept", &w->kept)) ||
		    (ret = capture_rd_str(r, ver, vpath, "reason", &w->reason, 0)) ||
		    (ret = capture_rd_num(r, ver, vpath, "dram_bytes", &w->dram_bytes, NUM_COUNT)) ||
		    (ret = capture_read_speedup(r, ver, vpath, "speedup", &w->speedup)) ||
		    (ret = capture_rd_num(r, ver, vpath, "noise", &w->noise, NUM_COUNT)) ||
		    (ret = capture_rd_int(r, ver, vpath, "ended_after_rounds", &w->ended_after_rounds, 0,
					  CAPTURE_LIST_MAX, -1)))
			return ret;
	}
	return 0;
}

json_t *capture_l2_json(const struct capture_l2 *l2)
{
	json_t *o = capture_start(l2->source), *arr = json_array();
	size_t i;

	capture_put_str(o, "status", l2->status);
	capture_put_str(o, "reason", l2->reason);
	capture_put_num(o, "baseline_dram_bytes", l2->baseline_dram_bytes);
	capture_put_str(o, "baseline", l2->baseline);
	capture_put_str(o, "kept", l2->kept);
	for (i = 0; i < l2->nr_windows; i++) {
		const struct capture_l2_window *w = &l2->windows[i];
		json_t *wj = capture_start(w->source);

		capture_put_str(wj, "variant", w->variant);
		capture_put_int(wj, "alloc", w->alloc, -1);
		capture_put_num(wj, "num_bytes", w->num_bytes);
		capture_put_num(wj, "set_aside_bytes", w->set_aside_bytes);
		capture_put_num(wj, "hit_ratio", w->hit_ratio);
		if (w->nr_kernels || json_object_get(wj, "kernels"))
			json_object_set_new(wj, "kernels", capture_strings_json(w->kernels, w->nr_kernels));
		if (w->nr_kernels_without_ptx || json_object_get(wj, "kernels_without_ptx"))
			json_object_set_new(wj, "kernels_without_ptx", capture_strings_json(
				w->kernels_without_ptx, w->nr_kernels_without_ptx));
		if (w->measured) {
			json_t *vj = capture_start(SEC(json_object_get(wj, "verification")));

			capture_put_bool(vj, "kept", w->kept);
			capture_put_str(vj, "reason", w->reason);
			capture_put_num(vj, "dram_bytes", w->dram_bytes);
			if (!isnan(w->speedup.median) || json_object_get(vj, "speedup")) {
				json_t *sp = capture_start(SEC(json_object_get(vj, "speedup")));

				capture_put_num(sp, "min", w->speedup.min);
				capture_put_num(sp, "median", w->speedup.median);
				capture_put_num(sp, "max", w->speedup.max);
				json_object_set_new(vj, "speedup", sp);
			}
			capture_put_num(vj, "noise", w->noise);
			capture_put_int(vj, "ended_after_rounds", w->ended_after_rounds, -1);
			json_object_set_new(wj, "verification", vj);
		}
		json_array_append_new(arr, wj);
	}
	if (l2->nr_windows || json_object_get(o, "windows"))
		json_object_set_new(o, "windows", arr);
	else
		json_decref(arr);
	return o;
}

int capture_l2_from_json(struct capture_l2 *l2, json_t *o, const char *name)
{
	struct rd r = { name };

	l2->baseline_dram_bytes = NAN;
	return capture_read_l2(&r, o, l2);
}

void capture_l2_release(struct capture_l2 *l2)
{
	size_t i;

	free(l2->status);
	free(l2->reason);
	free(l2->kept);
	free(l2->baseline);
	for (i = 0; i < l2->nr_windows; i++) {
		struct capture_l2_window *w = &l2->windows[i];

		free(w->variant);
		capture_free_strings(w->kernels, w->nr_kernels);
		capture_free_strings(w->kernels_without_ptx, w->nr_kernels_without_ptx);
		free(w->reason);
	}
	free(l2->windows);
	memset(l2, 0, sizeof(*l2));
}
