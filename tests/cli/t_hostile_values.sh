#!/usr/bin/env bash
# Hostile values (issue 16): finite weights whose sums overflow are refused
# (exit 2, saying why) instead of every method claiming a different optimum;
# a plan ordinal of 2^62 is called too large, not "not a load ordinal".
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

PTX="$CA_SOURCE_DIR/tests/fixtures/intake/kernels.ptx"

cat >"$TMP/huge.json" <<'J'
{"nodes": [{"id": "a", "weight": 1e308}, {"id": "b", "weight": 1e308},
           {"id": "c", "weight": 1e308}],
 "edges": [{"u": "a", "v": "b", "weight": 1e308}, {"u": "b", "v": "c", "weight": -1e308}]}
J
for m in ilp bnb heuristic exhaustive all; do
	expect_status 2 "$CACHEADVISE" solve --method $m "$TMP/huge.json"
	expect_grep "huge\\.json: weights too large.*finite" "$TMP/err"
	expect_no_grep . "$TMP/out"
	expect_status 2 "$CACHEADVISE" solve --json --method $m "$TMP/huge.json"
done
# Large but summable weights still solve, with a finite objective.
sed 's/1e308/1e290/g' "$TMP/huge.json" >"$TMP/big.json"
expect_status 0 "$CACHEADVISE" solve --json --method all "$TMP/big.json"
python3 - "$TMP/out" <<'PY' && ok || not_ok "solve of 1e290 weights: methods disagree or no objective"
import json, math, sys
r = json.load(open(sys.argv[1]))
objs = [m["objective"] for m in r]
assert all(math.isfinite(o) for o in objs), objs
best = max(o for m, o in zip(r, objs) if m["optimal"])
assert all(abs(o - best) <= 1e-9 * abs(best) for m, o in zip(r, objs) if m["optimal"]), r
PY

for ord in 4611686018427387904 2147483648; do
	cat >"$TMP/plan.json" <<J
{"schema": "cacheadvise.plan/1", "modules": [{"functions": [{"name": "k",
 "loads": [{"ordinal": $ord, "action": "bypass"}]}]}]}
J
	expect_status 2 "$CACHEADVISE" patch --plan "$TMP/plan.json" "$PTX"
	expect_grep "loads\\[0\\]\\.ordinal: $ord is too large for a load ordinal \\(at most 2147483647\\)" "$TMP/err"
	expect_no_grep "0 or more" "$TMP/err"
done
sed 's/"ordinal": [0-9]*/"ordinal": -1/' "$TMP/plan.json" >"$TMP/neg.json"
expect_status 2 "$CACHEADVISE" patch --plan "$TMP/neg.json" "$PTX"
expect_grep "ordinal: -1 is not a load ordinal \\(0 or more\\)" "$TMP/err"

finish
