#ifndef CACHEADVISE_CAPTURE_MODEL_H
#define CACHEADVISE_CAPTURE_MODEL_H

#include <stddef.h>

#include "analysis/device_model.h"
#include "base/run_cost.h"

/*
 * The capture (capture.json, docs/capture-json.md), typed: everything one
 * `cacheadvise profile` measured. This module is the one reader and the one
 * writer of the format: capture_from_json() parses and validates a whole
 * document once, capture_to_json() writes what the reader accepts, and no
 * other code reads capture.json by key.
 *
 * Units: L1/L2 traffic counts are 32-byte sectors (the device's
 * sector_bytes) unless a name says bytes; times are nanoseconds unless a
 * name says seconds. A number that was not measured is NAN in memory and
 * null in the file, never 0; an integer that is unknown is -1.
 *
 * Bounds the reader enforces (a refusal names the field's JSON path and
 * what was wrong, CA_E_INPUT):
 * - every number is finite; counts (sectors, bytes, launches, requests)
 *   are non-negative and at most CAPTURE_COUNT_MAX, the largest integer a
 *   double holds exactly, so a sum over any kernel's loads stays exact
 *   enough and no solver sees an overflowing weight;
 * - sizes of the device model are positive (device_model_from_json);
 * - grid and block extents are non-negative (0: not recorded);
 * - no two kernels share (module, name); no two loads of a kernel share an
 *   ordinal; no two pairs share {i, j}, and i != j;
 * - every cross-reference resolves: a kernel's module is in "modules", a
 *   pair's loads are loads of its kernel, a load's or pair's "run" and the
 *   baseline check's runs are in "runs", an allocs_used alloc is in
 *   "allocations".
 *
 * Measured noise is resolved where it is measured (src/profile): a pair
 * whose hit_{i,j} came out negative (counter noise on a difference of
 * replays) is written as 0 with `noise` saying what was measured, so the
 * reader never has to forgive a negative count.
 *
 * The writer starts from each object as it was read (`source`), so members
 * this version does not know stay as they were, and writes the typed
 * fields over it; an object built in memory (source NULL) gets its known
 * fields. write(read(x)) equals x (tests/unit/test_capture_model.c).
 *
 * Every section is typed: the software cache, register cache and oracle
 * sections (a kernel's own "oracle" read as the top-level oracle's
 * kernels[] are), "baseline_check", and "measure" (method and samples;
 * its per-kernel details are the in-run capture's working notes, kept as
 * they were written). src/profile builds the document as JSON, reads back
 * what it needs through the part readers below (runs, counters, a kernel,
 * the l2 section, verdicts, output checks), never by key, and writes
 * capture.json through this reader and capture_to_json(): what it writes
 * is what the writer writes of what the reader accepted. NEEDSWORK: the
 * profile holding a struct capture from the start (its GPU tests are its
 * only tests: with a GPU run to verify it).
 */

/* The largest count the reader accepts: 2^53. */
#define CAPTURE_COUNT_MAX 9007199254740992.0
/* The largest number of any list (kernels, loads, runs, ...). */
#define CAPTURE_LIST_MAX 1000000

#define CAPTURE_SCHEMA "cacheadvise.capture/1"

/* A section kept as written (opaque; see capture_section_json()). */
struct capture_section;

struct capture_program {
	char *path;                 /* absolute path of the program */
	char **args;                /* its arguments, nr_args of them */
	size_t nr_args;
	char *cwd;                  /* working directory, NULL unknown */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

struct capture_options {
	int top;                    /* --top, -1 unknown */
	double min_share;           /* --min-share, percent; NAN unknown */
	int max_loads;              /* --max-loads, -1 unknown */
	char *model;                /* "sector" | "classic"; NULL: sector */
	char *bypass_form;          /* "no_allocate" | "cg"; NULL unknown */
	char *kernels_regex;        /* --kernels, NULL none */
	int repeat;                 /* --repeat, -1 unknown */
	double timeout;             /* --timeout, seconds; NAN unknown */
	int l2_priority;            /* --l2-priority: 1, 0, -1 not written */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

struct capture_module {
	char *id;                   /* 16 hex digits of the PTX's SHA-256 */
	char *origin;               /* "app#fatbin0", "cuLibraryLoadData#2"; NULL unknown */
	char *arch;                 /* "sm_90"; NULL unknown */
	int has_ptx;
	char *ptx;                  /* modules/<id>.ptx, relative to the capture; NULL without */
	char *library;              /* "cuBLAS", ...; NULL: the program's own code */
	char *no_ptx_reason;        /* why not patchable; NULL when it has PTX */
	char **kernels;             /* names of its kernels the program launched */
	size_t nr_kernels;
	int has_kernels;            /* the list was written (possibly empty) */
	double gpu_time_ns;         /* their GPU time in the discovery run; NAN unknown */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

struct capture_file {
	char *path;                 /* as the run saw it, relative to cwd where under it */
	int removed;                /* the run removed it */
	double size;                /* bytes; NAN when removed */
	char *sha256;               /* NULL when removed */
	char *copy;                 /* runs/files/<sha256>: its contents kept, NULL none */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

struct capture_run {
	int index;                  /* runs/NNN, unique */
	char *variant;              /* discovery | baseline | capture | monitor | verify-* | ... */
	char *description;          /* NULL when none */
	char *log, *stdout_path, *stderr_path, *events; /* relative to the capture; NULL none */
	char *status;               /* ok | failed | timeout | killed */
	int has_exit_status;
	int exit_status;
	double wall_seconds;        /* NAN unknown */
	int has_gpu;                /* recorded (profile --gpus) */
	int files_compared;         /* 0: it ran beside others and its files are not
				       theirs to compare (--gpus); 1 or -1 (not written): they are */
	int gpu;                    /* the GPU it ran on, when has_gpu */
	char *stdout_sha256;        /* NULL unknown */
	/* "cost": where the run's processes spent their time (issue 39), by
	 * base/run_cost.h's mechanism; has_cost 0: not written */
	int has_cost;
	double injected_seconds;    /* since the injection started, all processes */
	double cost_seconds[RUN_COST_NR_MECHANISMS];
	struct capture_file *files; /* created or changed by the run */
	size_t nr_files;
	int has_files;
	int files_walk_truncated;   /* -1: not written */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

/* Counters of one variant, summed over launches (NAN: not measured). */
/* The metrics of a kernel's counters, as the injection library names them
 * (docs/injection.md "Metrics"), in the order of struct capture_counters. */
#define CAPTURE_NR_COUNTER_KEYS 7
extern const char *const capture_counter_keys[CAPTURE_NR_COUNTER_KEYS];

struct capture_counters {
	char *variant;              /* "baseline", "all_bypassed", "in_run_all", "baseline#2" */
	double l1_requests, l1_sectors, l1_hits, l1_misses; /* requests; sectors */
	double l2_sectors_from_l1;  /* sectors */
	double dram_bytes_read;     /* bytes */
	double duration_ns;         /* range profiler duration, not a verdict time */
	long long launches;         /* -1 not written */
	long long run;              /* run index, -1 not written */
	long long sampled_launches; /* -1 not written */
	long long timed_launches;   /* -1 not written */
	char *measured_as;          /* NULL not written */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

/* A call a load's source line was inlined at (analysis/ptx.h's
 * ptx_call_site). */
struct capture_call_site {
	char *file;
	long line;                  /* from 1 */
	int column;                 /* from 1; 0 unknown */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

struct capture_load {
	unsigned ordinal;           /* DESIGN.md "Load identity" */
	long ptx_line;              /* -1 unknown */
	char *instruction;          /* "ld.global.nc.f32"; NULL unknown */
	char *space;                /* "global" | "generic"; NULL unknown */
	char *cache_op;             /* "default", "ca", ...; NULL unknown */
	int nc;                     /* 1, 0, -1 unknown */
	int vector, bits;           /* -1 unknown */
	char *file;                 /* -lineinfo source file, NULL without */
	long line;                  /* from 1; 0 unknown (JSON null) */
	int column;                 /* of the .loc, from 1; 0 unknown: the PTX loads of one
				       source expression (a Triton tl.load) share it */
	/*
	 * Where file:line was inlined (a __device__ helper's line): the calls,
	 * innermost first, out to the call in the kernel's body. NULL and 0
	 * in the kernel's own body, and in captures written before it was
	 * recorded.
	 */
	struct capture_call_site *inlined_at;
	size_t nr_inlined_at;
	int param;                  /* kernel parameter index, -1 unknown */
	int read_only;              /* 1, 0, -1 unknown */
	int patchable;              /* 1, 0, -1 unknown (treated as patchable) */
	char *unpatchable_reason;   /* NULL when patchable */
	char *l1_eviction;          /* "normal", "evict_last", ...; NULL unknown */
	int measured;               /* 1, 0, -1 not written */
	int node;                   /* node index in the graph, -1 none */
	double hit;                 /* hit_i, sectors; NAN not measured */
	int run;                    /* run that measured hit, -1 none */
	double access;              /* access_i, sectors (monitor run); NAN none */
	double requests, lines, bytes; /* monitor run; NAN none */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

struct capture_pair {
	unsigned i, j;              /* load ordinals, i != j */
	double hit;                 /* hit_{i,j}, sectors; NAN not measured */
	int run;                    /* -1 none */
	/* Noise resolved where it was measured: the value the counters gave
	 * (NAN: none was resolved) and how ("clamped to 0"). */
	double noise_measured;
	char *noise_resolution;
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

struct capture_alloc_use {
	int param;                  /* kernel parameter index */
	long long alloc;            /* allocation seq */
	long long launches;         /* launches that passed it */
	long long offset;           /* -1 not written */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

struct capture_data_structure {
	int param;
	int read_only;              /* 1, 0, -1 unknown */
	double sim_hits, sim_accesses; /* the simulated 16-byte line */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

/*
 * A kernel's "l2_priority" (issue 26): the DRAM bytes the kernel read with
 * single loads, and pairs of loads, given an L2 eviction priority, against
 * every load as built. analysis/advise.c turns them into the gains of
 * analysis/multi_choice.h.
 */
struct capture_l2_load {
	unsigned ordinal;
	/* The loads measured together as one site (the PTX loads of one Triton
	 * tl.load or CUDA expression, analysis/load_sites.h), ordinal first;
	 * nr_ordinals 1 for a load measured alone ("ordinals" not written). */
	unsigned *ordinals;
	size_t nr_ordinals;
	double *dram_bytes;         /* per form of the section; NAN: not measured */
};

struct capture_l2_pair {
	unsigned i, j;              /* load ordinals, i != j */
	unsigned form_i, form_j;    /* indices into the section's forms */
	double dram_bytes;
};

struct capture_l2_priority {
	/* "L2::evict_first", "L2::evict_last", or with an L1 part for Triton's
	 * forms ("L1::evict_first+L2::evict_first": what eviction_policy=
	 * writes), in plan.json spelling */
	char **forms;
	size_t nr_forms;
	double baseline_dram_bytes; /* every load as built */
	double noise_dram_bytes;    /* the baseline's spread over its repeats; NAN unknown */
	struct capture_l2_load *loads;
	size_t nr_loads;
	struct capture_l2_pair *pairs;
	size_t nr_pairs;
	const struct capture_section *source;
};

/*
 * A kernel's "ranks" (issue 29): in an MPI or Slurm job, each measured
 * rank's own hit_i per launch (the single of each measured load, its L1 hits
 * summed over the launches it was sampled at, divided by them), so ranks
 * that launch the kernel different numbers of times compare. The loads'
 * hit_i and the pairs are the ranks' merged counters (SPMD); these say
 * whether the ranks agree (analysis/rank_spread.h).
 */
struct capture_rank_load {
	unsigned ordinal;           /* a load of the kernel */
	double hit_per_launch;      /* sectors per launch, a count */
	double samples;             /* launches it was measured at, > 0 */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

struct capture_kernel_rank {
	int rank;                   /* 0..2^30, unique in the kernel */
	char *gpu;                  /* PCI bus id, NULL unknown */
	long long launches;         /* the rank's launches in one run; -1 unknown */
	struct capture_rank_load *loads;
	size_t nr_loads;
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

/* A speedup as the verdicts give it: the median and its range (NAN unknown). */
struct capture_speedup {
	double min, median, max;
	int plain;                  /* written as one number (the median), not an object */
};

/* A software-cache candidate: a data structure the simulated cache could hold. */
struct capture_softcache_candidate {
	long long param;            /* kernel parameter index; -1 unknown */
	int read_only;              /* 1, 0, -1 unknown */
	double sim_hits, sim_accesses; /* simulated 16-byte lines; NAN unknown */
	double hit_rate;            /* as written, 0..1; NAN: not written */
	int selected;               /* 1, 0, -1: not written (the section's "selected" says) */
	char *why;                  /* NULL none */
};

/* The occupancy the software cache assumes (docs/monitor.md). */
struct capture_softcache_occupancy {
	long long threads_per_block, blocks_per_sm, threads_per_sm; /* -1 unknown */
	long long cln_per_sm, cln_per_block;                        /* -1 unknown */
	double shared_per_block, shared_used_per_sm, shared_free_per_sm; /* bytes; NAN */
	char *limited_by;           /* "threads", "shared_memory", "blocks", "grid"; NULL */
	char *registers;            /* "not modelled"; NULL */
	const struct capture_section *source; /* as written: its other members are shown */
};

/* The software cache as `profile` rewrote and timed it (src/profile/softcache.c). */
struct capture_softcache_verification {
	char *status;               /* "verified", or why not ("not rewritten", ...); NULL */
	char *reason;
	int kept;                   /* 1, 0, -1 */
	long long repeat;           /* rounds timed; -1 */
	double noise;               /* NAN */
	struct capture_speedup speedup; /* median kernel speedup and range; NAN */
	char *output_status;        /* output.status; NULL */
	int has_rewrite;
	long long *rewrite_params;  /* the parameters the rewrite caches */
	size_t nr_rewrite_params;
	long long rewrite_loads, rewrite_shared_bytes; /* -1 unknown */
	char *rewrite_ptx;          /* the module's PTX with the cache, relative to the capture */
	char *rewrite_note;
};

/* A kernel's "software_cache" (docs/monitor.md). */
struct capture_software_cache {
	int enabled;                /* 1, 0, -1 */
	long long cln, line_bytes;  /* -1 unknown */
	char *reason;
	int has_occupancy;
	struct capture_softcache_occupancy occupancy;
	struct capture_softcache_candidate *candidates;
	size_t nr_candidates;
	long long *selected;        /* parameters chosen, in order */
	size_t nr_selected;
	int has_selected;
	int has_verification;
	struct capture_softcache_verification verification;
	const struct capture_section *source; /* as written: its other members are shown */
};

/* A register-cache hint (analysis/stencil_detect.h), as the reports use it. */
struct capture_regcache_hint {
	long long param;            /* -1 unknown */
	long long k;                /* loads a thread keeps in registers */
	int k_exact;                /* 1, 0, -1 */
	long long *loads;           /* their ordinals */
	size_t nr_loads;
	const struct capture_section *source;
};

/* A kernel's "register_cache": a candidate the tool cannot apply itself. */
struct capture_register_cache {
	char *status;
	struct capture_regcache_hint *hints;
	size_t nr_hints;
	const struct capture_section *source;
};

/* A load's form in an L2 oracle plan. */
struct capture_oracle_l2 {
	unsigned ordinal;
	char *form;                 /* "L2::evict_last", "L1::evict_first+L2::evict_first" */
};

/* --oracle: one plan of a kernel and what it measured. */
struct capture_oracle_plan {
	long long *cached;          /* node indices cached */
	size_t nr_cached;
	/* an L2 plan (the kernel's dimension "l2"): the loads given a form,
	 * the others as the advice has them in L1, with no priority */
	struct capture_oracle_l2 *l2;
	size_t nr_l2;
	double median_ns, speedup;  /* NAN: not measured */
	char *output;               /* its output check's status; NULL */
};

struct capture_oracle_kernel {
	char *kernel;               /* mangled */
	/* "l1" (NULL: not written): every L1 plan; "l2": every L2 form of each
	 * measured load, the L1 side as advised (--l2-priority) */
	char *dimension;
	long long loads, rounds;    /* -1 unknown */
	struct capture_oracle_plan *plans;
	size_t nr_plans;
	long long best_plan, advised_plan; /* indices into plans; -1 unknown */
	double best_speedup, advised_speedup, ratio; /* NAN unknown */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

/* "oracle": every plan of the small kernels timed (src/profile/oracle.c). */
struct capture_oracle {
	char *status;               /* "measured", or why not */
	long long rounds;           /* -1 */
	long long plans_output_rejected; /* -1 */
	struct capture_oracle_kernel *kernels;
	size_t nr_kernels;
	int has_kernels;
	const struct capture_section *source;
};

struct capture_kernel {
	char *module;               /* a module id of capture.modules */
	char *name;                 /* mangled */
	char *demangled;            /* NULL not recorded */
	long long launches;         /* -1 unknown */
	long long grid[3], block[3];/* extents; 0: the launch did not say */
	int has_extents;            /* bit 0: grid was written, bit 1: block */
	long long dynamic_shared_bytes, static_shared_bytes; /* -1 unknown */
	int registers;              /* -1 unknown */
	double gpu_time_baseline_ns, gpu_time_cubin_ns; /* sums over launches; NAN unknown */
	int has_gpu_time;
	struct capture_counters *counters;
	size_t nr_counters;
	int has_counters;
	struct capture_load *loads;
	size_t nr_loads;
	int has_loads;
	struct capture_pair *pairs;
	size_t nr_pairs;
	int has_pairs;
	long long left_out_loads;   /* loads beyond --max-loads; -1 not written */
	struct capture_alloc_use *allocs_used;
	size_t nr_allocs_used;
	int has_allocs_used;
	double monitor_gpu_time_ns; /* NAN: not monitored */
	double efficiency_on, efficiency_off; /* E_on / E_off (classic model), NAN none */
	int has_efficiency;
	struct capture_data_structure *data_structures;
	size_t nr_data_structures;
	int has_data_structures;
	/* written by later steps */
	struct capture_verdict *verification; /* its own verdict, NULL none */
	struct capture_software_cache *software_cache; /* NULL: absent or null */
	struct capture_register_cache *register_cache; /* NULL: absent or null */
	struct capture_l2_priority *l2_priority; /* NULL: not measured */
	struct capture_kernel_rank *ranks;       /* a job's measured ranks apart; none outside a job */
	size_t nr_ranks;
	/* the kernel's --oracle numbers, read as the top-level oracle's kernels[]
	 * are; NULL: absent or null */
	struct capture_oracle_kernel *oracle;
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

/* The steps a run belongs to (analysis/capture_cost.h capture_cost_step). */
#define CAPTURE_NR_STEPS 9
extern const char *const capture_steps[CAPTURE_NR_STEPS];

/* "cost": what the profile cost, rewritten with every write (docs/capture-json.md). */
struct capture_cost {
	long long program_runs;     /* runs[] recorded; -1 not written */
	long long runs_by_step[CAPTURE_NR_STEPS];   /* by capture_steps[]; 0 none */
	double seconds_by_step[CAPTURE_NR_STEPS];   /* wall seconds of those runs; NAN none */
	long long launches_counted; /* launches whose cache counters were read; -1 */
	double wall_seconds;        /* the profile's elapsed time at this write; NAN */
	double native_seconds;      /* the discovery run's; NAN unknown */
	double ratio;               /* wall_seconds / native_seconds; NAN unknown */
	/*
	 * "seconds_by_mechanism" (issue 39): the runs' time by mechanism
	 * (summed over the runs that wrote a cost), the program's own time
	 * (those runs' wall time less the mechanisms), and the tool's time
	 * outside the runs (wall_seconds less every run's wall time, 0 when
	 * runs side by side (--gpus) overlap more). has_mechanisms 0: none.
	 */
	int has_mechanisms;
	double mechanism_seconds[RUN_COST_NR_MECHANISMS];
	double program_seconds, tool_seconds;
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

/* A step the profile's budget skipped (--budget). */
struct capture_budget_skip {
	char *step;                 /* "the L2 window step" */
	int runs;                   /* the program runs it would have taken */
	double estimate_seconds, spent_seconds;
	const struct capture_section *source;
};

/* "budget": present when --budget skipped a step. */
struct capture_budget {
	double factor;              /* --budget X (native run times) */
	double seconds;             /* the budget; NAN: none (no native time) */
	double native_seconds;      /* NAN unknown */
	struct capture_budget_skip *skipped;
	size_t nr_skipped;
	const struct capture_section *source;
};

/* A file of an output check (analysis/output_check.h). */
struct capture_output_file {
	char *path;
	char *status;               /* identical | within_tolerance | changed | unchecked |
				       created | missing */
	double size;                /* bytes; NAN unknown */
	char *sha256;               /* NULL unknown */
	int removed;
	char *compared_as;          /* "f32", "f64", "text"; NULL */
	double max_abs_difference, max_rel_difference; /* within_tolerance; NAN */
	double advice_size;         /* a changed file: the advice run's; NAN */
	char *advice_sha256;
	const struct capture_section *source;
};

/* An output check: baseline_check.output, verification.output. */
struct capture_output_check {
	char *status;               /* identical | within_tolerance | changed | unchecked */
	double rtol, atol;          /* NAN: not recorded (before issue 25) */
	int has_max_difference;
	double max_abs, max_rel;    /* the largest difference within the tolerance */
	char *max_where;
	long long volatile_lines, unstable_lines, left_out; /* -1 not written */
	char **volatile_examples, **unstable_examples;
	size_t nr_volatile_examples, nr_unstable_examples;
	struct capture_output_file *files;
	size_t nr_files;
	char *reason;
	const struct capture_section *source;
};


/* A kernel's verification verdict (analysis/ab_verdict.h): in
 * verification.kernels[] and in a kernel's own "verification". */
/* A job's rank in a kernel's verdict (issue 29, analysis/ab_verdict.h
 * ab_rank_verdicts_apply): its own speedup, or why it was not timed. */
struct capture_rank_verdict {
	int rank;
	char *gpu;                  /* NULL unknown */
	double median;              /* the rank's median kernel speedup; NAN not timed */
	int kept;                   /* 1, 0, -1 not timed */
	char *not_timed;            /* why not; NULL when timed */
};

struct capture_verdict {
	char *name;                 /* the kernel (verification.kernels[]); NULL unknown */
	char *module;               /* NULL unknown */
	struct capture_speedup speedup; /* median kernel speedup and range; NAN */
	double noise;               /* baseline against baseline spread; NAN */
	double spread;              /* the older name of noise; NAN */
	int kept;                   /* 1, 0, -1 not written */
	char *reason;               /* why kept or not; NULL */
	struct capture_rank_verdict *ranks; /* a job's ranks apart; none outside a job */
	size_t nr_ranks;
	const struct capture_section *source;
};

/* verification.source_patch: the source patch timed as its own plan. */
struct capture_left_out {
	char *function;             /* mangled */
	long long ordinal;          /* -1 */
	char *action, *reason;
	const struct capture_section *source;
};

struct capture_source_patch {
	long long rewritten;        /* loads it rewrites; -1 */
	struct capture_left_out *left_out;
	size_t nr_left_out;
	char *status;               /* "verified", "same as the advice", "changes no load", ... */
	double speedup;             /* program GPU speedup; NAN */
	/* kernels the timing rejected, left out of the source plan */
	char **dropped;
	size_t nr_dropped;
	const struct capture_section *source;
};

/* One kernel of "verification.rebuilt". */
struct capture_rebuilt_kernel {
	char *name;
	double speedup;             /* median kernel speedup; NAN */
	int kept;                   /* 1, 0, -1 */
};

/*
 * "verification.rebuilt" (issue 38): the program rebuilt from source.patch
 * in a private copy of its sources and timed against the original, what
 * `apply` delivers. status "timed" with speedup (program GPU time; NAN when
 * the two did different work, reason saying so), or "not rebuilt" with
 * reason.
 */
struct capture_rebuilt {
	char *status;
	char *reason;               /* NULL */
	char *how;                  /* "built with 'make' in a private copy ...", NULL */
	double speedup;
	double seconds;             /* the step's wall time: copy, build and timing; NAN */
	long long runs;             /* program runs it timed; -1 unknown */
	struct capture_rebuilt_kernel *kernels;
	size_t nr_kernels;
	const struct capture_section *source;
};

/* "verification": the advice timed against the baseline. */
struct capture_verification {
	char *status;               /* "verified", ...; NULL */
	int kept;                   /* 1, 0, -1 */
	struct capture_verdict *kernels;
	size_t nr_kernels;
	struct capture_speedup gpu_speedup; /* program.gpu_speedup; NAN */
	struct capture_speedup speedup;     /* a top-level "speedup" (older captures); NAN */
	int has_source_patch;
	struct capture_source_patch source_patch;
	int has_rebuilt;
	struct capture_rebuilt rebuilt;
	const struct capture_section *source;
};

/* "l2".windows[]: a persisting-L2 window and its measurement. */
struct capture_l2_window {
	char *variant;              /* "guide", "half_ratio", "fit_set_aside" */
	long long alloc;            /* allocation seq; -1 */
	double num_bytes, set_aside_bytes; /* NAN unknown */
	double hit_ratio;           /* NAN unknown */
	char **kernels, **kernels_without_ptx;
	size_t nr_kernels, nr_kernels_without_ptx;
	/* verification: NULL-like (measured 0) when not measured */
	int measured;
	int kept;                   /* 1, 0, -1 not written */
	char *reason;
	double dram_bytes;          /* DRAM read with the window; NAN */
	struct capture_speedup speedup; /* NAN: not timed */
	double noise;
	long long ended_after_rounds; /* -1 */
	const struct capture_section *source;
};

/* "l2": the persisting-L2 window step (analysis/l2_advise.h). */
struct capture_l2 {
	char *status;               /* "advised" | "none" */
	char *reason;
	double baseline_dram_bytes; /* NAN unknown */
	/* what the windows were timed against, where not the program as
	 * built: "the kept per-load L2 priorities" (a window must beat them on
	 * the same data, issue 26); NULL: as built */
	char *baseline;
	struct capture_l2_window *windows;
	size_t nr_windows;
	char *kept;                 /* the variant kept; NULL: none */
	int has_kept;               /* "kept" was written (possibly null) */
	const struct capture_section *source;
};

/* "carveout".kernels[]: a carve-out the program (or a library) sets. */
struct capture_carveout_kernel {
	char *name;                 /* mangled */
	int program_value;          /* percent of shared memory; -1 the driver's default (as the
				       program passed it, even a value the driver refused) */
	int default_value;          /* -1 */
	long long launches;         /* -1 not written */
	/* speedup_of_default: the driver's default against the program's
	 * setting, or not measured (measured 0) */
	int measured;
	char *method;               /* "in-run, ABBA launches"; NULL */
	struct capture_speedup speedup;
	double noise;               /* NAN unknown */
	char *kept;                 /* "default" | "program" */
	char *reason;
	char *advice;               /* what to change, where "default" is kept; NULL */
	const struct capture_section *source;
};

struct capture_carveout {
	struct capture_carveout_kernel *kernels;
	size_t nr_kernels;
	const struct capture_section *source;
};

struct capture_kernel_seen {
	char *name;
	long long launches;
	double gpu_time_ns;         /* NAN unknown */
	struct capture_alloc_use *allocs_used;
	size_t nr_allocs_used;
	int has_allocs_used;
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

struct capture_allocation {
	long long seq;              /* program order, unique */
	double bytes;               /* size in bytes (cudaMalloc(0) records 0) */
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

/*
 * "baseline_check": how alike the baseline runs were (src/profile: two
 * baseline runs with counters, or the in-run capture's reference runs).
 */
struct capture_baseline_check {
	long long *runs;            /* indices of runs in "runs", nr_runs of them */
	size_t nr_runs;
	int output_identical;       /* 1, 0, -1 not written */
	double max_counter_spread;  /* largest relative difference of a counter, as a
				       fraction (0.004 = 0.4%); NAN not written */
	char **notes;               /* what differed, nr_notes of them */
	size_t nr_notes;
	int has_notes;
	const struct capture_section *source; /* as read (borrowed), NULL when built */
};

/* "measure": how hit_i and hit_{i,j} were measured (docs/capture-json.md). */
struct capture_measure {
	char *method;               /* "launches" (in-run) | "runs"; NULL unknown */
	/* launches sampled or replayed in-run: the sum of
	 * kernels.*.variants.*.samples (0 none) */
	double samples;
	const struct capture_section *source; /* as written: the rest is kept */
};

struct capture {
	char *schema;               /* CAPTURE_SCHEMA */
	char *status;               /* "complete" | "incomplete" | "running" */
	char *tool_version, *created; /* NULL unknown */
	struct capture_program program;
	int has_program;
	struct device_model device; /* "device": the model the analysis used */
	int has_device;
	/* device.partitioned: why the GPU is shared (MIG, MPS), NULL when not */
	char *device_partitioned;
	struct capture_options options;
	int has_options;
	struct capture_module *modules;
	size_t nr_modules;
	int has_modules;
	struct capture_run *runs;
	size_t nr_runs;
	int has_runs;
	struct capture_kernel *kernels;
	size_t nr_kernels;
	char **notes;
	size_t nr_notes;
	int has_notes;
	struct capture_kernel_seen *all_kernels;
	size_t nr_all_kernels;
	int has_all_kernels;
	struct capture_allocation *allocations;
	size_t nr_allocations;
	int has_allocations;
	struct capture_cost cost;
	int has_cost;
	struct capture_budget budget;
	int has_budget;
	struct capture_carveout carveout;
	int has_carveout;
	struct capture_l2 l2;
	int has_l2;
	/* the output checks of the baseline runs and of the verification */
	struct capture_output_check baseline_output, verification_output;
	int has_baseline_output, has_verification_output;
	/* sections of the later steps, kept as written (NULL: absent or null) */
	struct capture_verification verification;
	int has_verification;
	struct capture_oracle *oracle; /* NULL: absent or null */
	struct capture_measure measure;
	int has_measure;
	struct capture_baseline_check baseline_check;
	int has_baseline_check;
	const struct capture_section *device_json; /* "device" as written */
	/* The whole document as read (owned; every `source` and section points
	 * into it), NULL when built. */
	struct capture_section *source;
};

/* An empty capture (status NULL, nothing measured). */
void capture_init(struct capture *cap);
void capture_release(struct capture *cap);

/*
 * Reads and validates a capture.json document (jansson's json_t, not
 * stolen) into cap, which must be initialised; `name` (the file's path)
 * prefixes every message. Returns 0 or CA_E_INPUT with a message naming
 * the field's path ("capture.json: kernels[0].pairs[2].hit: -13.3 is not a
 * count: counts are non-negative") and what to do. On error cap holds
 * whatever was read and must still be released.
 */
struct json_t;
int capture_from_json(struct capture *cap, struct json_t *doc, const char *name);

/*
 * Reads one "kernels" item (as capture_from_json() reads each, without the
 * checks across the document: its module, its runs) into k, zeroed by the
 * caller; release it with capture_kernel_release() either way. For the
 * profile, which ranks a kernel's software cache while the document is
 * still being written. Returns 0 or CA_E_INPUT naming the field.
 */
int capture_kernel_from_json(struct capture_kernel *k, struct json_t *o, const char *name);
/*
 * Reads one "runs" item into run, zeroed by the caller (release it with
 * capture_run_release() either way): for the profile, which keeps its runs
 * typed as it records them. `source` points into o. Returns 0 or
 * CA_E_INPUT naming the field.
 */
int capture_run_from_json(struct capture_run *run, struct json_t *o, const char *name);

/* A run's "cost" object (has_cost set), as capture.json holds it: for the
 * profile, which writes its run records as the runs end. New reference. */
struct json_t *capture_run_cost_json(const struct capture_run *run);

/* "verification.rebuilt" as capture.json holds it: the model's one writer
 * of it, for the profile's rebuild step too. New reference. */
struct json_t *capture_rebuilt_json(const struct capture_rebuilt *rb);
void capture_rebuilt_release(struct capture_rebuilt *rb);
/*
 * The capture's parts its writers make elsewhere, read by the one reader
 * (zeroed by the caller, released either way): a verdict
 * (analysis/ab_verdict.h), an output check's judgement
 * (analysis/output_check.h), and o[key] as a speedup ({"min", "median",
 * "max"} or one number). Each returns 0 or CA_E_INPUT naming the field.
 */
int capture_verdict_from_json(struct capture_verdict *v, struct json_t *o, const char *name);
void capture_verdict_release(struct capture_verdict *v);
int capture_output_check_from_json(struct capture_output_check *oc, struct json_t *o,
				   const char *name);
void capture_output_check_release(struct capture_output_check *oc);
int capture_speedup_from_json(struct capture_speedup *sp, struct json_t *o, const char *key,
			      const char *name);
/* Reads an "l2" section (o, as l2_advise() returns it) into l2, zeroed by
 * the caller; each window's source is its object in o. Release with
 * capture_l2_release() either way. */
int capture_l2_from_json(struct capture_l2 *l2, struct json_t *o, const char *name);
void capture_l2_release(struct capture_l2 *l2);
/* Reads one kernel's "counters" entry (variant -> o) into cc, zeroed by the
 * caller; release with capture_counters_release() either way. */
int capture_counters_from_json(struct capture_counters *cc, const char *variant, struct json_t *o,
				const char *name);
void capture_counters_release(struct capture_counters *cc);
void capture_run_release(struct capture_run *run);
void capture_kernel_release(struct capture_kernel *k);

/*
 * The document capture_from_json() reads back (caller owns). Fields the
 * reader kept as sections and members it did not know are written as
 * they were read.
 */
struct json_t *capture_to_json(const struct capture *cap);

/*
 * Loads path (base/json_file.h) and reads it with capture_from_json after
 * checking the schema (a newer one is refused with a message saying so).
 */
int capture_load_file(struct capture *cap, const char *path);

/*
 * Validates cap (as the reader would) and writes it atomically to path.
 * Returns 0, CA_E_INPUT when cap is not what the reader accepts (nothing is
 * written: the message names the field), or CA_E_IO.
 */
int capture_write_file(const struct capture *cap, const char *path);

/*
 * Validates a document by reading it: 0 when capture_from_json accepts it,
 * else its error. The profile calls this before every write of
 * capture.json, so it never writes what `report` would refuse.
 */
int capture_validate_json(struct json_t *doc, const char *name);

/*
 * Makes a capture document being written (the profile's) one the reader
 * accepts where what it refuses is a kernel's measured numbers: each such
 * kernel's hit_i and hit_{i,j} become null (its loads are then "not
 * measured") and it is listed in *dropped (kernel name and the reader's
 * message; free with capture_dropped_free). A bad number costs its kernel,
 * never the profile (issue 25). Returns 0 when doc is accepted now, or the
 * reader's error for what dropping numbers does not mend.
 */
struct capture_dropped {
	char *kernel;
	char *why;
};
int capture_settle_json(struct json_t *doc, const char *name, struct capture_dropped **dropped,
			size_t *nr);
void capture_dropped_free(struct capture_dropped *dropped, size_t nr);

/* Lookups; NULL when absent. */
const struct capture_module *capture_find_module(const struct capture *cap, const char *id);
const struct capture_kernel *capture_find_kernel(const struct capture *cap, const char *module,
						 const char *name);
const struct capture_load *capture_kernel_find_load(const struct capture_kernel *k,
						    unsigned ordinal);
const struct capture_counters *capture_kernel_counters(const struct capture_kernel *k,
						       const char *variant);
const struct capture_run *capture_find_run(const struct capture *cap, int index);
/* The library (modules[].library: "cuBLAS") whose module without PTX holds
 * the kernel; NULL: the program's own code. */
const char *capture_kernel_library(const struct capture *cap, const char *kernel);

/* cost as capture.json's "cost" object (what the writer writes; new reference). */
struct json_t *capture_cost_to_json(const struct capture_cost *cost);

/*
 * The JSON of a section kept as written (borrowed, valid while cap lives),
 * or NULL when sec is NULL or was null. NEEDSWORK: readers of these
 * sections take them by key until they are typed here.
 */
struct json_t *capture_section_json(const struct capture_section *sec);

/*
 * A new object with the members keys[] (NULL-terminated) of a section as
 * written, each copied, null where absent: what the JSON report echoes of
 * the capture ("program", "runs", a kernel's "grid"). Caller owns.
 */
struct json_t *capture_members_json(const struct capture_section *sec, const char *const *keys);

#endif
