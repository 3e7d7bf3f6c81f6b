#ifndef CACHEADVISE_INSPECT_REPORT_H
#define CACHEADVISE_INSPECT_REPORT_H

/*
 * What `cacheadvise inspect` prints about an intake (collectors/intake.h):
 * the modules of a file, their kernels and every global load, as a table or
 * as the inspect JSON ("cacheadvise.inspect/1", docs/inspect-json.md).
 * path is the file as the user named it. Both append to out and never fail.
 */

#include "base/strbuf.h"

struct intake;

void inspect_report_json(struct strbuf *out, const struct intake *in, const char *path);
void inspect_report_text(struct strbuf *out, const struct intake *in, const char *path);

#endif
