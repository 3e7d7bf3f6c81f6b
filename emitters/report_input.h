#ifndef CACHEADVISE_REPORT_INPUT_H
#define CACHEADVISE_REPORT_INPUT_H

#include <stddef.h>

#include <jansson.h>

#include "analysis/advise.h"
#include "analysis/capture_model.h"
#include "analysis/rank_spread.h"
#include "analysis/plan.h"
#include "emitters/report_summary.h"
#include "emitters/rewrite/source_hints.h"

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
	int column;                 /* of the .loc, 0 unknown (Triton: the tl.load's last
				       positional argument, docs/triton.md) */
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
	/* The same in the source plan (report_input's source_plan: what
	 * source.patch writes); the rewrite layer reads these. */
	const char *patch_action;
	int patch_changes;
	const char *reason;         /* the analysis' reason (a tie, a load left out), or NULL */
	const char *node;           /* its node id in the kernel's graph, NULL when none */
	/* Measured and derived numbers; NAN where not measured. */
	/* hit_i, sectors: every L1 hit of the kernel when only this load
	 * allocates, other loads' hits on lines it brought in included, so
	 * "L1 hits enabled by caching this load", not this load's own hits. */
	double hit;
	double access;              /* access_i, sectors the load reads (monitor run) */
	/* This load's own L1 hit rate, 0..1, only where one is measured: the
	 * kernel's only load, whose hit_i are all its own hits; NAN otherwise
	 * (hit_i / access_i is no rate: it can pass 100%). */
	double hit_rate;
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
	const struct capture_kernel *model; /* this kernel in the capture (borrowed) */
	const struct analysis_kernel *analysis; /* this kernel in the analysis, NULL if none */
	/* Its verification verdict (its own, else its entry of
	 * verification.kernels[]), NULL if none; and the same as JSON. */
	const struct capture_verdict *verdict;
	json_t *verification;
	const char *chosen;         /* solver whose answer is the plan, NULL unknown */
	int optimal;                /* the chosen answer is proven optimal: 1, 0, -1 unknown */
	double expected_saved_bytes;/* NAN unknown */
	/* The kernel's L1 hit rate with every load as built (baseline counters:
	 * l1_hits / l1_sectors), 0..1; NAN when not measured. */
	double l1_hit_rate;
	/* JIT-compiled baseline against the program's cubin, kernel time:
	 * baseline / cubin - 1 where both are unprofiled activity-record times
	 * of the same launches, else NAN with jit_vs_cubin_reason saying why
	 * the comparison is not shown (static). */
	double jit_vs_cubin;
	const char *jit_vs_cubin_reason;
	size_t nr_changes;          /* loads whose instruction the plan changes */
	size_t nr_patch_changes;    /* loads whose instruction the source plan changes */
	/* A kernel torch.compile generated (emitters/rewrite/inductor.h): its source
	 * file in Inductor's cache, NULL otherwise; and where it came from, as
	 * Inductor's output code says (owned; NULL when not found). */
	const char *generated_from;
	char *provenance;
	/* An MPI or Slurm job's ranks measured apart: how far their hit_i per
	 * launch are apart and which rank differs (nr_ranks 0 outside a job). */
	struct rank_spread ranks;
	struct report_load *loads;
	size_t nr_loads;
	/* Its asynchronous copies from global to shared memory (cp.async, a
	 * pipelined Triton tl.load, TMA), by source location: loads that are no
	 * ld.global, so neither measured nor patched (source_hints_resolve()
	 * reads them from the module's PTX; owned). */
	struct report_async_copy {
		char *file;             /* NULL without line info */
		int line;
		size_t copies;
	} *async_copies;
	size_t nr_async_copies;
};

/*
 * A module the program loaded that has no PTX (cuBLAS, PyTorch's kernels,
 * cubin-only builds): nothing in it can be patched. Borrowed from
 * capture.json's "modules".
 */
struct report_module {
	const char *id;
	const char *origin;         /* "cuModuleLoadData#3", NULL unknown */
	const char *library;        /* "cuBLAS", "PyTorch", NULL: the program's own code */
	/* Why it has no PTX and what would make it patchable, as recorded;
	 * a generic sentence for captures that recorded none. Owned. */
	char *reason;
	const char *const *kernels; /* names of its kernels the program launched */
	size_t nr_kernels;
	int has_kernels;            /* the capture lists them (possibly none) */
	double gpu_time_ns;         /* their GPU time in the discovery run, NAN unknown */
};

/* A source file some load comes from. */
struct report_source {
	char *recorded;             /* the path as the PTX's line info names it */
	char *path;                 /* as shown and as named in source.patch */
	char *read_path;            /* where it is read from */
	int under_root;             /* path is relative to the source root */
	struct source_file *file;   /* NULL when it cannot be read */
};

/* A section of advice other than the per-load plan, shown as recorded. */
struct report_section {
	const char *key;            /* "software_cache", "l2_windows", "register_cache" */
	const char *kernel;         /* kernel it belongs to, NULL for the whole program */
	const char *origin;         /* CAPTURE_LAYOUT_CAPTURE or CAPTURE_LAYOUT_PLAN */
	json_t *value;              /* as written, for showing its members (borrowed) */
	/* The section as the capture's reader typed it (borrowed), where it
	 * is one; NULL for plan.json's sections, shown as written. */
	const struct capture_software_cache *software_cache;
	const struct capture_oracle *oracle;
};

struct report_input {
	char *dir;                  /* the capture directory */
	struct capture model;       /* capture.json as its one reader accepted it */
	/* The analysis of the capture: own_analysis, or the caller's
	 * (report_input_init_from); NULL when it failed (incomplete capture). */
	const struct analysis *analysis;
	struct analysis own_analysis;
	struct plan plan;
	int plan_from_analysis;     /* plan.json was missing: the plan is the analysis' */
	/*
	 * The plan source.patch writes (issue 38, docs/plan-json.md "The
	 * source plan"): source-plan.json; where it is missing, the
	 * analysis' source plan when plan.json is missing too, else plan
	 * itself (a capture written before source plans). Loads only.
	 */
	struct plan source_plan;
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
	char *python;               /* the Python for Triton rewrites (--python); NULL:
				       python_rewrite_interpreter()'s choice, never the capture's */
	struct report_section *sections;
	size_t nr_sections;
	struct report_module *no_ptx;   /* modules without PTX */
	size_t nr_no_ptx;
	char **notes;               /* things the reader should know, one sentence each */
	size_t nr_notes;
	/* The first screen's facts, computed once from all of the above
	 * (emitters/report_summary.h): every format prints these. */
	struct report_summary summary;
};

struct report_input_options {
	/* Where the sources are now (apply/report --source-root); NULL: where
	 * they were at capture time. */
	const char *source_root;
	/* The Python that rewrites Triton tl.load calls (--python); NULL:
	 * CACHEADVISE_PYTHON, else python3 from PATH (emitters/rewrite/python_rewrite.h).
	 * Never a program named in the capture: a capture may come from
	 * someone else (docs/security.md). */
	const char *python;
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
 * stolen; a reference is taken), analysis (may be NULL; borrowed: it
 * outlives in), plan and source_plan (copied; source_plan NULL: plan).
 * dir is where the capture's files are (modules/ for PTX lines). Returns 0
 * or CA_E_INPUT as report_input_load.
 */
int report_input_init_from(struct report_input *in, const char *dir, json_t *capture,
			   const struct analysis *analysis, const struct plan *plan,
			   const struct plan *source_plan, const struct report_input_options *opt);

void report_input_release(struct report_input *in);

/*
 * The analysis of a capture (analysis/advise.h advise_capture) with the
 * model its options name: fills plan and source_plan (initialised by the
 * caller; source_plan may be NULL) and *analysis (caller releases it;
 * empty on error). Returns advise_capture's result.
 */
int report_input_analyse(const struct capture *cap, struct plan *plan, struct plan *source_plan,
			 struct analysis *analysis);

/*
 * A short label for the kernel: the function's name without return type,
 * scope, template arguments or parameters ("decode_keys"), from the
 * demangled name or, where none was recorded, from the mangled one; else
 * the name as recorded. Caller frees.
 */
char *report_kernel_label(const struct report_kernel *k);
/* report_kernel_label for a bare name and its demangled form (may be NULL). Caller frees. */
char *report_name_label(const char *name, const char *demangled);
/* The label of the kernel named name (mangled) in the capture, demangled where recorded. Caller frees. */
char *report_label_of(const struct report_input *in, const char *name);

/*
 * The program's command line as a user would paste it: the path and each
 * argument as one shell word (base/strbuf.h strbuf_add_shell_word), so an
 * argument holding spaces, $(...) or ; runs as recorded and nothing else.
 */
struct strbuf;
void report_program_command(struct strbuf *out, const struct report_input *in);

/* dir/file (file NULL: dir alone) as one shell word. */
void report_shell_path(struct strbuf *out, const char *dir, const char *file);

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

/*
 * Whether the plan changes l in a way the source plan does not carry: the
 * part of the advice only `run --plan` applies (issue 38: listed apart,
 * with its own figure). 1 or 0.
 */
int report_load_plan_only(const struct report_load *l);
/* Whether l is a Triton tl.load's whose plan action tl.load cannot write
 * (analysis/load_sites.h load_sites_triton_form). 1 or 0. */
int report_load_no_triton_form(const struct report_load *l);

/*
 * Whether a software-cache candidate is selected: its own "selected", else
 * whether the section's "selected" list names its parameter (older
 * captures). 1, 0, or -1 when neither says.
 */
int report_softcache_selected(const struct capture_software_cache *sc,
			      const struct capture_softcache_candidate *cand);

#endif
