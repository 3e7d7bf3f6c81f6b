/*
 * The facts of the reports' first screen (emitters/report_summary.h),
 * computed once from the report input: what was kept, of every kind; how
 * the verification stands; which steps did not run.
 */
#include "emitters/report_summary.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/xalloc.h"
#include "analysis/load_sites.h"
#include "emitters/capture_layout.h"
#include "emitters/report.h"
#include "emitters/report_carveout.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/source_patch.h"

/*
 * Whether a kept verdict's figure is a win: above 1 by more than its
 * recorded noise. ab_verdict keeps nothing else; a capture that says
 * otherwise (edited, or older) is not believed on the first screen.
 */
static int beyond_noise(double speedup, double noise)
{
	return !isnan(speedup) && speedup > 1.0 && (isnan(noise) || speedup - 1.0 > noise);
}

static void add_win(struct report_summary *s, const char *kind, char *what, double speedup,
		    double noise, const char *measured, char *how)
{
	s->wins = xrealloc(s->wins, (s->nr_wins + 1) * sizeof(*s->wins));
	s->wins[s->nr_wins++] = (struct report_win){ kind, what, speedup, noise, measured, how };
}

static int by_speedup_desc(const void *a, const void *b)
{
	const struct report_win *x = a, *y = b;

	return (x->speedup < y->speedup) - (x->speedup > y->speedup);
}

/* The source plan's changes and how many source.patch rewrites. */
static void count_patch(struct report_summary *s, const struct report_input *in)
{
	size_t i, j;

	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];

		s->nr_patch_changes += k->nr_patch_changes;
		for (j = 0; j < k->nr_loads; j++)
			s->nr_rewritten += k->loads[j].patch_changes &&
					   k->loads[j].hint.status == SOURCE_HINT_REWRITTEN;
	}
}

/* One sentence of plan_only: the loads j..e of k. */
static char *plan_only_sentence(const struct report_kernel *k, size_t j, size_t e)
{
	const struct report_load *l = &k->loads[j];
	char *where = report_load_where(l), *label = report_kernel_label(k), *ret;
	char ords[64];

	if (e > j)
		snprintf(ords, sizeof(ords), "loads %u-%u", l->ordinal, k->loads[e].ordinal);
	else
		snprintf(ords, sizeof(ords), "load %u", l->ordinal);
	ret = xasprintf("%s on %s%s (%s of %s)%s%s%s", l->action,
			load_sites_is_python(l->file) ? "the tl.load at " : "", where, ords, label,
			report_load_no_triton_form(l) ? ", which tl.load cannot write" : "",
			l->patch_changes ? "; the source plan gives it " : "",
			l->patch_changes ? l->patch_action : "");
	free(where);
	free(label);
	return ret;
}

static void collect_plan_only(struct report_summary *s, const struct report_input *in)
{
	size_t i, j, e;

	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];

		for (j = 0; j < k->nr_loads; j = e + 1) {
			e = j;
			if (!report_load_plan_only(&k->loads[j]))
				continue;
			e = report_load_group_end(k, j);
			s->plan_only = xrealloc(s->plan_only, (s->nr_plan_only + 1) *
						sizeof(*s->plan_only));
			s->plan_only[s->nr_plan_only++] = plan_only_sentence(k, j, e);
		}
	}
	if (!s->nr_plan_only)
		return;
	if (isnan(s->program_speedup))
		s->plan_only_lead = xstrdup("only through `run --plan` (not verified)");
	else
		s->plan_only_lead = xasprintf("only through `run --plan` (%.3gx program GPU time, "
					      "verified)", s->program_speedup);
}

static void count_plan(struct report_summary *s, const struct report_input *in)
{
	size_t i, j;

	s->expected_saved_bytes = NAN;
	s->program_speedup = report_program_speedup(in);
	s->rebuilt_speedup = report_rebuilt_speedup(in);
	s->verification = in->verification != NULL;
	s->nr_kernels = in->nr_kernels;
	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];
		double speedup;
		int kept;

		if (!isnan(k->expected_saved_bytes))
			s->expected_saved_bytes = (isnan(s->expected_saved_bytes) ? 0 :
						   s->expected_saved_bytes) + k->expected_saved_bytes;
		if (!k->nr_changes) {
			if (report_kernel_verified(k, &speedup, &kept) && !kept)
				s->nr_rejected_dropped++;
			continue;
		}
		s->nr_kernels_changed++;
		s->nr_changes += k->nr_changes;
		for (j = 0; j < k->nr_loads; j++)
			if (k->loads[j].changes)
				s->nr_l2_changes += strstr(k->loads[j].action, "L2::") != NULL;
		if (report_kernel_verified(k, &speedup, &kept)) {
			s->nr_verified++;
			s->nr_kept += kept != 0;
		}
	}
	if (!s->nr_changes)
		s->plan = s->nr_rejected_dropped ? REPORT_PLAN_ALL_REJECTED : REPORT_PLAN_UNCHANGED;
	else if (!s->verification)
		s->plan = REPORT_PLAN_UNVERIFIED;
	else if (!s->nr_verified)
		s->plan = REPORT_PLAN_NONE_MEASURED;
	else
		s->plan = REPORT_PLAN_VERIFIED;
}

/* The load plan's win: the program's GPU time, else its best kept kernel's. */
static void plan_win(struct report_summary *s, const struct report_input *in, const char *run_cmd)
{
	struct strbuf apply = STRBUF_INIT;
	double best = NAN, rebuilt;
	const char *measured;
	char *what;
	size_t i;

	if (!s->nr_kept)
		return;
	for (i = 0; i < in->nr_kernels; i++) {
		double speedup;
		int kept;

		if (in->kernels[i].nr_changes && report_kernel_verified(&in->kernels[i], &speedup,
									&kept) && kept &&
		    (isnan(best) || speedup > best))
			best = speedup;
	}
	strbuf_addstr(&apply, run_cmd);
	/* apply writes the source plan: where it carries less, not this figure */
	strbuf_addstr(&apply, s->nr_plan_only ? " (no rebuild); cacheadvise apply " :
		      " (no rebuild), or cacheadvise apply ");
	report_shell_path(&apply, in->dir, NULL);
	if (s->nr_plan_only)
		strbuf_addstr(&apply, " writes the source plan, which carries less "
			      "(How to apply)");
	rebuilt = isnan(s->program_speedup) ? NAN : s->rebuilt_speedup;
	/* what apply delivers, timed (issue 38), first; run --plan's beside it */
	measured = !isnan(rebuilt) ? "program GPU time, rebuilt from source.patch" :
		   isnan(s->program_speedup) ? "kernel time, the best kept kernel" :
		   "program GPU time";
	what = xasprintf("per-load %s: %zu load%s in %zu kernel%s",
			 s->nr_l2_changes ? "L1 choices and L2 priorities" : "L1 choices",
			 s->nr_changes, s->nr_changes == 1 ? "" : "s", s->nr_kept,
			 s->nr_kept == 1 ? "" : "s");
	if (!isnan(rebuilt)) {
		char *with = xasprintf("%s; run --plan %.3gx", what, s->program_speedup);

		free(what);
		what = with;
	}
	add_win(s, "load plan", what,
		!isnan(rebuilt) ? rebuilt : isnan(s->program_speedup) ? best : s->program_speedup,
		NAN, measured, strbuf_detach(&apply, NULL));
}

static void collect_wins(struct report_summary *s, const struct report_input *in)
{
	struct strbuf cmd = STRBUF_INIT;
	size_t i;

	/* the run --plan command, shell-quoted */
	strbuf_addstr(&cmd, "cacheadvise run --plan ");
	report_shell_path(&cmd, in->dir, CAPTURE_LAYOUT_PLAN);
	strbuf_addstr(&cmd, " -- ");
	report_program_command(&cmd, in);
	plan_win(s, in, cmd.buf);
	for (i = 0; i < in->nr_kernels; i++) {
		const struct capture_software_cache *sc = in->kernels[i].model->software_cache;
		const struct capture_softcache_verification *ver =
			sc && sc->has_verification ? &sc->verification : NULL;
		char *label;

		if (!ver || !ver->status || strcmp(ver->status, "verified") || ver->kept != 1 ||
		    !beyond_noise(ver->speedup.median, ver->noise))
			continue;
		label = report_kernel_label(&in->kernels[i]);
		add_win(s, "software cache", xasprintf("kernel %s: the software cache in shared memory",
			label), ver->speedup.median, ver->noise, "kernel time",
			xasprintf("the rewritten PTX %s (see SOFTWARE CACHE)",
				  ver->rewrite_ptx ? ver->rewrite_ptx : "?"));
		free(label);
	}
	for (i = 0; i < in->model.carveout.nr_kernels; i++) {
		const struct capture_carveout_kernel *k = &in->model.carveout.kernels[i];
		char *label;

		if (!k->kept || strcmp(k->kept, "default") || !beyond_noise(k->speedup.median, k->noise))
			continue;
		label = report_label_of(in, k->name);
		add_win(s, "carve-out", xasprintf("kernel %s: the driver's default L1/shared carve-out "
			"instead of the program's %d%%", label, k->program_value), k->speedup.median,
			k->noise, "kernel time", report_carveout_advice(in, k));
		free(label);
	}
	for (i = 0; in->model.has_l2 && i < in->model.l2.nr_windows; i++) {
		const struct capture_l2 *l2 = &in->model.l2;
		const struct capture_l2_window *w = &l2->windows[i];

		if (!l2->kept || !w->variant || strcmp(l2->kept, w->variant) || w->kept <= 0 ||
		    !beyond_noise(w->speedup.median, w->noise))
			continue;
		add_win(s, "L2 window", xasprintf("a persisting L2 window over allocation #%lld (%s)",
			w->alloc, l2->kept), w->speedup.median, w->noise, "program GPU time",
			xasprintf("%s (no rebuild), or the code under ADVICE THAT NEEDS NO PATCHING",
				  cmd.buf));
	}
	strbuf_release(&cmd);
	if (s->nr_wins > 1)
		qsort(s->wins, s->nr_wins, sizeof(*s->wins), by_speedup_desc);
	s->kept_any = s->nr_wins > 0;
}

static void collect_verdicts(struct report_summary *s, const struct report_input *in)
{
	size_t i;

	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];
		const char *why = k->verdict ? k->verdict->reason : NULL;
		struct report_verdict *v;
		double speedup;
		int kept;

		if (!report_kernel_verified(k, &speedup, &kept))
			continue;
		s->verdicts = xrealloc(s->verdicts, (s->nr_verdicts + 1) * sizeof(*s->verdicts));
		v = &s->verdicts[s->nr_verdicts++];
		v->kernel = k;
		v->speedup = speedup;
		v->kept = kept != 0;
		v->changes = k->nr_changes > 0;
		if (!v->kept)
			v->line = xasprintf("%.3gx median kernel speedup, rejected%s%s", speedup,
					    why ? ": " : "", why ? why : "");
		else if (v->changes)
			v->line = xasprintf("%.3gx median kernel speedup, kept", speedup);
		else
			v->line = xasprintf("%.3gx median kernel speedup, with no load changed: no "
					    "advice (the plan keeps every load as built, so the "
					    "figure is the timing's noise)", speedup);
	}
}

/* "the verification measured 2 kernels and rejected every change (...):" */
static void all_rejected(struct strbuf *sb, const struct report_summary *s)
{
	/* the other verdicts are on kernels whose plan changes no load */
	size_t others = s->nr_verdicts - s->nr_rejected_dropped;

	strbuf_addf(sb, "the verification measured %zu kernel%s and rejected every change",
		    s->nr_verdicts, s->nr_verdicts == 1 ? "" : "s");
	if (others)
		strbuf_addf(sb, " (the plan changes no load of %zu of them)", others);
	strbuf_addch(sb, ':');
}

/* The verification's line (report_summary.h headline_*). */
static void headline(struct report_summary *s, const struct report_input *in)
{
	static const char *const plan_phrase[] = {
		[REPORT_PLAN_UNCHANGED] = "changes no load, so there was nothing to verify",
		[REPORT_PLAN_UNVERIFIED] = "is not verified (this capture has no verification "
					   "section; profile without --no-verify to measure it)",
		[REPORT_PLAN_NONE_MEASURED] = "is not verified (the verification measured none "
					      "of its changed kernels)",
	};
	struct strbuf rest = STRBUF_INIT;

	if (s->plan == REPORT_PLAN_VERIFIED) {
		s->headline_lead = "Verified";
		s->headline_state = xasprintf("%zu of %zu changed kernel%s measured, %zu kept as "
					      "faster", s->nr_verified, s->nr_kernels_changed,
					      s->nr_kernels_changed == 1 ? "" : "s", s->nr_kept);
		if (!isnan(s->program_speedup)) {
			double ps;
			char *sps = source_patch_summary(in, &ps);

			double rbs = s->rebuilt_speedup;

			/* The headline names the way that delivers it (DESIGN.md): the
			 * rebuilt program first where it was timed (issue 38) */
			if (!isnan(rbs))
				strbuf_addf(&rest, "; program speedup %.3gx rebuilt from "
					    "source.patch (run --plan %.3gx)", rbs,
					    s->program_speedup);
			else
				strbuf_addf(&rest, "; program speedup %.3gx", s->program_speedup);
			if (isnan(rbs) && sps && !isnan(ps) && fabs(ps - s->program_speedup) > 0.005)
				strbuf_addf(&rest, " via run --plan (the source patch as written: "
					    "%.2fx)", ps);
			free(sps);
		}
		strbuf_addch(&rest, '.');
	} else if (s->kept_any) {
		/* kept advice of another kind: the best of it, then the load plan */
		const struct report_win *w = &s->wins[0];

		s->headline_lead = "Verified speedup";
		s->headline_state = xasprintf("%.3gx at best", w->speedup);
		strbuf_addf(&rest, " (%s, %s; %zu piece%s of advice kept, listed above); the load "
			    "plan ", w->kind, w->measured, s->nr_wins, s->nr_wins == 1 ? "" : "s");
		if (s->plan == REPORT_PLAN_ALL_REJECTED) {
			strbuf_addstr(&rest, "kept nothing: ");
			all_rejected(&rest, s);
		} else
			strbuf_addf(&rest, "%s.", plan_phrase[s->plan]);
	} else {
		s->headline_lead = "Verified speedup";
		switch (s->plan) {
		case REPORT_PLAN_ALL_REJECTED:
			s->headline_state = xstrdup("none kept");
			strbuf_addstr(&rest, ": ");
			all_rejected(&rest, s);
			break;
		case REPORT_PLAN_UNCHANGED:
			s->headline_state = xstrdup(s->nr_verdicts ? "none kept" : "none");
			strbuf_addstr(&rest, s->nr_verdicts ? ": the plan changes no load:" :
				      ": the plan changes no load, so there was nothing to verify.");
			break;
		case REPORT_PLAN_UNVERIFIED:
			s->headline_state = xstrdup("not verified");
			strbuf_addstr(&rest, " (this capture has no verification section; profile "
				      "without --no-verify to measure the advice).");
			break;
		default:
			s->headline_state = xstrdup("not verified");
			strbuf_addstr(&rest, " (the verification measured none of the changed "
				      "kernels).");
			break;
		}
	}
	s->headline_rest = strbuf_detach(&rest, NULL);
}

static int is_l2_priority_step(const char *step)
{
	return step && !strncmp(step, "the L2 priority", 15);
}

static void add_not_run(struct report_summary *s, const char *step, int asked, int skipped,
			char *sentence)
{
	s->not_run = xrealloc(s->not_run, (s->nr_not_run + 1) * sizeof(*s->not_run));
	sentence[0] = (char)toupper((unsigned char)sentence[0]);
	s->not_run[s->nr_not_run++] = (struct report_not_run){ step, asked, skipped, sentence };
}

/* Steps the budget skipped, and an L2 priority pass asked for that measured nothing. */
static void collect_not_run(struct report_summary *s, const struct report_input *in)
{
	const struct capture_budget *b = &in->model.budget;
	int l2_skipped = 0;
	size_t i, j;

	s->l2_priority_asked = in->model.options.l2_priority == 1;
	for (i = 0; i < in->nr_kernels; i++) {
		const struct capture_l2_priority *lp = in->kernels[i].model->l2_priority;

		for (j = 0; lp && j < lp->nr_loads; j++)
			s->l2_priority_ran = 1;
	}
	for (i = 0; in->model.has_budget && i < b->nr_skipped; i++) {
		const struct capture_budget_skip *k = &b->skipped[i];
		int asked = s->l2_priority_asked && is_l2_priority_step(k->step);
		struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;

		if (!k->step)
			continue;
		l2_skipped |= is_l2_priority_step(k->step);
		strbuf_addf(&sb, "%s%s did not run", k->step, asked ? " you asked for (--l2-priority)" :
			    "");
		if (asked && !s->l2_priority_ran)
			strbuf_addstr(&sb, ", so no load was measured with an L2 priority");
		strbuf_addstr(&sb, ": the budget skipped it");
		if (k->runs > 0 && !isnan(k->estimate_seconds))
			strbuf_addf(&why, "its %d program run%s would take about %.0f s", k->runs,
				    k->runs == 1 ? "" : "s", k->estimate_seconds);
		if (!isnan(k->spent_seconds) && !isnan(b->seconds))
			strbuf_addf(&why, "%s%.0f s of the budget's %.0f s were spent",
				    why.len ? ", and " : "", k->spent_seconds, b->seconds);
		if (why.len)
			strbuf_addf(&sb, " (%s)", why.buf);
		strbuf_release(&why);
		strbuf_addstr(&sb, "; profile again with --budget 0 to measure it.");
		add_not_run(s, k->step, asked, 1, strbuf_detach(&sb, NULL));
	}
	if (s->l2_priority_asked && !s->l2_priority_ran && !l2_skipped && in->nr_kernels)
		add_not_run(s, "the L2 priority pass", 1, 0, xstrdup(
			"the L2 priority pass you asked for (--l2-priority) measured no load with an "
			"L2 priority: it runs only with --measure launches (the default), on loads "
			"that can be given a priority (see NOTES)."));
}

static void no_change(struct report_summary *s, const struct report_input *in)
{
	if (s->nr_changes || !in->analysis)
		return;
	if (s->kept_any)
		s->no_change = xstrdup("No load to change: the advice kept above changes none; "
				       "apply it as its line says.");
	else if (s->plan == REPORT_PLAN_ALL_REJECTED)
		s->no_change = xstrdup("Nothing to change: the changes the analysis advised were "
				       "measured and rejected (above).");
	else if (!in->nr_kernels)
		s->no_change = xstrdup("Nothing to change: no kernel's loads were measured (see "
				       "the modules without PTX and the notes).");
	else
		s->no_change = xstrdup("Nothing to change: every measured load is best left as "
				       "it is.");
}

void report_summary_init(struct report_summary *s, const struct report_input *in)
{
	memset(s, 0, sizeof(*s));
	count_plan(s, in);
	count_patch(s, in);
	collect_plan_only(s, in);
	collect_wins(s, in);
	collect_verdicts(s, in);
	headline(s, in);
	collect_not_run(s, in);
	no_change(s, in);
}

void report_summary_release(struct report_summary *s)
{
	size_t i;

	for (i = 0; i < s->nr_wins; i++) {
		free(s->wins[i].what);
		free(s->wins[i].how);
	}
	free(s->wins);
	for (i = 0; i < s->nr_verdicts; i++)
		free(s->verdicts[i].line);
	free(s->verdicts);
	for (i = 0; i < s->nr_not_run; i++)
		free(s->not_run[i].sentence);
	free(s->not_run);
	for (i = 0; i < s->nr_plan_only; i++)
		free(s->plan_only[i]);
	free(s->plan_only);
	free(s->plan_only_lead);
	free(s->headline_state);
	free(s->headline_rest);
	free(s->no_change);
	memset(s, 0, sizeof(*s));
}

char *report_summary_headline(const struct report_summary *s)
{
	return xasprintf("%s: %s%s", s->headline_lead ? s->headline_lead : "Verified speedup",
			 s->headline_state ? s->headline_state : "", s->headline_rest ?
			 s->headline_rest : "");
}
