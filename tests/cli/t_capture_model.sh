#!/usr/bin/env bash
# capture.json has one reader (analysis/capture_model.h, issue 24): `report`
# refuses what it refuses, exit 2, naming the field's path; and what the
# capture holds reaches the terminal and the "How to apply" commands safely
# (issue 25, item 7): control characters escaped, arguments shell-quoted.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -d "$fixture" ] || { echo "no real capture"; exit 77; }

# change EXPR: a copy of the real capture with one Python statement applied
# to its capture.json (d is the document, k0 its first kernel)
change() {
	rm -rf "$TMP/c"
	cp -r "$fixture" "$TMP/c"
	python3 - "$TMP/c/capture.json" "$1" <<'PY'
import json, sys
path, stmt = sys.argv[1], sys.argv[2]
d = json.load(open(path))
k0 = d["kernels"][0]
exec(stmt)
json.dump(d, open(path, "w"), indent=1)
PY
}

refused() { # STMT PATTERN
	change "$1"
	expect_status 2 "$CACHEADVISE" report "$TMP/c"
	expect_grep "$2" "$TMP/err"
	expect_no_grep . "$TMP/out"
}

refused 'k0["loads"][0]["hit"] = 1e308' \
	'kernels\[0\]\.loads\[0\]\.hit: 1e\+308 is out of range'
refused 'k0["pairs"][0]["hit"] = -13.3' 'kernels\[0\]\.pairs\[0\]\.hit: -13.3 is not a count'
refused 'd["kernels"].append(dict(k0))' 'kernels\[1\]\.name: kernel .* is listed twice'
refused 'k0["module"] = "0000000000000000"' \
	'kernels\[0\]\.module: "0000000000000000" is not a module of "modules"'
refused 'd["device"]["l1_bytes"] = -5' '"l1_bytes" is out of range \(-5\)'
refused 'k0["pairs"][0]["j"] = 4242' 'kernels\[0\]\.pairs\[0\]: names load 4242'
refused 'k0["loads"][1]["ordinal"] = k0["loads"][0]["ordinal"]' 'is listed twice'
refused 'del d["kernels"]' 'kernels: missing'

# A plan naming a function the capture has no kernel of (issue 25, item 7).
change 'pass'
python3 - "$TMP/c/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["modules"][0]["functions"][0]["name"] = "_Z9nosuchfunv"
json.dump(p, open(sys.argv[1], "w"))
PY
expect_status 2 "$CACHEADVISE" report "$TMP/c"
expect_grep "plan.json' names function _Z9nosuchfunv of module [0-9a-f]+, which the capture measured no kernel of" "$TMP/err"
expect_no_grep . "$TMP/out"

# A pair whose noise was resolved where it was measured reads.
change 'k0["pairs"][0]["hit"] = 0; k0["pairs"][0]["noise"] = {"measured": -13.3, "resolution": "clamped to 0: a count below 0 is counter noise"}'
expect_status 0 "$CACHEADVISE" report "$TMP/c"

# A device name and arguments meant to harm the terminal or the shell.
change 'd["device"]["name"] = "\u001b[2Jevil\u0007"; d["program"]["args"] = ["a b", "$(touch PWNED)", ";", "it'"'"'s", "tab\there"]'
expect_status 0 "$CACHEADVISE" report "$TMP/c"
if LC_ALL=C grep -q "$(printf '\033')" "$TMP/out"; then not_ok "raw ESC in the text report"; else ok; fi
if LC_ALL=C grep -q "$(printf '\007')" "$TMP/out"; then not_ok "raw BEL in the text report"; else ok; fi
expect_grep 'device   \\x1b\[2Jevil\\x07' "$TMP/out"
# The "without rebuilding" command, pasted into a shell, passes the
# arguments as recorded and runs nothing else.
cmd=$(grep -m1 'without rebuilding:  cacheadvise run --plan' "$TMP/out" | sed 's/.*-- //')
[ -n "$cmd" ] && ok || not_ok "no 'without rebuilding' command in the report"
(cd "$TMP" && bash -c "args() { shift; printf '<%s>\n' \"\$@\"; }; args $cmd") >"$TMP/args" 2>&1
expect_grep '^<a b>$' "$TMP/args"
expect_grep '^<\$\(touch PWNED\)>$' "$TMP/args"
expect_grep '^<;>$' "$TMP/args"
expect_grep "^<it's>$" "$TMP/args"
expect_grep "^<tab	here>$" "$TMP/args"
[ -e "$TMP/PWNED" ] && not_ok "the report's command ran \$(touch PWNED)" || ok
# HTML: the same, escaped
expect_status 0 "$CACHEADVISE" report "$TMP/c" --format html
if LC_ALL=C grep -q "$(printf '\033')" "$TMP/out"; then not_ok "raw ESC in the HTML report"; else ok; fi
expect_grep '\\x1b\[2Jevil' "$TMP/out"

finish
