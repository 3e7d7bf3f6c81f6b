# The report's summary puts the source patch's own verified speedup beside
# the advice's (capture.json verification.source_patch, issue 17): the
# headline says which way delivers it, "How to apply" gives both figures
# and why a load is not in the patch. Rendered from a copy of the real
# capture with the section profile's verify_patch step writes.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

cap="$TMP/cap"
cp -r "$CA_SOURCE_DIR/tests/fixtures/capture-real" "$cap"
python3 - "$cap/capture.json" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["verification"]["source_patch"] = {
    "status": "verified", "speedup": 1.0, "rewritten": 1,
    "left_out": [{"function": "_Z11decode_keysPK5uint4jmjPKjjS3_jjPj", "ordinal": 2,
                  "action": "L1::no_allocate",
                  "reason": "not rewritten: line 92 is outside the body of kernel 'decode_keys'"}]}
json.dump(c, open(p, "w"), indent=2)
PY
expect_status 0 "$CACHEADVISE" report "$cap" --format text
expect_grep 'program speedup [0-9.]+x via run --plan \(the source patch as written: 1.00x\)' "$TMP/out"
expect_grep '^    verified: +advice via `run --plan`: [0-9.]+x; the source patch as written: 1.00x \(load 2 of [^ ]+ not rewritten: line 92 is outside' "$TMP/out"
expect_status 0 "$CACHEADVISE" report "$cap" --format html
expect_grep 'Verified: advice via `run --plan`: [0-9.]+x; the source patch as written: 1.00x' "$TMP/out"

# The patch delivers the whole advice: one figure, said once.
python3 - "$cap/capture.json" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["verification"]["source_patch"] = {"status": "same as the advice", "speedup": 1.79,
                                     "rewritten": 2, "left_out": []}
json.dump(c, open(p, "w"), indent=2)
PY
expect_status 0 "$CACHEADVISE" report "$cap" --format text
expect_grep 'the source patch as written: the same plan \(it rewrites every advised load\)' "$TMP/out"
expect_no_grep 'via run --plan \(the source patch' "$TMP/out"

# A capture without the section renders as before.
expect_status 0 "$CACHEADVISE" report "$CA_SOURCE_DIR/tests/fixtures/capture-real" --format text
expect_no_grep 'the source patch as written' "$TMP/out"
finish
