#ifndef CACHEADVISE_EVENTS_H
#define CACHEADVISE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/run_cost.h"

/*
 * What one program run told the injection library (OUT/events.jsonl, one
 * JSON object a line; docs/injection.md), gathered per kernel.
 */

struct event_module {
	char *id;
	char *origin;
	char *path;                /* the file cuModuleLoad read, NULL for an image */
	char *ptx_file;            /* a cubin's PTX found beside it (Triton), NULL none */
	json_t *triton;            /* Triton's metadata of it ({"num_warps", ...}), NULL none */
	int has_ptx;
	int substituted;
	char *substitute_error;    /* NULL unless the driver rejected the substitute */
};

/* Everything measured for one kernel (by mangled name) in one run. */
struct event_kernel {
	char *name;
	char *module;              /* module id, NULL when unknown */
	unsigned launches;
	unsigned grid[3], block[3];/* of the first launch */
	unsigned dynamic_shared;
	int static_shared;         /* from activity records, -1 unknown */
	int registers;             /* from activity records, -1 unknown */
	uint64_t gpu_time_ns;      /* activity records, summed */
	unsigned timed_launches;
	/* the same, of the program's own launches alone: the library's replays
	 * run inside the program's launch call and share its correlation id
	 * (measured on an H100, CUDA 13), so of a launch's records the last to
	 * start is the program's own and the earlier ones are replays */
	uint64_t program_gpu_time_ns;
	unsigned program_timed_launches;
	json_t *metrics;           /* object: metric key -> summed value (owned), NULL if none */
	unsigned metric_launches;
	uint64_t *counters;        /* monitor counters summed over launches (owned) */
	size_t nr_counters;
	unsigned counter_launches; /* launches the monitor counters came from */
	json_t *args;              /* args of the first launch (owned) */
	/*
	 * Launch plans (docs/injection.md): counters of each variant replayed
	 * at sampled launches, kept apart from `metrics` (label -> object of
	 * summed metric values plus "samples", the launches it was measured
	 * at); the replay events (cost of saving and restoring memory), the
	 * reasons replays were refused; and per-launch GPU times of each
	 * version the plan chose (label -> array of ns, program launches) and
	 * of the versions' replays (label -> array of ns: the replays' own
	 * activity records where they can be matched to the `replay_time`
	 * events, else the library's CUDA-event times). All owned, NULL
	 * when the run had none.
	 */
	json_t *variants;
	json_t *variant_hits_at;   /* label -> {"process:ordinal": l1_hits} (owned, or NULL) */
	json_t *replays;
	json_t *replay_refused;
	json_t *version_ns;
	json_t *replay_ns;
	/*
	 * The carve-out check of a launch plan (issue 18): per-launch GPU
	 * times of each carve-out setting the plan chose (`carveout` events
	 * joined through the correlation id; setting label -> array of ns) and
	 * of its replays (`carveout_replay_time`, activity times as for
	 * replay_ns). Owned, NULL when none.
	 */
	json_t *carveout_ns;
	json_t *carveout_replay_ns;
};

struct run_events_rank;

struct run_events {
	struct event_module *modules;
	size_t nr_modules, alloc_modules;
	struct event_kernel *kernels;
	size_t nr_kernels, alloc_kernels;
	unsigned launches;
	int saw_start, saw_exit;
	json_t *errors;            /* array of strings (owned) */
	json_t *allocations;       /* array of {"seq","bytes"} (owned) */
	json_t *launch_sequence;   /* array of {"seq","kernel","args"} (owned) */
	json_t *metric_names;      /* metrics the profiler used, or NULL */
	/*
	 * What the program set on its kernels (`attribute` events, issue 18):
	 * kernel name -> {attribute -> the last value set}, the attributes
	 * being "preferred_shared_memory_carveout" and
	 * "max_dynamic_shared_size_bytes" (numbers) and "cache_config" (a
	 * name); "" holds the context's (cuCtxSetCacheConfig). Kept apart from
	 * `kernels`, since a program may set attributes on kernels it never
	 * launches. Owned, NULL when none.
	 */
	json_t *attributes;
	/* The ranks of an MPI or Slurm job whose processes wrote events (the
	 * `rank` event, collectors/launcher.h), each once, in the order read;
	 * none outside a job. */
	int *ranks;
	size_t nr_ranks;
	/* Each rank's own events, read apart from the merged ones above (a
	 * process's file belongs to the rank its `rank` event names; the files
	 * of processes that named none are in the merged events alone), in
	 * the order of `ranks`. Per-rank hit_i and timing come from these
	 * (issue 29). */
	struct run_events_rank *rank_events;
	size_t nr_rank_events;
	/* The GPU the first process's first context ran on (the `device`
	 * event: PCI bus id), NULL unknown. */
	char *gpu;
	/* Where the processes' time went (the `cost` events, issue 39):
	 * seconds by base/run_cost.h's mechanism and in all since the
	 * injection started, summed over the processes that wrote one. */
	int has_cost;
	double cost_seconds[RUN_COST_NR_MECHANISMS];
	double injected_seconds;
	int file_rank_;            /* private: the rank the file being read named, -1 none */
	int files_;                /* private: the processes' files read so far */
	json_t *join_;             /* private: one process's correlation -> version */
	json_t *pending_;          /* private: one process's records joined at its end */
	json_t *alloc_by_seq_;     /* private: seq (as text) -> its entry of allocations */
};

/* One rank of a job, as its own processes' files told it. */
struct run_events_rank {
	int rank;
	struct run_events *ev;     /* its events alone (owned); ev->gpu: its GPU */
};

void run_events_init(struct run_events *ev);
void run_events_release(struct run_events *ev);

/*
 * Reads path. A torn last line (the program died mid-write) is ignored; a
 * missing file leaves ev empty and returns 0 (the program never initialised
 * CUDA). Returns CA_E_INPUT only for a file that cannot be read at all.
 *
 * When path is DIR/events.jsonl, the files of the run's other processes
 * beside it (DIR/events.<pid>.jsonl, docs/injection.md) are read after it,
 * in pid order, and merged per kernel: launches, metrics, times and
 * counters add up. saw_exit is set only when every process that started
 * exited cleanly.
 * Allocations are keyed by seq, which restarts in each process: the
 * processes' allocations of one seq are one entry (the largest size), as
 * the injection library applies a window by seq in every process.
 * NEEDSWORK: the launch sequence is concatenated process after process.
 */
int run_events_load(struct run_events *ev, const char *path);

struct event_kernel *run_events_kernel(struct run_events *ev, const char *name);
/*
 * The last value the program set of a numeric attribute of a kernel
 * ("preferred_shared_memory_carveout", "max_dynamic_shared_size_bytes"; ""
 * names the context's): 1 with *value, or 0 when it set none.
 */
int run_events_attribute_int(const struct run_events *ev, const char *kernel,
			     const char *attribute, long long *value);
/*
 * Which allocations the kernel's pointer arguments pointed into, over all
 * its launches (the launch sequence): [{"param", "alloc", "launches"}], a
 * parameter and allocation counted once a launch. A new array.
 */
json_t *run_events_allocs_used(const struct run_events *ev, const char *kernel);
/* The events of one rank of a job, NULL when no process named that rank. */
struct run_events *run_events_of_rank(const struct run_events *ev, int rank);
/*
 * What a variant of the launch plan measured at a kernel (its "variants"):
 * the summed value of metric key and the launches it was measured at.
 * Returns 0 when the variant or the metric was not measured.
 */
int event_kernel_variant(const struct event_kernel *k, const char *label, const char *key,
			 double *sum, double *samples);
/*
 * The L1 hits a variant of the launch plan measured at one sampled launch
 * of one process. Launch ordinals count one process's launches of the
 * kernel, so two processes of a run (a job's ranks) each have their own
 * launch 4: `process` is the rank the process's file named, or, where it
 * named none, -1 - the place of its file among those read (events.jsonl
 * first), so that a pair is compared with its singles in the process that
 * measured both (issue 35).
 */
struct event_hits_at {
	int process;
	uint64_t ordinal;           /* the kernel's launch in that process */
	double l1_hits;
};
/*
 * The variant's hits at each sampled launch apart (`variant_hits_at`): a
 * new array (caller frees) in *at of the returned number; 0 when none.
 */
size_t event_kernel_variant_hits_at(const struct event_kernel *k, const char *label,
				    struct event_hits_at **at);
/*
 * The launches of a kernel in one process: in a job, the fewest of the
 * ranks that launched it (each rank's own events), so that a launch ordinal
 * chosen below it comes in every rank; outside a job, all of the run's. 0
 * when nothing launched it.
 */
unsigned run_events_launches_per_process(const struct run_events *ev, const char *kernel);
/* The summed value of a metric of the kernel's own launches (`metrics`),
 * NAN when it was not measured. */
double event_kernel_metric(const struct event_kernel *k, const char *key);
/* The per-launch GPU times of a kernel, by the table they are kept in. */
enum event_times {
	EVENT_VERSION_NS,           /* a launch plan's versions, program launches */
	EVENT_REPLAY_NS,            /* the versions' replays */
	EVENT_CARVEOUT_NS,          /* the carve-out check's settings, program launches */
	EVENT_CARVEOUT_REPLAY_NS,   /* the settings' replays */
};
/*
 * The per-launch GPU times (ns) of `label` (a version or a carve-out
 * setting of the launch plan) in that table: a new array (caller frees) of
 * *n values; *n is 0 when there are none.
 */
double *event_kernel_times(const struct event_kernel *k, enum event_times table,
			   const char *label, size_t *n);

#endif
