#ifndef CACHEADVISE_CAPTURE_NAMES_H
#define CACHEADVISE_CAPTURE_NAMES_H

/*
 * The names in a capture directory, spelled once. Only names live here,
 * so that analysis/ and collectors/ may use them; paths are built by
 * emitters/capture_layout.h, which includes this header and documents the
 * layout.
 */

#define CAPTURE_LAYOUT_CAPTURE "capture.json"
#define CAPTURE_LAYOUT_PLAN "plan.json"
/* the plan source.patch writes, each load in a form its source can carry
 * (docs/plan-json.md "The source plan") */
#define CAPTURE_LAYOUT_SOURCE_PLAN "source-plan.json"
#define CAPTURE_LAYOUT_SOURCES "sources.json"
#define CAPTURE_LAYOUT_SOURCE_PATCH "source.patch"
#define CAPTURE_LAYOUT_REGCACHE_PATCH "regcache.patch"  /* register-cache rewrite, when one is made */
#define CAPTURE_LAYOUT_REPORT_TEXT "report.txt"
#define CAPTURE_LAYOUT_REPORT_HTML "report.html"
#define CAPTURE_LAYOUT_REPORT_JSON "report.json"
#define CAPTURE_LAYOUT_HINTS_SARIF "hints.sarif"
/* held (flock) by `report --all` while it re-writes the files above, so
 * that two at once take turns (base/file_lock.h); empty, left in place */
#define CAPTURE_LAYOUT_LOCK ".lock"

/* The directories */
#define CAPTURE_LAYOUT_MODULES_DIR "modules"
#define CAPTURE_LAYOUT_PATCHED_DIR "patched"
#define CAPTURE_LAYOUT_GRAPHS_DIR "graphs"
#define CAPTURE_LAYOUT_RUNS_DIR "runs"

#endif
