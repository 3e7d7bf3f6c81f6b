#ifndef CACHEADVISE_REPORT_INPUT_H
#define CACHEADVISE_REPORT_INPUT_H

#include <stddef.h>

#include <jansson.h>

#include "analysis/plan.h"
#include "emitters/source_hints.h"

/*
 * Everything a report shows, gathered once from a capture directory
 * (DESIGN.md "Files"): capture.json, the analysis of it (analysis/advise.h),
 * the plan (plan.json, or the analysis' plan when plan.json is missing),
 * the verification section, the software-cache / L2-window / register-cache
 * sections where capture.json or plan.json has them, and the source hints.
 * Every report format (emitters/report.h) renders one of these; none of
 * them reads files itself.
 */

struct report_load {
	unsigned ordinal;
	unsigned ptx_line;          /* 0 unknown */
	const char *instruction;    /* "ld.global.nc.f32", "" when unknown */
	const char *file;           /* source file as recorded, NULL without -lineinfo */
	int line;                   /* 0 unknown */
	int param;                  /* kernel parameter index, -1 unknown */
	int read_only;              /* 1, 0, -1 unknown */
	int patchable;
	const char *unpatchable_reason; /* why not, as recorded; NULL when unknown */
	int measured;               /* 0: recorded as not measured (beyond --max-loads) */
	/* "cache", "bypass", "keep" (the analysis' decision), "not patchable",
	 * "not measured" (no analysis of this load). Static or borrowed. */
	const char *decision;
	const char *action;         /* the plan's action for it, NULL: left as is */
	int changes;                /* the plan changes its instruction */
	const char *reason;         /* the analysis' reason (a tie, a load left out), or NULL */
	const char *node;           /* its node id in the kernel's graph, NULL when none */
	/* Measured and derived numbers; NAN where not measured. */
	double hit;                 /* hit_i, sectors */
	double access;              /* access_i, sectors */
	double hit_rate;            /* 0..1 */
	double weight_bytes;        /* W(v_i) */
	double traffic_saved_bytes; /* L2 traffic the decision saves (the analysis' share) */
	/* For a bypass: the L2 traffic caching it too would add, W(v_i) plus its
	 * edges to the cached loads, negated; NAN otherwise. */
	double bypass_avoids_bytes;
	struct source_hint hint;
};

struct report_kernel {
	const char *module;         /* module id (borrowed from the capture) */
	const char *name;           /* mangled name */
	const char *demangled;      /* NULL when not recorded */
	long long launches;         /* -1 unknown */
	json_t *capture;            /* this kernel in capture.json (borrowed) */
	json_t *analysis;           /* this kernel in the analysis, NULL if none (borrowed) */
	json_t *verification;       /* this kernel's verification entry, NULL if none */
	const char *chosen;         /* solver whose answer is the plan, NULL unknown */
	int optimal;                /* the chosen answer is proven optimal: 1, 0, -1 unknown */
	double expected_saved_bytes;/* NAN unknown */
	size_t nr_changes;          /* loads whose instruction the plan changes */
	struct report_load *loads;
	size_t nr_loads;
};

/* A source file some load comes from. */
struct report_source {
	char *path;                 /* as shown and as named in source.patch */
	char *read_path;            /* where it is read from */
	int under_root;             /* path is relative to the source root */
	struct source_file *file;   /* NULL when it cannot be read */
};

/* A section of advice other than the per-load plan, shown as recorded. */
struct report_section {
	const char *key;            /* "software_cache", "l2_windows", "register_cache" */
	const char *kernel;         /* kernel it belongs to, NULL for the whole program */
	const char *origin;         /* "capture.json" or "plan.json" */
	json_t *value;              /* borrowed */
};

struct report_input {
	char *dir;                  /* the capture directory */
	json_t *capture;            /* owned */
	json_t *analysis;           /* owned; NULL when the analysis failed (incomplete capture) */
	struct plan plan;
	int plan_from_analysis;     /* plan.json was missing: the plan is the analysis' */
	int incomplete;             /* capture status is not "complete" */
	const char *status;         /* capture status string */
	json_t *verification;       /* borrowed from capture; NULL when absent or null */
	struct report_kernel *kernels;
	size_t nr_kernels;
	struct report_source *sources;
	size_t nr_sources;
	/* Source paths (and source.patch's) are relative to this: sources.json's
	 * "root" where DIR has one, else the directory common to the source
	 * files of the loads (system headers under /usr and /opt aside), else
	 * the program's working directory; NULL unknown. */
	char *source_root;
	char *lookup_root;          /* where sources are read from (--source-root), else source_root */
	struct report_section *sections;
	size_t nr_sections;
	char **notes;               /* things the reader should know, one sentence each */
	size_t nr_notes;
};

struct report_input_options {
	/* Where the sources are now (apply/report --source-root); NULL: where
	 * they were at capture time. */
	const char *source_root;
};

/*
 * Reads the capture directory dir: capture.json (required; schema
 * "cacheadvise.capture/1"), plan.json (optional), the module PTX files
 * capture.json names (required), sources.json (optional). Runs the analysis
 * (advise_capture). Returns 0, or CA_E_INPUT with a message naming the
 * file and what to do: not a capture directory, a file missing, invalid
 * JSON, a newer schema. An "incomplete" capture loads (in->incomplete set);
 * where its analysis fails, in->analysis is NULL and a note says why.
 * Release in with report_input_release either way.
 */
int report_input_load(struct report_input *in, const char *dir,
		      const struct report_input_options *opt);

/*
 * Builds the input from what a capture run holds in memory: capture (not
 * stolen; a reference is taken), analysis (may be NULL) and plan (copied).
 * dir is where the capture's files are (modules/ for PTX lines). Returns 0
 * or CA_E_INPUT as report_input_load.
 */
int report_input_init_from(struct report_input *in, const char *dir, json_t *capture,
			   json_t *analysis, const struct plan *plan,
			   const struct report_input_options *opt);

void report_input_release(struct report_input *in);

/*
 * The analysis of a capture (analysis/advise.h advise_capture) with the
 * model its options name: fills plan (initialised by the caller) and sets
 * *analysis (caller owns; NULL on error). Returns advise_capture's result.
 */
int report_input_analyse(json_t *capture, struct plan *plan, json_t **analysis);

/* A short label for the kernel: its demangled name without parameters, else its name. Caller frees. */
char *report_kernel_label(const struct report_kernel *k);

/* Numbers of a JSON object member; NAN / def when absent or not a number. */
double report_json_number(json_t *obj, const char *key);

/*
 * The kernel's verification (its "verification" object in capture.json, or
 * its entry in the top-level section's "kernels"): returns 1 and sets
 * *speedup (the median kernel speedup) and *kept when the verification step
 * measured the kernel, 0 when it did not.
 */
int report_kernel_verified(const struct report_kernel *k, double *speedup, int *kept);
/* The verification's baseline-against-baseline spread of the kernel ("noise"), NAN if none. */
double report_verification_spread(const struct report_kernel *k);
/* The program's verified speedup (median of the summed kernel times), NAN if none. */
double report_program_speedup(const struct report_input *in);

#endif
