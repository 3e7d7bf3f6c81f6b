#!/usr/bin/env bash
# solve on large graphs (issue 16): without --time-limit, ilp and bnb stop
# after the default 10 s each and report the best plan, its bound and gap;
# a run past 2 s prints progress lines on stderr; --time-limit 0 means none.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

python3 - "$TMP" <<'PY'
import json, random, sys
random.seed(7)
def write(path, n, pairs):
    nodes = [{"id": "ld%d" % i, "weight": random.randint(-1000, 1000)} for i in range(n)]
    edges = [{"u": "ld%d" % i, "v": "ld%d" % j, "weight": random.randint(-1000, 1000)}
             for i, j in pairs]
    json.dump({"nodes": nodes, "edges": edges}, open(path, "w"))
write(sys.argv[1] + "/dense200.json", 200, [(i, j) for i in range(200) for j in range(i + 1, 200)])
pairs = set()
while len(pairs) < 20000:
    i, j = random.randrange(5000), random.randrange(5000)
    if i != j:
        pairs.add((min(i, j), max(i, j)))
write(sys.argv[1] + "/sparse5000.json", 5000, sorted(pairs))
PY

# stopped CMD...: runs CMD within 40 s; it must exit 0 with a plan that is
# not proven, a bound at least its objective, and the gap between them.
stopped() {
	timeout 40 "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	local got=$?
	if [ "$got" != 0 ]; then
		not_ok "'$*' exited $got (124: no time limit); stderr: $(head -c 400 "$TMP/err")"
		return
	fi
	python3 - "$TMP/out" <<'PY' && ok || not_ok "'$*': no stopped result: $(head -c 300 "$TMP/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["optimal"] is False, r
assert r["bound"] >= r["objective"] and r["gap"] > 0, r
assert abs(r["gap"] - (r["bound"] - r["objective"]) / abs(r["objective"])) < 1e-6, r
PY
	expect_grep "stopped by the time limit" "$TMP/err"
}

# The default: no --time-limit at all, on the default method (ilp).
start=$(date +%s)
stopped "$CACHEADVISE" solve --json "$TMP/dense200.json"
took=$(( $(date +%s) - start ))
[ "$took" -le 30 ] && ok || not_ok "default time limit: ilp took $took s"
expect_grep "^cacheadvise solve: ilp: [0-9]+ s, best [0-9.e+-]+, bound .*still searching" "$TMP/err"

stopped "$CACHEADVISE" solve --json --method bnb --time-limit 3 "$TMP/dense200.json"
expect_grep "^cacheadvise solve: bnb: [0-9]+ s, best [0-9.e+-]+, [0-9]+ nodes, still searching" "$TMP/err"

# 5,000 loads: bounded as well; the text form names the bound and gap.
timeout 60 "$CACHEADVISE" solve --method bnb --time-limit 2 "$TMP/sparse5000.json" \
	>"$TMP/out" 2>"$TMP/err" </dev/null
got=$?
[ "$got" = 0 ] && ok || not_ok "solve of 5000 loads exited $got; stderr: $(head -c 300 "$TMP/err")"
expect_grep "stopped by the time limit: best bound [0-9.e+]+, gap [0-9.]+%" "$TMP/out"

# --time-limit 0: no limit (a small graph is proven, nothing printed on stderr).
expect_status 0 "$CACHEADVISE" solve --json --time-limit 0 "$CA_SOURCE_DIR/tests/fixtures/graphs/figure4.json"
expect_grep '"optimal": true' "$TMP/out"
expect_no_grep . "$TMP/err"
expect_status 1 "$CACHEADVISE" solve --time-limit -1 "$CA_SOURCE_DIR/tests/fixtures/graphs/figure4.json"

finish
