#ifndef CACHEADVISE_REPORT_H
#define CACHEADVISE_REPORT_H

#include "base/strbuf.h"
#include "emitters/report_input.h"

/*
 * Report formats, one interface (STYLE.md "back-ends as tables of
 * functions"): text (report.txt), html (report.html), json (report.json,
 * docs/report-json.md) and sarif (hints.sarif, docs/sarif.md). Each renders
 * a report_input into a buffer; adding a format is adding a file and a row
 * in report.c's table. Renderers do not touch files or the terminal: the
 * caller decides where the bytes go and whether colour is wanted.
 */

struct report_options {
	int color;                  /* text: ANSI colours (the caller checks isatty/NO_COLOR) */
};

struct report_format {
	const char *name;           /* "text", "html", "json", "sarif" */
	const char *file_name;      /* its file in a capture directory */
	/* Appends the rendering to out. Returns 0, or a negative CA_E_* code
	 * with the message set. */
	int (*render)(const struct report_input *in, const struct report_options *opt,
		      struct strbuf *out);
};

/* NULL-terminated table of every format; report_format_find returns NULL for unknown names. */
extern const struct report_format *const report_formats[];
const struct report_format *report_format_find(const char *name);

extern const struct report_format report_format_text;
extern const struct report_format report_format_html;
extern const struct report_format report_format_json;
extern const struct report_format report_format_sarif;

/*
 * Checks what every format and `report --all` must agree on before any of
 * them renders: each module PTX that capture.json names still hashes to
 * its module id (a truncated or edited file is refused), and the plan
 * applies to it (every ordinal is a load of its function, every action is
 * legal for its load; emitters/patched_ptx.h). Returns 0, or CA_E_INPUT
 * with the message naming the PTX file and the load.
 */
int report_check_input(const struct report_input *in);

/* Byte counts for people: "812 B", "3.4 KiB", "1.20 GiB"; "unmeasured" for NAN. Caller frees. */
char *report_human_bytes(double bytes);

/* s, or "" for a field the capture did not record (static). */
const char *report_or_empty(const char *s);

/*
 * The first screen of every format is in->summary (emitters/report_summary.h),
 * computed once when the input is built; the formats only print it.
 */

/*
 * The kernel's verification as a phrase: "verified: 1.08x median kernel
 * speedup, kept", "measured and rejected: 0.97x", "not verified". Caller
 * frees.
 */
char *report_kernel_verification_text(const struct report_input *in,
				      const struct report_kernel *k);

/*
 * The kernel's L2 priorities as a phrase: "L2 priorities: bnb (proven
 * optimal), expected DRAM traffic saved 1.2 GiB (...)", or "L2 priorities:
 * not measured: ..." (with the step that did not run, where the summary
 * names one); NULL where the kernel has no "l2_priority". Caller frees.
 */
char *report_l2_priorities_text(const struct report_input *in, const struct report_kernel *k);
/* The kernel's close calls (analysis_kernel's close_calls, docs/model.md
 * "Close calls") as one line, or NULL when it has none (caller frees). */
char *report_close_calls_text(const struct report_kernel *k);

/*
 * The kernel's async copies as a sentence ("24 async copies from global to
 * shared memory (cp.async) at kernels.py:182 (12), kernels.py:183 (12) are
 * not ld.global loads: ..."), with what a Triton user can and cannot do
 * about them; NULL when it has none. Caller frees.
 */
char *report_async_copies_text(const struct report_kernel *k);

/*
 * The title of an advice section ("software_cache" -> "Software cache")
 * and whether its advice is a candidate not verified on this program
 * (DESIGN.md "Keeping advice"). Static.
 */
const char *report_section_title(const char *key, int *candidate);

/*
 * Where a section's advice stands on this program, for its heading: "verified
 * on this program: kept" or "...: rejected" for a software cache that
 * `profile` rewrote and timed (its "verification"), "candidate, not verified
 * on this program" for other candidates, "as measured" otherwise. Static.
 */
const char *report_section_standing(const struct report_section *s);

/*
 * Where a load is, as the reports show it: "kernels.py:17:20" (a Triton
 * tl.load, by its column), "<cub/agent/agent_reduce.cuh>:373" (a header of
 * the CUDA Toolkit, as included), "stencil.cu:42", or "PTX line 120"
 * without -lineinfo. Caller frees.
 */
char *report_load_where(const struct report_load *l);

/*
 * The last load of the group k->loads[j] starts, j when it is alone: the
 * changed loads after it with the same source line, action and hint
 * status, and either the same column (one expression's PTX loads, a Triton
 * tl.load's) or one reason why no source change carries them (a library's
 * code). The reports show such a group as one line ("loads 6-11").
 */
size_t report_load_group_end(const struct report_kernel *k, size_t j);
/* What the group j..e is: "8 PTX loads of one call" (a Triton tl.load),
 * "2 PTX loads of one expression", "6 loads of this line". Caller frees. */
char *report_load_group_phrase(const struct report_kernel *k, size_t j, size_t e);

/*
 * How the analysis decided the kernel's loads per source site
 * (analysis/load_sites.h), as a sentence without its final period:
 * "decided per call: 24 PTX loads are 3 source calls (a tl.load's loads
 * take one decision)" for Triton, "decided per expression: 15 PTX loads are
 * 3 source expressions (an expression's copies take one decision)" for CUDA
 * C++; NULL when no loads share a site. Caller frees.
 */
char *report_sites_text(const struct report_kernel *k);

/*
 * What a changed load's advice saves, as a phrase: "avoids 1.00 MiB of L2
 * traffic" for a bypass (what caching it too would add), "saves 938 KiB of
 * L2 traffic" for a cache decision, "" when unknown. Caller frees.
 */
char *report_load_saving(const struct report_load *l);

/*
 * An MPI or Slurm job's ranks, as a sentence: "3 ranks measured apart:
 * their hit_i per launch lie within 44% of each other on the loads that
 * matter; rank 2 (GPU 0000:2a:00.0) differs: load 3 gets 60.0 L1 hits per
 * launch against the ranks' median 100". NULL outside a job. Caller frees.
 */
char *report_ranks_text(const struct report_kernel *k);

/* Counts for people: "812", "92.0 k", "1.46 G"; "-" for NAN. Caller frees. */
char *report_human_count(double v);

/*
 * What caching a load enables, as a phrase: "caching it enables 92.0 k L1
 * hits" (hit_i, sectors), with ", its hit rate 60.0%" where the load has a
 * rate of its own (report_load.hit_rate); "" when hit_i is unmeasured.
 * Caller frees.
 */
char *report_load_hits_phrase(const struct report_load *l);

/*
 * The legend of the per-load table, shared by the text and HTML reports:
 * NULL-terminated rows of a column name and what it means.
 */
struct report_legend_row {
	const char *column;
	const char *meaning;
};
extern const struct report_legend_row report_load_legend[];

/* "L1::no_allocate" -> "bypass L1 (L1::no_allocate)" and so on. Static. */
const char *report_action_phrase(const char *action);

/*
 * The whole report as a JSON document ("cacheadvise.report/1"), which the
 * json format prints; caller owns it.
 */
json_t *report_to_json(const struct report_input *in);

#endif
