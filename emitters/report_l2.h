#ifndef CACHEADVISE_REPORT_L2_H
#define CACHEADVISE_REPORT_L2_H

/*
 * The reports' "Advice that needs no patching" section (issue 18, item 3):
 * capture.json "l2", the persisting-L2 windows advised for every kernel the
 * program launched, with PTX or not (cuBLAS, PyTorch, cubin-only builds),
 * each with what the L2 step measured (DRAM bytes read, the A/B timing or
 * why it was not timed) and whether it was kept. Kept apart from the load
 * advice, which needs PTX. The text, HTML and JSON reports each call one
 * function here; nothing is written for a capture without "l2", and the
 * generic sections then leave the top-level "l2" out.
 */

#include <jansson.h>

#include "base/strbuf.h"
#include "emitters/report_input.h"

void report_l2_text(struct strbuf *out, const struct report_input *in, const char *bold,
		    const char *reset);
void report_l2_html(struct strbuf *out, const struct report_input *in);
/* Sets report.json's "no_patching": {"l2": capture.json's "l2", as it is}
 * in doc when the capture has one. */
void report_l2_json(json_t *doc, const struct report_input *in);

#endif
