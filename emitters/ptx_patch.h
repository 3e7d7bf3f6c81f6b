#ifndef CACHEADVISE_PTX_PATCH_H
#define CACHEADVISE_PTX_PATCH_H

/*
 * `cacheadvise patch`'s work on one PTX module (docs/cmd-patch.md,
 * docs/monitor.md): a plan's load actions applied, or the monitor's
 * instrumentation, and the results written. ptx_name names the module in
 * messages. Each returns 0 or a CA_E_* code with the message set.
 */

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "base/module_id.h"
#include "base/strbuf.h"

/*
 * The plan in plan_path applied to text into out; id gets the module's id
 * and nr_edits the loads the plan patches in it (0: out is the text
 * unchanged). A plan entry with this module's id naming a function the
 * module lacks is CA_E_INPUT.
 */
int ptx_patch_plan(const char *plan_path, const char *ptx_name, const struct strbuf *text,
		   struct strbuf *out, char id[MODULE_ID_LEN + 1], size_t *nr_edits);

/* The monitor-instrumented module into out, its layout into *layout. */
int ptx_patch_instrument(unsigned threshold, const char *ptx_name, const struct strbuf *text,
			 struct strbuf *out, json_t **layout);

/*
 * Writes the PTX in sb to out_path atomically, or to fallback when out_path
 * is NULL, and layout to layout_path (atomically) when that is not NULL. On
 * an error nothing is written.
 */
int ptx_patch_write(const char *out_path, const struct strbuf *sb, FILE *fallback,
		    const char *layout_path, json_t *layout);

#endif
