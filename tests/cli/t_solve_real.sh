#!/usr/bin/env bash
# `solve` reads the traffic reduction graph of a capture recorded on a GPU
# (tests/fixtures/capture-real/graphs/) and every method agrees with the
# plan profile chose: cache the table load (ld3), bypass the big key load (ld2).
. "$(dirname "$0")/lib.sh"
g=$(ls "$CA_SOURCE_DIR"/tests/fixtures/capture-real/graphs/*.json | head -1)
expect_status 0 "$CACHEADVISE" solve --method all --json "$g"
python3 - "$TMP/out" <<'PY' && ok || not_ok "solutions differ from the recorded plan: $(cat "$TMP/out")"
import json, sys
sols = json.load(open(sys.argv[1]))
assert [s["method"] for s in sols] == ["ilp", "bnb", "heuristic", "exhaustive"], sols
best = max(s["objective"] for s in sols)
for s in sols:
    assert "ld3" in s["cached"] and "ld2" in s["bypassed"], s
    assert s["objective"] == best, s
PY
finish
