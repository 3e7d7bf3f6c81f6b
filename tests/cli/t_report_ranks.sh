#!/usr/bin/env bash
# Issue 29: a job's ranks measured apart (capture.json kernels[].ranks).
# The report gives their spread and names the rank whose loads behave
# differently, in text, HTML and report.json; outside a job it says nothing.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

real="$CA_SOURCE_DIR/tests/fixtures/capture-real"

expect_status 0 "$CACHEADVISE" report "$real"
expect_no_grep "ranks measured apart" "$TMP/out"

cp -r "$real" "$TMP/job"
python3 - "$TMP/job" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/capture.json"))
def rank(r, gpu, hit3):
    return {"rank": r, "gpu": gpu, "launches": 24,
            "loads": [{"ordinal": 3, "hit_per_launch": hit3, "samples": 8},
                      {"ordinal": 0, "hit_per_launch": 0.0, "samples": 8}]}
c["kernels"][0]["ranks"] = [rank(0, "0000:1b:00.0", 60000000.0),
                            rank(1, "0000:2a:00.0", 61000000.0),
                            rank(2, "<gpu&2>", 30000000.0)]
json.dump(c, open(d + "/capture.json", "w"))
PY
expect_status 0 "$CACHEADVISE" report "$TMP/job"
expect_line "  3 ranks measured apart: their hit_i per launch lie within 52% of each other on the loads that matter; rank 2 (GPU <gpu&2>) differs: load 3 gets 30.0 M L1 hits per launch against the ranks' median 60.0 M: the advice, from the ranks' merged counters, may not suit it" "$TMP/out"

expect_status 0 "$CACHEADVISE" report --format html -o "$TMP/r.html" "$TMP/job"
expect_grep "rank 2 \(GPU &lt;gpu&amp;2&gt;\) differs" "$TMP/r.html"
expect_no_grep "<gpu&2>" "$TMP/r.html"

expect_status 0 "$CACHEADVISE" report --format json -o "$TMP/r.json" "$TMP/job"
python3 - "$TMP/r.json" <<'PY' && ok || not_ok "report.json ranks"
import json, sys
k = json.load(open(sys.argv[1]))["kernels"][0]["ranks"]
assert k["measured"] == 3, k
assert abs(k["max_spread"] - 31/60) < 1e-9, k
assert [d["rank"] for d in k["differs"]] == [2], k
assert k["differs"][0]["ordinal"] == 3 and k["differs"][0]["gpu"] == "<gpu&2>", k
assert [l["ordinal"] for l in k["loads"]] == [0, 3], k
PY

# ranks that agree: no rank is named
python3 - "$TMP/job" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/capture.json"))
c["kernels"][0]["ranks"][2]["loads"][0]["hit_per_launch"] = 59000000.0
json.dump(c, open(d + "/capture.json", "w"))
PY
expect_status 0 "$CACHEADVISE" report "$TMP/job"
expect_line "  3 ranks measured apart: their hit_i per launch lie within 3% of each other on the loads that matter, so the merged counters stand for every rank" "$TMP/out"
expect_no_grep "differs: load" "$TMP/out"

# two ranks apart: neither is the odd one
python3 - "$TMP/job" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/capture.json"))
c["kernels"][0]["ranks"][1]["loads"][0]["hit_per_launch"] = 20000000.0
del c["kernels"][0]["ranks"][2]
json.dump(c, open(d + "/capture.json", "w"))
PY
expect_status 0 "$CACHEADVISE" report "$TMP/job"
expect_line "  2 ranks measured apart: their hit_i per launch lie within 100% of each other on the loads that matter; rank 0 (GPU 0000:1b:00.0) and rank 1 (GPU 0000:2a:00.0) differ: load 3 gets 60.0 M and 20.0 M L1 hits per launch: the advice, from their merged counters, may suit neither" "$TMP/out"

# verification of each rank (ab_rank_verdicts_apply): the kernel's verdict gives each rank's own
python3 - "$TMP/job" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/capture.json"))
v = c["verification"]["kernels"][0]
v["ranks"] = [{"rank": 0, "gpu": "0000:1b:00.0", "verdict": {"speedup": {"min": 1.7, "median": 1.8, "max": 1.9}, "kept": True}},
              {"rank": 1, "gpu": None, "verdict": None, "not_timed": "the rank does not launch it"}]
if "verification" in c["kernels"][0]:
    c["kernels"][0]["verification"] = v
json.dump(c, open(d + "/capture.json", "w"))
PY
expect_status 0 "$CACHEADVISE" report "$TMP/job"
expect_grep "verified: 1.79x median kernel speedup, baseline spread 0.1%, kept \(rank 0 on GPU 0000:1b:00.0: 1.8x; rank 1: not timed, the rank does not launch it\)" "$TMP/out"
python3 - "$TMP/job" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/capture.json"))
c["verification"]["kernels"][0]["ranks"][0]["verdict"]["speedup"] = "fast"
json.dump(c, open(d + "/capture.json", "w"))
PY
expect_status 2 "$CACHEADVISE" report "$TMP/job"
expect_grep "verification.kernels\[0\].ranks\[0\].verdict.speedup" "$TMP/err"
python3 - "$TMP/job" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/capture.json"))
del c["verification"]["kernels"][0]["ranks"]
json.dump(c, open(d + "/capture.json", "w"))
PY
expect_status 0 "$CACHEADVISE" report "$TMP/job"

# a bad ranks section is refused, naming the field
python3 - "$TMP/job" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/capture.json"))
c["kernels"][0]["ranks"][1]["rank"] = 0
json.dump(c, open(d + "/capture.json", "w"))
PY
expect_status 2 "$CACHEADVISE" report "$TMP/job"
expect_grep "kernels\[0\].ranks\[1\].rank: rank 0 is listed twice" "$TMP/err"
finish
