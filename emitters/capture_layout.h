#ifndef CACHEADVISE_CAPTURE_LAYOUT_H
#define CACHEADVISE_CAPTURE_LAYOUT_H

/*
 * The capture directory's layout (DESIGN.md "Files", docs/capture-json.md):
 * the one owner of its paths. Every reader and writer asks here for a path;
 * the names (CAPTURE_LAYOUT_*) are spelled in base/capture_names.h, which
 * analysis/ and collectors/ may include.
 *
 *   capture.json  plan.json  source-plan.json  sources.json  source.patch  regcache.patch
 *   report.txt  report.html  report.json  hints.sarif  .lock
 *   modules/<id>.ptx         the original PTX
 *   patched/<id>.ptx         PTX with the plan applied
 *   patched/<id>.softcache.ptx  PTX with the automatic software cache
 *   graphs/<kernel>.json     traffic reduction graphs, as `solve` reads them
 *   runs/NNN.log  runs/NNN.out  runs/NNN.err  runs/NNN.d/   each run's output and events
 *   runs/<label>.subst/      the PTX a run substituted (<id>.ptx, <id>.layout.json)
 *   runs/l2-<variant>.json   persisting-L2 window files
 *
 * Every function returning char * returns a new string the caller frees.
 * Where dir is NULL the path is relative to the capture directory (as
 * capture.json records it).
 */

#include "base/capture_names.h"
#include "base/strbuf.h"


/* dir/name for one of the names above (or another top-level file). */
char *capture_layout_file(const char *dir, const char *name);

/* modules/<id>.ptx and patched/, patched/<id>.ptx. */
char *capture_layout_module_ptx(const char *dir, const char *id);
char *capture_layout_patched_dir(const char *dir);
char *capture_layout_patched_ptx(const char *dir, const char *id);
/* patched/<id>.softcache.ptx: the module with the automatic software cache. */
char *capture_layout_softcache_ptx(const char *dir, const char *id);

/* graphs/<kernel>.json; NULL when the name cannot be a file name (has '/'). */
char *capture_layout_graph(const char *dir, const char *kernel);

/* runs/NNN.log, runs/NNN.out (standard output alone), runs/NNN.d (events). */
char *capture_layout_run_log(const char *dir, unsigned run);
char *capture_layout_run_stdout(const char *dir, unsigned run);
/* runs/NNN.err: standard error alone (the output check compares it). */
char *capture_layout_run_stderr(const char *dir, unsigned run);
char *capture_layout_run_events_dir(const char *dir, unsigned run);
/* runs/files/<sha256>: a copy of a file a run wrote, by its content (the
 * output check compares contents within a tolerance); dir NULL: relative. */
char *capture_layout_kept_file(const char *dir, const char *sha256);
/* runs/NNN.d/events.jsonl, as capture.json records it. */
char *capture_layout_run_events(const char *dir, unsigned run);

/* runs/<label>.subst, runs/NNN.subst; and <subst>/<id>.ptx, <subst>/<id>.layout.json. */
char *capture_layout_subst_dir(const char *dir, const char *label);
char *capture_layout_run_subst_dir(const char *dir, unsigned run);
char *capture_layout_subst_ptx(const char *subst_dir, const char *id);
char *capture_layout_subst_layout(const char *subst_dir, const char *id);

/* runs/NNN.plan.json: the launch plan of run NNN (docs/injection.md) */
char *capture_layout_run_launch_plan(const char *dir, unsigned run);

/* runs/l2-<variant>.json */
char *capture_layout_l2_windows(const char *dir, const char *variant);

/*
 * Creates dir (and its parents) with runs/, modules/, patched/ and graphs/.
 * Returns 0, CA_E_USAGE when dir already holds a capture (capture.json), or
 * CA_E_IO with the message set.
 */
int capture_layout_create(const char *dir);

#endif
