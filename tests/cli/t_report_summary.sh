#!/usr/bin/env bash
# Issue 35, items 2, 3 and 7: the first screen tells one story in every
# format. For each tests/fixtures/summary-*/ capture (copies of committed
# fixtures, edited to reproduce what an H200 user saw; each README says
# how), the text report's SUMMARY, report.json's "summary" and report.html's
# summary section are compared with tests/cli/expected/<name>.summary.*,
# and the three are checked to say the same sentences. After a deliberate
# change, rewrite the expected files with
#   CA_UPDATE_GOLDEN=1 ctest -R cli/t_report_summary
# and read their diff before committing it.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

expected="$CA_SOURCE_DIR/tests/cli/expected"

# compare NAME FILE: FILE against expected/NAME (or writes it)
compare() {
	local want="$expected/$1"
	if [ -n "${CA_UPDATE_GOLDEN:-}" ]; then
		cp "$2" "$want"
		ok
	elif [ ! -f "$want" ]; then
		not_ok "$want is missing (CA_UPDATE_GOLDEN=1 writes it)"
	elif diff -u "$want" "$2" > "$TMP/diff"; then
		ok
	else
		not_ok "$1 differs:"
		head -40 "$TMP/diff" >&2
	fi
}

for fixture in "$CA_SOURCE_DIR"/tests/fixtures/summary-*/; do
	name=$(basename "$fixture")
	cp -r "$fixture" "$TMP/$name"
	root=()
	[ -f "$fixture/source-root.txt" ] && root=(--source-root "$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")")
	for fmt in text json html; do
		(cd "$TMP" && "$CACHEADVISE" report "$name" --format "$fmt" "${root[@]}") > "$TMP/$name.$fmt" 2>"$TMP/err" ||
			not_ok "$name: report --format $fmt failed: $(cat "$TMP/err")"
	done
	# the SUMMARY: from its heading to the next heading
	awk '/^SUMMARY$/ { on = 1 } on && /^[^ ]/ && !/^SUMMARY$/ { exit } on' "$TMP/$name.text" \
		> "$TMP/$name.summary.txt"
	python3 - "$TMP/$name.json" > "$TMP/$name.summary.json" <<'PY'
import json, sys
print(json.dumps(json.load(open(sys.argv[1]))["summary"], indent=2))
PY
	sed -n 's|.*\(<section class="summary".*</section>\).*|\1|p' "$TMP/$name.html" |
		sed 's|<li|\n<li|g; s|<p>|\n<p>|g' > "$TMP/$name.summary.html"
	compare "$name.summary.txt" "$TMP/$name.summary.txt"
	compare "$name.summary.json" "$TMP/$name.summary.json"
	compare "$name.summary.html" "$TMP/$name.summary.html"

	# one story: every sentence of report.json's summary is in the text
	# SUMMARY and in the HTML summary (escaped as HTML escapes it)
	python3 - "$TMP/$name.summary.json" "$TMP/$name.summary.txt" "$TMP/$name.summary.html" <<'PY' &&
import html, json, sys
s = json.load(open(sys.argv[1]))
text, page = open(sys.argv[2]).read(), html.unescape(open(sys.argv[3]).read())
page = page.replace("<strong>", "").replace("</strong>", "")
said = [s["headline"]] + [v["text"] for v in s["kernel_verdicts"]] + \
       [n["text"] for n in s["not_run"]] + ([s["nothing_to_change"]] if s["nothing_to_change"] else [])
for line in said:
    assert line in text, ("text", line)
    assert line in page, ("html", line)
# "kept anything?" is one answer: the headline, the verdicts, the advice
# listed and the closing line follow it
kept_lines = [v for v in s["kernel_verdicts"] if v["kept"] and v["changes_loads"]]
assert s["kept_anything"] == bool(s["verified_advice"]), s
if not s["kept_anything"]:
    assert not kept_lines, kept_lines
    assert "none kept" in s["headline"] or "not verified" in s["headline"] or \
        "Verified speedup: none" in s["headline"], s["headline"]
else:
    assert "none kept" not in s["headline"] and "not verified" not in s["headline"].split(";")[0], s
    assert not (s["nothing_to_change"] or "").startswith("Nothing to change"), s
PY
	ok || not_ok "$name: the formats' summaries do not tell one story"
done

# (a) kept advice of other kinds beside a load plan with nothing to verify
s="$TMP/summary-pytorch.summary.txt"
expect_no_grep "not verified" "$s"
expect_no_grep "Nothing to change" "$s"
expect_grep "^  Verified speedup: 1.02x at best \(carve-out, kernel time; 2 pieces of advice kept" "$s"
expect_grep "1.01x L2 window .*baseline spread 0.4%" "$s"
# (b) a verdict "kept" on a kernel whose plan changes no load is no advice
s="$TMP/summary-histo.summary.txt"
expect_grep "^  Verified speedup: none kept" "$s"
expect_no_grep "median kernel speedup, kept" "$s"
expect_grep "axpy_inplace +1.04x median kernel speedup, with no load changed: no advice" "$s"
expect_no_grep "verified: 1.04x median kernel speedup, baseline spread 1.2%, kept" "$TMP/summary-histo.text"
# (c) a pass asked for and skipped says so first, and nothing reads as its result
s="$TMP/summary-budget.summary.txt"
line=$(sed -n 2p "$s")
case "$line" in
"  The L2 priority pass you asked for (--l2-priority) did not run"*"--budget 0"*) ok ;;
*) not_ok "the SUMMARY does not start with the skipped pass: $line" ;;
esac
expect_no_grep "can take one" "$TMP/summary-budget.text"
expect_grep "L2 priorities: not measured: no load was measured with an L2 priority \(the L2 priority pass did not run" "$TMP/summary-budget.text"
expect_no_grep "can take one" "$TMP/summary-budget.html"

finish
