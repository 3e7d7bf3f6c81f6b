#!/usr/bin/env bash
# cacheadvise solve on bad input: exit 2 with the JSON path of the bad item;
# usage errors exit 1; exhaustive search above its limit says to use bnb or ilp.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

bad() { # bad NAME 'JSON' 'expected message (ERE)'
	printf '%s\n' "$2" >"$TMP/$1.json"
	expect_status 2 "$CACHEADVISE" solve "$TMP/$1.json"
	expect_grep "$3" "$TMP/err"
	expect_no_grep . "$TMP/out"
}
N='"nodes": [{"id": "ld0", "weight": 1}, {"id": "ld1", "weight": 2}]'
bad unknown "{$N, \"edges\": [{\"u\": \"ld0\", \"v\": \"ld9\", \"weight\": 1}]}" \
	"unknown\\.json: edges\\[0\\]\\.v: unknown node 'ld9'"
bad duplicate '{"nodes": [{"id": "a", "weight": 1}, {"id": "a", "weight": 2}]}' \
	"nodes\\[1\\]\\.id: duplicate node 'a'"
bad selfloop "{$N, \"edges\": [{\"u\": \"ld1\", \"v\": \"ld1\", \"weight\": 1}]}" \
	"edges\\[0\\]: self-loop on node 'ld1'"
bad dupedge "{$N, \"edges\": [{\"u\": \"ld0\", \"v\": \"ld1\", \"weight\": 1}, {\"u\": \"ld1\", \"v\": \"ld0\", \"weight\": 1}]}" \
	"edges\\[1\\]: duplicate edge"
bad noweight '{"nodes": [{"id": "a", "weight": 1}, {"id": "b"}]}' \
	"nodes\\[1\\]\\.weight: missing"
bad nullweight "{$N, \"edges\": [{\"u\": \"ld0\", \"v\": \"ld1\", \"weight\": null}]}" \
	"edges\\[0\\]\\.weight: not a number"
bad strweight '{"nodes": [{"id": "a", "weight": "NaN"}]}' \
	"nodes\\[0\\]\\.weight: not a number"
bad idtype '{"nodes": [{"id": 7, "weight": 1}]}' "nodes\\[0\\]\\.id: not a string"
bad nodestype '{"nodes": {"id": "a"}}' "nodes: not an array"
bad nonodes '{"edges": []}' "nonodes\\.json: nodes: missing"
bad notobject '[1, 2]' "not a JSON object"
# NaN and Infinity are not JSON: the parser names the line and column
bad nan '{"nodes": [{"id": "a",
"weight": NaN}]}' "invalid JSON in .*nan\\.json' at line 2"
bad truncated '{"nodes": [' "invalid JSON"

expect_status 2 "$CACHEADVISE" solve "$TMP/does-not-exist.json"
expect_grep "does-not-exist\\.json" "$TMP/err"

# exhaustive search above its limit: exit 2, says to use bnb or ilp
python3 -c '
import json, sys
json.dump({"nodes": [{"id": "ld%d" % i, "weight": 1} for i in range(30)]}, open(sys.argv[1], "w"))
' "$TMP/thirty.json"
expect_status 2 "$CACHEADVISE" solve --method exhaustive "$TMP/thirty.json"
expect_grep "30 loads, more than exhaustive search takes \\(24\\): use --method bnb or ilp" "$TMP/err"
expect_status 0 "$CACHEADVISE" solve --method ilp "$TMP/thirty.json"
expect_status 0 "$CACHEADVISE" solve --method bnb "$TMP/thirty.json"

# usage errors
G=$CA_SOURCE_DIR/tests/fixtures/graphs/figure4.json
expect_status 1 "$CACHEADVISE" solve
expect_status 1 "$CACHEADVISE" solve --method simplex "$G"
expect_grep "unknown method 'simplex'" "$TMP/err"
expect_status 1 "$CACHEADVISE" solve --time-limit -3 "$G"
expect_status 1 "$CACHEADVISE" solve --time-limit abc "$G"
expect_status 1 "$CACHEADVISE" solve --frobnicate "$G"
expect_status 1 "$CACHEADVISE" solve "$G" "$G"
expect_status 1 "$CACHEADVISE" solve --method

finish
