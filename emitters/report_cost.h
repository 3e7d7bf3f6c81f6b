#ifndef CACHEADVISE_REPORT_COST_H
#define CACHEADVISE_REPORT_COST_H

/*
 * The summary line of what a profile cost, from capture.json's "cost" and
 * "budget" (analysis/capture_cost.h), shared by the text and HTML reports:
 *
 *   "9 program runs (discover 1, monitor 1, capture 2, baseline 2, verify 3),
 *    41 s, 12x the program's native time (3.4 s); 1234 launches counted"
 *
 * which the reports print as "Capture: ..." in their summary.
 *
 * Returns NULL when the capture has no cost record (captures written
 * before it existed); the caller frees the string. Plain text: the HTML
 * report escapes it.
 */

#include "analysis/capture_model.h"

char *report_cost_line(const struct capture *cap);

#endif
