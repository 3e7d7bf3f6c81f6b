#include "collectors/variant_sums.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void variant_sums_init(struct variant_sums *s)
{
	memset(s, 0, sizeof(*s));
}

void variant_sums_release(struct variant_sums *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		free(s->v[i].label);
		free(s->v[i].at);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

const struct variant_sum *variant_sums_get(const struct variant_sums *s, const char *label)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(s->v[i].label, label))
			return &s->v[i];
	return NULL;
}

int variant_sums_add(struct variant_sums *s, const struct event_kernel *k, const char *label,
		     int run)
{
	struct variant_sum *v = (struct variant_sum *)variant_sums_get(s, label);
	double got[CAPTURE_NR_COUNTER_KEYS], samples = NAN;
	struct event_hits_at *at;
	size_t i, j, n;
	int any = 0;

	/* the variant was measured when any metric came back for it */
	for (i = 0; i < CAPTURE_NR_COUNTER_KEYS; i++) {
		if (event_kernel_variant(k, label, capture_counter_keys[i], &got[i], &samples))
			any = 1;
		else
			got[i] = NAN;
	}
	if (!any)
		return 0;
	if (!v) {
		ALLOC_GROW(s->v, s->nr + 1, s->alloc);
		v = &s->v[s->nr++];
		memset(v, 0, sizeof(*v));
		v->label = xstrdup(label);
		for (i = 0; i < CAPTURE_NR_COUNTER_KEYS; i++)
			v->sums[i] = NAN;
	}
	v->run = run;
	for (i = 0; i < CAPTURE_NR_COUNTER_KEYS; i++)
		if (!isnan(got[i]))
			v->sums[i] = (isnan(v->sums[i]) ? 0 : v->sums[i]) + got[i];
	v->samples += isnan(samples) ? 0 : samples;
	n = event_kernel_variant_hits_at(k, label, &at);
	for (i = 0; i < n; i++) {
		for (j = 0; j < v->nr_at && (v->at[j].process != at[i].process ||
					     v->at[j].ordinal != at[i].ordinal); j++)
			;
		if (j == v->nr_at) {
			v->at = xrealloc(v->at, (v->nr_at + 1) * sizeof(*v->at));
			v->at[v->nr_at].process = at[i].process;
			v->at[v->nr_at++].ordinal = at[i].ordinal;
		}
		v->at[j].l1_hits = at[i].l1_hits;
	}
	free(at);
	return 1;
}

double variant_sum_metric(const struct variant_sum *v, const char *key)
{
	size_t i;

	for (i = 0; v && i < CAPTURE_NR_COUNTER_KEYS; i++)
		if (!strcmp(capture_counter_keys[i], key))
			return v->sums[i];
	return NAN;
}

int variant_sum_hits_at(const struct variant_sum *v, int process, uint64_t ordinal,
			double *hits)
{
	size_t i;

	for (i = 0; v && i < v->nr_at; i++)
		if (v->at[i].process == process && v->at[i].ordinal == ordinal) {
			*hits = v->at[i].l1_hits;
			return 1;
		}
	return 0;
}

json_t *variant_sum_scaled_json(const struct variant_sum *v, unsigned long long launches)
{
	double scale = v->samples > 0 ? (double)launches / v->samples : 1;
	json_t *out = json_object();
	size_t i;

	for (i = 0; i < CAPTURE_NR_COUNTER_KEYS; i++)
		if (!isnan(v->sums[i]))
			json_object_set_new(out, capture_counter_keys[i], json_real(v->sums[i] * scale));
	json_object_set_new(out, "run", json_integer(v->run));
	json_object_set_new(out, "launches", json_integer((json_int_t)launches));
	json_object_set_new(out, "sampled_launches", json_integer((json_int_t)v->samples));
	return out;
}

json_t *variant_sums_to_json(const struct variant_sums *s)
{
	json_t *out = json_object();
	size_t i, m;

	for (i = 0; i < s->nr; i++) {
		json_t *o = json_object();

		for (m = 0; m < CAPTURE_NR_COUNTER_KEYS; m++)
			if (!isnan(s->v[i].sums[m]))
				json_object_set_new(o, capture_counter_keys[m], json_real(s->v[i].sums[m]));
		json_object_set_new(o, "samples", json_real(s->v[i].samples));
		json_object_set_new(out, s->v[i].label, o);
	}
	return out;
}
