/*
 * `profile`'s last word on the source patch (issue 38 item 3, DESIGN.md
 * "Keeping advice"): the program rebuilt from source.patch as the user
 * will build it, in a private copy of its sources
 * (emitters/rewrite/rebuild_copy.h), timed against the original as
 * `check` times it (collectors/rebuild_timing.h). A Triton program runs
 * its patched .py with a private TRITON_CACHE_DIR; a CUDA program is built
 * with the command `--build` gives. The report leads with this figure and
 * puts run --plan's second. Like the advice's verification, it is never
 * left to --budget; the cost lists its seconds as a step of its own.
 *
 * The result is capture.json's verification.rebuilt:
 *   {"status": "timed" | "not rebuilt", "reason": why (or null),
 *    "how": "...", "speedup": program GPU-time speedup (or null),
 *    "kernels": [{"name", "speedup", "kept"}]}
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/capture_model.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "collectors/rebuild_timing.h"
#include "emitters/report_input.h"
#include "emitters/rewrite/python_rewrite.h"
#include "emitters/rewrite/rebuild_check.h"
#include "emitters/rewrite/rebuild_copy.h"
#include "src/profile/internal.h"

/* rb says the program was not rebuilt, and why (copied). */
static void not_rebuilt(struct capture_rebuilt *rb, const char *why)
{
	rb->status = xstrdup("not rebuilt");
	rb->reason = xstrdup(why);
	rb->speedup = NAN;
}

/* The loads source.patch rewrites (verification.source_patch.rewritten). */
static long long rewritten_loads(json_t *ver)
{
	json_t *n = json_object_get(json_object_get(ver, "source_patch"), "rewritten");

	return json_is_integer(n) ? json_integer_value(n) : 0;
}

/* The timing's result (rounds of it) into rb. */
static void record(struct capture_rebuilt *rb, const struct rebuild_timing *tr, unsigned rounds)
{
	size_t i;

	rb->status = xstrdup("timed");
	rb->speedup = tr->program_speedup;
	rb->runs = 2 * (long long)rounds;    /* the original and the rebuilt, each round */
	if (tr->launches_differ)
		rb->reason = xasprintf("the original and the rebuilt program launched %s a "
				       "different number of times (%u and %u): they did different "
				       "work, so only each kernel's mean launch is compared",
				       tr->launches_differ, tr->base_launches,
				       tr->rebuilt_launches);
	rb->kernels = xcalloc(tr->nr_kernels + 1, sizeof(*rb->kernels));
	for (i = 0; i < tr->nr_kernels; i++)
		rb->kernels[rb->nr_kernels++] = (struct capture_rebuilt_kernel){
			xstrdup(tr->kernels[i].name), tr->kernels[i].median, tr->kernels[i].kept };
}

/*
 * Whether the copy's build compiled the patched sources: its program
 * carries the advised forms (check's static check). A build folder
 * configured for the original tree (a copied CMake cache names the
 * original sources) would build the original, and time it as "rebuilt".
 */
static int built_from_patch(struct profile_ctx *c, const struct rebuild_copy *rc)
{
	struct rebuild_input ri;
	struct rebuild_check_counts sr;
	struct strbuf text = STRBUF_INIT;
	int ret = rebuild_input_load(&ri, c->dir, rc->program, rc->sources, NULL);

	if (!ret) {
		rebuild_check_static(&ri, &sr, &text);
		if (sr.lost)
			ret = error_set(CA_E_INPUT, "the program the build made in the copy lacks "
					"%zu of the %zu advised forms source.patch writes: the build "
					"did not compile the patched sources (a build folder "
					"configured for the original tree builds the original: give "
					"--build a command that configures afresh)", sr.lost,
					sr.checked);
	}
	strbuf_release(&text);
	rebuild_input_release(&ri);
	return ret;
}

/* Copies, patches, builds and times; rb gets the result or why not. */
static int rebuild_and_time(struct profile_ctx *c, int python, struct capture_rebuilt *rb)
{
	struct report_input_options iopt = { NULL, NULL };
	struct report_input in;
	struct rebuild_copy rc;
	struct rebuild_timing_options topt;
	struct rebuild_timing tr;
	struct strbuf line = STRBUF_INIT;
	int ret;

	memset(&tr, 0, sizeof(tr));
	ret = rebuild_copy_make_built(c->dir, c->opt->argv, NULL, python ? NULL : c->opt->build,
				      c->opt->timeout, &rc, &line);
	strbuf_release(&line);
	if (!ret && !python)
		ret = built_from_patch(c, &rc);
	if (ret)
		goto failed;
	rb->how = python ? xasprintf("the patched .py in a private copy of '%s', compiled "
				     "afresh (a private TRITON_CACHE_DIR)", rc.root) :
		  xasprintf("built with '%s' in a private copy of '%s'", c->opt->build, rc.root);
	ret = report_input_init_from(&in, c->dir, c->capture, &c->analysis, c->plan,
				     c->source_plan, &iopt);
	if (ret)
		goto failed;
	memset(&topt, 0, sizeof(topt));
	topt.dir = c->dir;
	topt.baseline_argv = c->opt->argv;
	topt.kernels = rebuild_changed_kernels(&in, &topt.nr_kernels);
	rebuild_copy_timing(&rc, &topt);
	topt.repeat = c->opt->repeat ? c->opt->repeat : 1;
	topt.timeout = c->opt->timeout;
	topt.exe_dir = c->opt->tool_dir;
	profile_progress(c, "rebuilt from source.patch: timing it against the original");
	ret = rebuild_timing_run(&topt, &tr);
	if (!ret)   /* before the names it borrows from in are freed */
		record(rb, &tr, topt.repeat);
	free((void *)topt.kernels);
	report_input_release(&in);
	rebuild_timing_release(&tr);
failed:
	if (ret && ret != CA_E_INTERRUPTED) {
		/* the advice stands verified: say why the rebuild could not be timed */
		free(rb->status);
		free(rb->reason);
		not_rebuilt(rb, error_message());
		profile_note(c, "the program rebuilt from source.patch was not timed: %s",
			     error_message());
		error_clear();
		ret = 0;
	}
	rebuild_copy_release(&rc);
	if (rc.tmp_left) {
		profile_note(c, "cannot remove the temporary directory '%s'", rc.tmp_left);
		free(rc.tmp_left);
	}
	return ret;
}

int profile_rebuild(struct profile_ctx *c)
{
	json_t *ver = c->verification;
	struct capture_rebuilt rb;
	int python = python_program(c->opt->argv[0]), ret = 0;

	if (!json_is_object(ver) || !json_is_true(json_object_get(ver, "kept")) ||
	    rewritten_loads(ver) <= 0)
		return 0;   /* no kept advice the patch carries: nothing to rebuild */
	memset(&rb, 0, sizeof(rb));
	rb.speedup = rb.seconds = NAN;
	rb.runs = -1;
	if (!python && !c->opt->build) {
		not_rebuilt(&rb, "a CUDA program is rebuilt only with the command that builds it: "
			    "profile --build 'CMD' (run in a copy of the sources), or time your "
			    "own rebuild with 'cacheadvise check'");
	} else {
		/* never left to the budget: this is the verification of what the
		 * user applies, as the advice's own is of the advice; its time
		 * is a cost step of its own ("rebuild"), not the profile's */
		double start = profile_now();

		ret = rebuild_and_time(c, python, &rb);
		rb.seconds = profile_now() - start;   /* the cost's "rebuild" step */
		c->unbudgeted += rb.seconds;
	}
	/* the section's shape is the capture model's (its one writer); none
	 * where the rebuild was interrupted */
	if (rb.status)
		json_object_set_new(ver, "rebuilt", capture_rebuilt_json(&rb));
	capture_rebuilt_release(&rb);
	if (!ret)
		ret = profile_write_capture(c, "complete");
	return ret;
}
