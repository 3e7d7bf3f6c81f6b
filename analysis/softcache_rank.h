#ifndef CACHEADVISE_SOFTCACHE_RANK_H
#define CACHEADVISE_SOFTCACHE_RANK_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "analysis/capture_model.h"
#include "analysis/device_model.h"

/*
 * The software-cache seed's selection step (software-cache-resurrecting-l1,
 * "Determining what to cache"; docs/monitor.md): how many thread-private
 * 16-byte lines each thread can have (CLN), and which data structures
 * (kernel pointer parameters) get them, ranked by the hits the monitor run
 * simulated for one line per data structure.
 *
 *   CLN = floor((free shared memory per SM / threads per SM) / 16)
 *
 * where the free shared memory is what the kernel's resident blocks leave
 * of the SM's shared memory, and threads per SM come from a simple
 * occupancy model of the launch (threads, shared memory, the blocks-per-SM
 * limit and the grid size; registers are not known from PTX and are not
 * modelled, which can only make CLN smaller than the truth). The top CLN
 * data structures by simulated hits are chosen, preferring a read-only one
 * unless a read-write one has at least twice its hits (the seed's 2x
 * rule). CLN = 0 disables the cache, and the result says why.
 */

#define SOFTCACHE_LINE_BYTES 16
#define SOFTCACHE_RW_FACTOR 2   /* a read-write structure needs 2x the hits */

/* The device properties the model needs (capture.json "device"). */
struct softcache_device {
	unsigned long long shared_per_sm;           /* shared memory per SM, bytes */
	unsigned long long shared_per_block_optin;  /* most one block may opt in to; 0 unknown */
	unsigned long long reserved_shared_per_block; /* the driver's per-block reserve */
	unsigned shared_alloc_unit;                 /* allocation granularity, bytes */
	unsigned max_threads_per_sm;
	unsigned max_blocks_per_sm;
	unsigned warp_size;
	unsigned sm_count;                          /* 0 unknown: the grid does not limit */
};

/* A kernel launch (capture.json kernel "block", "grid", shared bytes). */
struct softcache_launch {
	unsigned block[3];
	unsigned grid[3];                           /* 0s: unknown, not limiting */
	unsigned long long static_shared_bytes;
	unsigned long long dynamic_shared_bytes;
};

/* A data structure as the monitor run saw it. */
struct softcache_candidate {
	int param;                  /* kernel parameter index */
	int read_only;              /* 1, 0, or -1 unknown (treated as read-write) */
	uint64_t sim_hits;
	uint64_t sim_accesses;
	/* set by softcache_rank_compute() */
	int selected;
	const char *why;            /* static string: why it was or was not chosen */
};

struct softcache_rank {
	int enabled;                /* CLN > 0 and something worth caching */
	unsigned cln;               /* lines per thread the SM can give */
	char *reason;               /* one sentence: what was decided and why */
	/* the occupancy model */
	unsigned threads_per_block;
	unsigned blocks_per_sm;
	const char *limited_by;     /* "threads", "shared_memory", "blocks", "grid" */
	unsigned threads_per_sm;
	unsigned long long shared_per_block;    /* allocated, with the reserve */
	unsigned long long shared_used_per_sm;
	unsigned long long shared_free_per_sm;
	unsigned cln_per_sm;        /* from the SM's free shared memory */
	unsigned cln_per_block;     /* from the per-block opt-in limit (UINT_MAX: none) */
	/* candidates, best first (hits, then hit rate, then parameter) */
	struct softcache_candidate *candidates;
	size_t nr_candidates;
	int *selected;              /* parameter indices in the order chosen */
	size_t nr_selected;
};

/*
 * The defaults: an H100/H200 (cc 9.0): 228 KB shared memory per SM, 227 KB
 * opt-in per block, 1 KB reserved per block, 128-byte allocation unit,
 * 2048 threads and 32 blocks per SM, warps of 32, SM count unknown.
 */
void softcache_device_init(struct softcache_device *d);

/*
 * The device as the software cache sees it, from the device model (the
 * capture's "device", analysis/device_model.h; NULL: the defaults):
 * shared_per_sm, shared_per_block_optin, max_threads_per_sm and sm_count
 * where the model has them (0: the default), and the per-block reserve of
 * shared memory, which came with sm_80: none below compute capability 8.0,
 * the model's from 8.0, the default when the capability is unknown. The
 * allocation unit, blocks per SM and warp size are the defaults.
 */
void softcache_device_from_model(struct softcache_device *d, const struct device_model *dm);

void softcache_rank_init(struct softcache_rank *r);
void softcache_rank_release(struct softcache_rank *r);

/*
 * Computes CLN and the selection into r (initialised; previous contents
 * are released). The candidates are copied. A block of 0 threads or more
 * than 1024, or more threads than max_threads_per_sm, is CA_E_INPUT.
 * Candidates with no simulated hits are never chosen.
 */
int softcache_rank_compute(struct softcache_rank *r, const struct softcache_device *d,
			   const struct softcache_launch *l,
			   const struct softcache_candidate *c, size_t nr);

/*
 * The same for a kernel of the capture (analysis/capture_model.h, as its
 * reader accepted it) on the device dm (NULL: defaults). Data structures
 * whose sim_hits is unknown were not measured and are left out; a kernel
 * without any is not an error: the result is disabled and says so. The
 * block is required; a grid not recorded does not limit the blocks per SM,
 * and unknown shared-memory sizes count as 0. A missing block, one of
 * sim_hits and sim_accesses without the other, or sim_hits above
 * sim_accesses is CA_E_INPUT naming the kernel.
 */
int softcache_rank_from_capture(struct softcache_rank *r, const struct capture_kernel *k,
				const struct device_model *dm);

/*
 * The "software_cache" object of capture.json and plan.json (a new
 * reference, caller owns; docs/monitor.md):
 *   {"enabled": true, "cln": 6, "line_bytes": 16, "reason": "...",
 *    "occupancy": {...}, "candidates": [...], "selected": [1, 0]}
 */
json_t *softcache_rank_to_json(const struct softcache_rank *r);

#endif
