#ifndef CACHEADVISE_REPORT_SUMMARY_H
#define CACHEADVISE_REPORT_SUMMARY_H

#include <stddef.h>

/*
 * The first screen of every report (the SUMMARY of report.txt, the summary
 * of report.html, report.json's "summary"), as one set of facts computed
 * once, when the report input is built (emitters/report_input.h, its
 * "summary"). Every format prints these and decides nothing of its own,
 * so that no two formats, and no two lines of one, can tell different
 * stories (issue 35: "none kept" above a kernel listed as kept, "not
 * verified" beside verified advice).
 */

struct report_input;
struct report_kernel;

/*
 * A piece of advice the capture verified and kept, whatever its kind: the
 * load plan (program GPU time), a software cache (kernel time), the
 * driver's default carve-out (kernel time), an L2 window (program GPU
 * time). Only a verdict that kept it, with a median speedup beyond its
 * recorded noise, makes one (DESIGN.md "Keeping advice").
 */
struct report_win {
	const char *kind;           /* "load plan", "software cache", "carve-out", "L2 window" */
	char *what;                 /* what changes */
	double speedup;             /* median, as measured */
	double noise;               /* its baseline-against-baseline spread; NAN unknown */
	const char *measured;       /* "program GPU time", "kernel time" */
	char *how;                  /* how to apply it */
};

/* A kernel's verification verdict, as the first screen lists it. */
struct report_verdict {
	const struct report_kernel *kernel;
	double speedup;             /* median kernel speedup */
	int kept;                   /* the verdict kept it */
	/* The plan changes at least one of its loads. A verdict that "kept" a
	 * kernel whose plan keeps every load as built timed the kernel against
	 * itself: no advice (its figure is the timing's noise). */
	int changes;
	char *line;                 /* "1.79x median kernel speedup, kept" and so on */
};

/* Where the per-load plan stands after the verification. */
enum report_plan_standing {
	REPORT_PLAN_UNCHANGED,      /* it changes no load, and no verdict rejected one */
	REPORT_PLAN_UNVERIFIED,     /* it changes loads; the capture has no verification */
	REPORT_PLAN_NONE_MEASURED,  /* it changes loads; the verification measured none */
	REPORT_PLAN_ALL_REJECTED,   /* the verification rejected every change it measured, and
				       the plan, having dropped them, changes no load */
	REPORT_PLAN_VERIFIED,       /* the verification measured kernels the plan changes */
};

/*
 * A step of the profile that did not run: one the budget skipped
 * (capture.json "budget".skipped), or the L2 priority pass that
 * --l2-priority asked for and that measured no load.
 */
struct report_not_run {
	const char *step;           /* "the L2 priority pass" (borrowed) */
	int asked;                  /* the user asked for it on the command line */
	int skipped;                /* the budget skipped it (else it ran and measured nothing) */
	char *sentence;             /* what happened and how to make it run */
};

struct report_summary {
	size_t nr_kernels;
	size_t nr_kernels_changed;  /* kernels whose plan changes at least one load */
	size_t nr_changes;          /* loads whose instruction the plan changes */
	size_t nr_l2_changes;       /* of those, loads given an L2 eviction priority */
	size_t nr_patch_changes;    /* loads whose instruction the source plan changes */
	size_t nr_rewritten;        /* of those, rewritten in source.patch */
	/*
	 * The plan's changes the source plan does not carry (issue 38: only
	 * `run --plan` applies them, listed apart with its figure), one
	 * sentence per expression: "L1::no_allocate on the tl.load at
	 * kernels.py:17:20 (loads 0-7 of rownorm_kernel), which tl.load cannot
	 * write".
	 */
	char **plan_only;
	size_t nr_plan_only;
	/* Their heading with the run --plan figure: "only through `run --plan`
	 * (1.15x program GPU time, verified)"; NULL when there are none. */
	char *plan_only_lead;
	double expected_saved_bytes;/* sum of the kernels' objectives; NAN when none known */
	int verification;           /* capture.json has a verification section */
	size_t nr_verified;         /* changed kernels the verification measured */
	size_t nr_kept;             /* of those, kept (faster beyond the noise) */
	/* Kernels the verification measured and rejected, whose changes the
	 * plan then dropped (so they are not among the changed kernels). */
	size_t nr_rejected_dropped;
	double program_speedup;     /* verification.speedup; NAN when absent */
	double rebuilt_speedup;     /* the program rebuilt from source.patch (verification.rebuilt), NAN */
	enum report_plan_standing plan;

	/* Every kept piece of advice, best first (issue 25: the first screen
	 * leads with the largest verified win). */
	struct report_win *wins;
	size_t nr_wins;
	/* Whether anything was kept, of any kind: nr_wins > 0. The one answer
	 * the headline, the verdict lines and the closing line all follow. */
	int kept_any;

	/* The verification's line, "Verified speedup: none kept: ...": lead
	 * ("Verified speedup", "Verified"), state (what a format emphasises:
	 * "none kept", "1.02x at best") and the rest, its punctuation included. */
	const char *headline_lead;
	char *headline_state;
	char *headline_rest;
	/* The verdicts to list under it (none when there are none to show). */
	struct report_verdict *verdicts;
	size_t nr_verdicts;
	/* Steps that did not run, said before anything else. */
	struct report_not_run *not_run;
	size_t nr_not_run;
	int l2_priority_asked;      /* --l2-priority was on the command line */
	int l2_priority_ran;        /* some load was measured with an L2 priority */
	/* Where the plan changes no load: why there is nothing to change
	 * ("Nothing to change: ..."), NULL when there is no analysis. */
	char *no_change;
};

/* Computes s from in (whose kernels, plan, sections and hints are built). */
void report_summary_init(struct report_summary *s, const struct report_input *in);
void report_summary_release(struct report_summary *s);

/* "Verified speedup: none kept: ..." as one line of plain text. Caller frees. */
char *report_summary_headline(const struct report_summary *s);

#endif
