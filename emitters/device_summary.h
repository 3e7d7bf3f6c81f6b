#ifndef CACHEADVISE_DEVICE_SUMMARY_H
#define CACHEADVISE_DEVICE_SUMMARY_H

#include "analysis/device_model.h"
#include "base/strbuf.h"

/* The device model as `cacheadvise probe` shows it: a few lines of text
 * (capacities, lines, sets and ways, latencies, the probe's notes). The
 * driver's or a device.json's strings (the GPU's name) have their control
 * characters written as \xHH. */
void device_summary_text(struct strbuf *out, const struct device_model *dm);
/* The device model as JSON (docs/device-json.md), one newline after. */
void device_summary_json(struct strbuf *out, const struct device_model *dm);

#endif
