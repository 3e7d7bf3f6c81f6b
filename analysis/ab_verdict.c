#include "analysis/ab_verdict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/capture_model.h"
#include "base/xalloc.h"

/* At most this many rounds count (the CLI caps --repeat at 64). */
#define AB_MAX_ROUNDS 64

void ab_result_init(struct ab_result *ab, size_t nr_kernels, unsigned rounds)
{
	memset(ab, 0, sizeof(*ab));
	ab->rounds = rounds;
	ab->base_ns = xcalloc(nr_kernels * rounds + 1, sizeof(double));
	ab->adv_ns = xcalloc(nr_kernels * rounds + 1, sizeof(double));
	ab->base_launches = xcalloc(nr_kernels * rounds + 1, sizeof(unsigned));
	ab->adv_launches = xcalloc(nr_kernels * rounds + 1, sizeof(unsigned));
	ab->base_total = xcalloc(rounds + 1, sizeof(double));
	ab->adv_total = xcalloc(rounds + 1, sizeof(double));
	ab->base_wall = xcalloc(rounds + 1, sizeof(double));
	ab->adv_wall = xcalloc(rounds + 1, sizeof(double));
	ab->outputs_equal = 1;
	ab->baseline_stable = 1;
}

struct ab_rank_times *ab_result_rank(struct ab_result *ab, int rank, size_t nr_kernels)
{
	struct ab_rank_times *t;
	size_t i;

	for (i = 0; i < ab->nr_ranks; i++)
		if (ab->ranks[i].rank == rank)
			return &ab->ranks[i];
	ab->ranks = xrealloc(ab->ranks, (ab->nr_ranks + 1) * sizeof(*ab->ranks));
	t = &ab->ranks[ab->nr_ranks++];
	memset(t, 0, sizeof(*t));
	t->rank = rank;
	t->base_ns = xcalloc(nr_kernels * ab->rounds + 1, sizeof(double));
	t->adv_ns = xcalloc(nr_kernels * ab->rounds + 1, sizeof(double));
	for (i = 0; i < nr_kernels * ab->rounds; i++)
		t->base_ns[i] = t->adv_ns[i] = NAN;
	return t;
}

void ab_result_release(struct ab_result *ab)
{
	size_t i;

	for (i = 0; i < ab->nr_ranks; i++) {
		free(ab->ranks[i].gpu);
		free(ab->ranks[i].base_ns);
		free(ab->ranks[i].adv_ns);
	}
	free(ab->ranks);
	free(ab->base_ns);
	free(ab->adv_ns);
	free(ab->base_launches);
	free(ab->adv_launches);
	free(ab->base_total);
	free(ab->adv_total);
	free(ab->base_wall);
	free(ab->adv_wall);
	json_decref(ab->output);
	free(ab->output_reason);
	memset(ab, 0, sizeof(*ab));
}

void ab_result_truncate(struct ab_result *ab, size_t nr_kernels, unsigned done)
{
	size_t k;
	unsigned r;

	if (done >= ab->rounds)
		return;
	for (k = 0; k < nr_kernels; k++)
		for (r = 0; r < done; r++) {
			size_t t;

			ab->base_ns[k * done + r] = ab->base_ns[k * ab->rounds + r];
			ab->adv_ns[k * done + r] = ab->adv_ns[k * ab->rounds + r];
			ab->base_launches[k * done + r] = ab->base_launches[k * ab->rounds + r];
			ab->adv_launches[k * done + r] = ab->adv_launches[k * ab->rounds + r];
			for (t = 0; t < ab->nr_ranks; t++) {
				ab->ranks[t].base_ns[k * done + r] = ab->ranks[t].base_ns[k * ab->rounds + r];
				ab->ranks[t].adv_ns[k * done + r] = ab->ranks[t].adv_ns[k * ab->rounds + r];
			}
		}
	ab->rounds = done;
}

long ab_launches_differ(const struct ab_result *ab, size_t nr_kernels, unsigned *base,
			unsigned *adv)
{
	size_t i;

	for (i = 0; i < nr_kernels * ab->rounds; i++)
		if (ab->base_launches[i] && ab->adv_launches[i] &&
		    ab->base_launches[i] != ab->adv_launches[i]) {
			*base = ab->base_launches[i];
			*adv = ab->adv_launches[i];
			return (long)(i / ab->rounds);
		}
	return -1;
}

void ab_per_launch(struct ab_result *ab, size_t nr_kernels)
{
	size_t i;

	for (i = 0; i < nr_kernels * ab->rounds; i++) {
		if (ab->base_launches[i])
			ab->base_ns[i] /= ab->base_launches[i];
		if (ab->adv_launches[i])
			ab->adv_ns[i] /= ab->adv_launches[i];
	}
}

int ab_clearly_slower(const struct ab_result *ab, unsigned done)
{
	double slowest_base = 0, fastest_adv = INFINITY;
	unsigned r;

	if (done < 2)
		return 0;
	for (r = 0; r < done; r++) {
		if (!(ab->base_total[r] > 0) || !(ab->adv_total[r] > 0))
			return 0;
		if (ab->base_total[r] > slowest_base)
			slowest_base = ab->base_total[r];
		if (ab->adv_total[r] < fastest_adv)
			fastest_adv = ab->adv_total[r];
	}
	return fastest_adv > slowest_base;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double ab_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

json_t *ab_stats_json(double *v, size_t n)
{
	double med;

	if (!n)
		return json_null();
	med = ab_median(v, n);
	return json_pack("{s:f, s:f, s:f}", "min", v[0], "median", med, "max", v[n - 1]);
}

static json_t *array_json(const double *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, isnan(v[i]) ? json_null() : json_real(v[i]));
	return a;
}

json_t *ab_verdict_judge(const double *b, const double *p, unsigned rounds,
			 int outputs_equal, const char *reject_reason, int *kept)
{
	double sp[AB_MAX_ROUNDS], bs[AB_MAX_ROUNDS], noise, med_sp, med_b;
	size_t n = 0, nb = 0, j;
	const char *why;
	json_t *v;

	for (j = 0; j < rounds && j < AB_MAX_ROUNDS; j++) {
		if (!isnan(b[j]) && b[j] > 0)
			bs[nb++] = b[j];
		if (!isnan(b[j]) && !isnan(p[j]) && p[j] > 0)
			sp[n++] = b[j] / p[j];
	}
	v = json_pack("{s:o, s:o}", "baseline_ns", array_json(b, rounds),
		      "advice_ns", array_json(p, rounds));
	json_object_set_new(v, "speedup", ab_stats_json(sp, n));
	med_b = ab_median(bs, nb);
	med_sp = ab_median(sp, n);
	/* baseline against baseline: the relative spread of the baseline times */
	noise = nb >= 2 && med_b > 0 ? (bs[nb - 1] - bs[0]) / med_b : NAN;
	json_object_set_new(v, "noise", isnan(noise) ? json_null() : json_real(noise));
	if (!n) {
		*kept = 0;
		why = "no kernel times were measured";
	} else if (!outputs_equal) {
		*kept = 0;
		why = reject_reason ? reject_reason : "the output changed with the advice applied";
	} else if (isnan(noise)) {
		*kept = 0;
		why = "the baseline noise could not be measured (use --repeat 2 or more)";
	} else if (med_sp - 1 > noise) {
		*kept = 1;
		why = "the median speedup exceeds the baseline-against-baseline spread";
	} else {
		*kept = 0;
		why = med_sp < 1 ? "slower than the baseline" :
		      "the speedup is within the baseline-against-baseline spread";
	}
	json_object_set_new(v, "kept", json_boolean(*kept));
	json_object_set_new(v, "reason", json_string(why));
	return v;
}

json_t *ab_verdict(const double *b, const double *p, unsigned rounds, const struct ab_result *ab,
		   int *kept)
{
	return ab_verdict_judge(b, p, rounds, ab->outputs_equal, ab->reject_reason, kept);
}

json_t *ab_program_json(const struct ab_result *ab)
{
	double sp[AB_MAX_ROUNDS], tsp[AB_MAX_ROUNDS];
	size_t n = 0, nt = 0;
	unsigned r;
	json_t *v;

	for (r = 0; r < ab->rounds && r < AB_MAX_ROUNDS; r++) {
		if (ab->adv_wall[r] > 0)
			sp[n++] = ab->base_wall[r] / ab->adv_wall[r];
		if (ab->adv_total[r] > 0)
			tsp[nt++] = ab->base_total[r] / ab->adv_total[r];
	}
	v = json_pack("{s:o, s:o, s:o, s:o, s:o}",
		      "baseline_wall_seconds", array_json(ab->base_wall, ab->rounds),
		      "advice_wall_seconds", array_json(ab->adv_wall, ab->rounds),
		      "baseline_gpu_ns", array_json(ab->base_total, ab->rounds),
		      "advice_gpu_ns", array_json(ab->adv_total, ab->rounds),
		      "wall_speedup", ab_stats_json(sp, n));
	json_object_set_new(v, "gpu_speedup", ab_stats_json(tsp, nt));
	return v;
}

/* The p-quantile (0..1) of sorted v[0..n), linearly interpolated. */
static double quantile(const double *v, size_t n, double p)
{
	double x = p * (double)(n - 1);
	size_t i = (size_t)x;

	if (!n)
		return NAN;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (x - (double)i) * (v[i + 1] - v[i]);
}

json_t *ab_verdict_abba(const double *base, size_t nr_base, const double *adv, size_t nr_adv,
			int outputs_equal, const char *reject_reason, double max_noise,
			int *kept, int *too_noisy)
{
	size_t groups = (nr_base < nr_adv ? nr_base : nr_adv) / 2, first, g, n = 0;
	double *sp = xcalloc(groups + 1, sizeof(*sp)), *bb = xcalloc(groups + 1, sizeof(*bb));
	double noise = NAN, med_sp;
	const char *why;
	json_t *v;

	first = groups >= 3 ? 1 : 0;
	for (g = first; g < groups; g++) {
		double a1 = base[2 * g], a4 = base[2 * g + 1], b2 = adv[2 * g], b3 = adv[2 * g + 1];

		if (!(a1 > 0 && a4 > 0 && b2 > 0 && b3 > 0))
			continue;
		sp[n] = (a1 + a4) / (b2 + b3);
		bb[n++] = a1 / a4;
	}
	v = json_pack("{s:s, s:I}", "method", "in-run, ABBA launches", "groups", (json_int_t)n);
	qsort(bb, n, sizeof(*bb), cmp_double);
	if (n >= 2)
		noise = (quantile(bb, n, 0.9) - quantile(bb, n, 0.1)) / 2 / quantile(bb, n, 0.5);
	json_object_set_new(v, "speedup", ab_stats_json(sp, n));
	med_sp = ab_median(sp, n);
	json_object_set_new(v, "noise", isnan(noise) ? json_null() : json_real(noise));
	*too_noisy = !isnan(noise) && noise > max_noise;
	if (n < 3) {
		*kept = 0;
		why = "fewer than three groups of launches were timed";
	} else if (!outputs_equal) {
		*kept = 0;
		why = reject_reason ? reject_reason : "the output changed with the advice applied";
	} else if (*too_noisy) {
		*kept = 0;
		why = "the kernel's launches differ too much to be compared in-run";
	} else if (med_sp - 1 > noise) {
		*kept = 1;
		why = "the median speedup exceeds the baseline-against-baseline spread";
	} else {
		*kept = 0;
		why = med_sp < 1 ? "slower than the baseline" :
		      "the speedup is within the baseline-against-baseline spread";
	}
	json_object_set_new(v, "kept", json_boolean(*kept));
	json_object_set_new(v, "reason", json_string(why));
	free(sp);
	free(bb);
	return v;
}

/*
 * The verdicts as capture.json holds them are read by the capture's one
 * reader (analysis/capture_model.h): what these return is what `report`
 * shows. A verdict the reader refuses gives NAN.
 */
static void verdict_numbers(json_t *verdict, double *median, double *noise)
{
	struct capture_verdict v;

	*median = *noise = NAN;
	if (!json_is_object(verdict))
		return;
	memset(&v, 0, sizeof(v));
	if (!capture_verdict_from_json(&v, verdict, "verdict")) {
		*median = v.speedup.median;
		*noise = v.noise;
	}
	capture_verdict_release(&v);
}

void ab_rank_verdict_add(struct ab_rank_verdicts *rv, int rank, const char *gpu, json_t *v,
			int rank_kept, const char *not_timed, int launched)
{
	struct capture_verdict cv;
	double median = NAN;
	char *reason = NULL;

	/* what the rank's verdict says, as report reads it */
	memset(&cv, 0, sizeof(cv));
	if (v && !capture_verdict_from_json(&cv, v, "verdict")) {
		median = cv.speedup.median;
		reason = cv.reason ? xstrdup(cv.reason) : NULL;
	}
	capture_verdict_release(&cv);
	if (!rv->arr)
		rv->arr = json_array();
	if (!launched) {
		free(reason);
		json_decref(v);
		json_array_append_new(rv->arr, json_pack("{s:i, s:s?, s:n, s:s}", "rank", rank, "gpu",
			gpu, "verdict", "not_timed", "the rank does not launch it"));
		return;
	}
	json_array_append_new(rv->arr, json_pack("{s:i, s:s?, s:o, s:s?}", "rank", rank, "gpu",
		gpu, "verdict", v ? v : json_null(), "not_timed", v ? NULL : not_timed));
	if (!rank_kept && !rv->why_not)
		rv->why_not = v ? xasprintf("rank %d rejects it: %.3fx median kernel speedup there%s%s%s",
					    rank, median, reason ? " (" : "", reason ? reason : "",
					    reason ? ")" : "") :
			      xasprintf("not timed on rank %d (%s): advice is kept only where it "
					"holds on every measured rank", rank,
					not_timed ? not_timed : "?");
	free(reason);
}

void ab_rank_verdicts_apply(struct ab_rank_verdicts *rv, json_t *verdict, int *kept)
{
	if (rv->arr && verdict)
		json_object_set_new(verdict, "ranks", rv->arr);
	else
		json_decref(rv->arr);
	if (rv->why_not && verdict && *kept) {
		*kept = 0;
		json_object_set_new(verdict, "kept", json_false());
		json_object_set_new(verdict, "reason", json_string(rv->why_not));
	}
	free(rv->why_not);
	memset(rv, 0, sizeof(*rv));
}

double ab_verdict_median(json_t *verdict)
{
	double median, noise;

	verdict_numbers(verdict, &median, &noise);
	return median;
}

double ab_verdict_noise(json_t *verdict)
{
	double median, noise;

	verdict_numbers(verdict, &median, &noise);
	return noise;
}

double ab_program_gpu_speedup(json_t *program)
{
	struct capture_speedup sp;

	if (!json_is_object(program) ||
	    capture_speedup_from_json(&sp, program, "gpu_speedup", "program"))
		return NAN;
	return sp.median;
}
