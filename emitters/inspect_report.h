#ifndef CACHEADVISE_INSPECT_REPORT_H
#define CACHEADVISE_INSPECT_REPORT_H

/*
 * What `cacheadvise inspect` prints about an intake (collectors/intake.h):
 * the modules of a file, their kernels and every global load, as a table or
 * as the inspect JSON ("cacheadvise.inspect/1", docs/inspect-json.md).
 * path is the file as the user named it. Neither fails.
 */

#include <stdio.h>

#include "base/strbuf.h"

struct intake;
struct ptx_load;
struct json_t;

/*
 * Writes the inspect JSON to out as it is made, in chunks, holding one
 * load's object at a time (not the document: memory per load is what the
 * intake itself holds). Write errors are the caller's to find (ferror).
 */
void inspect_report_json(FILE *out, const struct intake *in, const char *path);
/* Appends the table to out, control characters from the file as \xHH. */
void inspect_report_text(struct strbuf *out, const struct intake *in, const char *path);

/* A load's "inlined_at", as inspect and capture.json write it: the calls
 * its line was inlined at, innermost first, each {file, line, column}
 * (null where unknown); [] in the function's own body. A new reference. */
struct json_t *inspect_inlined_at_json(const struct ptx_load *l);

#endif
