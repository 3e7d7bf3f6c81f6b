#!/usr/bin/env bash
# Text from input never reaches the terminal raw (issue 36 item 9): a PTX
# .file name in inspect's table, a graph's node ids in solve's summary, a
# capture's status in report's warning, and names in error messages have
# their ESC, BEL and CR (every control character but newline and tab)
# written as \xHH, by the one escaper (strbuf_add_printable). The JSON
# outputs escape them as JSON does. (probe's GPU name: test_printable.)
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

FIX="$CA_SOURCE_DIR/tests/fixtures"
# raw FILE: FILE holds ESC, BEL or CR
raw() { LC_ALL=C grep -q "$(printf '[\033\007\r]')" "$1"; }
expect_clean() {
	if raw "$1"; then not_ok "$2: raw control characters in $(basename "$1"): $(od -c "$1" | head -5)"
	else ok; fi
}

# inspect: a .file name of the PTX, in the table's source column
python3 - "$FIX/intake/kernels.ptx" "$TMP/evil.ptx" <<'PY'
import re, sys
t = open(sys.argv[1], "rb").read()
t = re.sub(rb'(\.file\s+1\s+")[^"]*"', lambda m: m.group(1) + b'/src/x\x1b[2J\x1b]0;pwned\x07\rk.cu"', t, count=1)
open(sys.argv[2], "wb").write(t)
PY
expect_status 0 "$CACHEADVISE" inspect "$TMP/evil.ptx"
expect_clean "$TMP/out" "inspect"
expect_grep 'x\\x1b\[2J\\x1b\]0;pwned\\x07\\x0dk\.cu:[0-9]+' "$TMP/out"
expect_status 0 "$CACHEADVISE" inspect --json "$TMP/evil.ptx"
expect_clean "$TMP/out" "inspect --json"
expect_grep '\\u001B\[2J' "$TMP/out"

# solve: node ids in the summary (and in a message)
cat >"$TMP/g.json" <<J
{"nodes": [{"id": "$(printf 'ld\\u001b[2J\\u0007\\r0')", "weight": 5},
           {"id": "ld1", "weight": -3}],
 "edges": [{"u": "ld1", "v": "$(printf 'ld\\u001b[2J\\u0007\\r0')", "weight": 1}]}
J
expect_status 0 "$CACHEADVISE" solve "$TMP/g.json"
expect_clean "$TMP/out" "solve"
expect_grep 'cache  \(1\): ld\\x1b\[2J\\x07\\x0d0' "$TMP/out"
expect_status 0 "$CACHEADVISE" solve --json "$TMP/g.json"
expect_clean "$TMP/out" "solve --json"
printf '{"nodes": [{"id": "a", "weight": 5}], "edges": [{"u": "\\u001b[31mnope\\u0007", "v": "a", "weight": 1}]}\n' >"$TMP/bad.json"
"$CACHEADVISE" solve "$TMP/bad.json" >"$TMP/out" 2>"$TMP/err"
[ $? = 2 ] && ok || not_ok "solve of an edge to an unknown id: not exit 2"
expect_clean "$TMP/err" "solve's message"
expect_grep '\\x1b\[31mnope\\x07' "$TMP/err"

# report: a capture's status in the warning on stderr (and the text report)
cp -r "$FIX/capture-handmade" "$TMP/cap"
python3 - "$TMP/cap/capture.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["status"] = "\x1b[2J\x1b]0;pwned\x07\rinterrupted"
json.dump(d, open(sys.argv[1], "w"))
PY
"$CACHEADVISE" report "$TMP/cap" >"$TMP/out" 2>"$TMP/err"
expect_clean "$TMP/err" "report's warning"
expect_clean "$TMP/out" "report"
expect_grep "warning: the capture in '.*' is \\\\x1b\[2J\\\\x1b\]0;pwned\\\\x07\\\\x0dinterrupted" "$TMP/err"

# a name from a plan in patch's message
printf '{"schema": "cacheadvise.plan/1", "modules": [{"id": "%s", "functions": [{"name": "k\\u001b[31m\\u0007\\r", "loads": [{"ordinal": 0, "action": "bypass"}]}]}]}\n' \
	"$("$CACHEADVISE" inspect --json "$FIX/intake/kernels.ptx" | python3 -c 'import json,sys; print(json.load(sys.stdin)["modules"][0]["id"])')" >"$TMP/plan.json"
expect_status 2 "$CACHEADVISE" patch --plan "$TMP/plan.json" "$FIX/intake/kernels.ptx"
expect_clean "$TMP/err" "patch's message"
expect_grep "names function 'k\\\\x1b\[31m\\\\x07\\\\x0d'" "$TMP/err"
finish
