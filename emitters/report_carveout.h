#ifndef CACHEADVISE_REPORT_CARVEOUT_H
#define CACHEADVISE_REPORT_CARVEOUT_H

/*
 * The reports' "Carve-out" section (issue 18): for every kernel whose
 * L1/shared carve-out the program sets itself, the program's value, the
 * driver's default measured against it, which one is kept and why, and
 * the call to change where the default wins. Kept apart from the load
 * advice: it needs no PTX. The text, HTML and JSON reports each call one
 * function here; nothing is written for a capture without "carveout".
 */

#include <jansson.h>

#include "base/strbuf.h"
#include "emitters/report_input.h"

void report_carveout_text(struct strbuf *out, const struct report_input *in, const char *bold,
			  const char *reset);
void report_carveout_html(struct strbuf *out, const struct report_input *in);
/* Sets report.json's "carveout" (capture.json's, as it is) in doc when the
 * capture has one. */
void report_carveout_json(json_t *doc, const struct report_input *in);

/* The advice for a carve-out entry whose default was kept, phrased for
 * whoever sets it (the program, or a library such as cuBLAS). Caller frees. */
char *report_carveout_advice(const struct report_input *in,
			     const struct capture_carveout_kernel *k);

#endif
