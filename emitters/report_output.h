#ifndef CACHEADVISE_REPORT_OUTPUT_H
#define CACHEADVISE_REPORT_OUTPUT_H

/*
 * The reports' "Output check" section (issue 14): what the output check of
 * the verification (else of the baseline runs) found: its status and
 * reason, the volatile lines compared with numbers masked with the first
 * few as examples, and every file compared with its status. The text,
 * HTML and JSON reports each call one function here.
 */

#include <jansson.h>

#include "base/strbuf.h"
#include "emitters/report_input.h"

/* The output check the reports show (borrowed from in->model), and where
 * it comes from ("verification" or "baseline runs"); NULL when the capture
 * has none (captures before issue 14). */
const struct capture_output_check *report_output_check(const struct report_input *in,
						       const char **from);

/* Appends the section to a text report (nothing without an output check). */
void report_output_text(struct strbuf *out, const struct report_input *in, const char *bold,
			const char *reset);

/* Appends the section to an HTML report (nothing without an output check). */
void report_output_html(struct strbuf *out, const struct report_input *in);

/* {"from", "status", "reason", "volatile_lines", "volatile_examples",
 * "files"} for report.json (new object), or JSON null. */
json_t *report_output_json(const struct report_input *in);

#endif
