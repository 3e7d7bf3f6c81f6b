#!/usr/bin/env bash
# The plan a source can carry (issue 38 item 2), on a Triton capture
# (tests/fixtures/triton-capture, whose "comment" works the numbers out):
# the advice bypasses the tl.load at kernels.py:17:20 in L1, which tl.load
# cannot write, and gives the one at 27:20 eviction_policy="evict_last".
# `report --all` writes the source plan beside the plan (source-plan.json),
# source.patch rewrites every load of the source plan ("8 of 8"), and the
# report lists the L1::no_allocate apart, as what only `run --plan` applies,
# with its figure, after what `apply` delivers. The SUMMARY and source.patch
# are compared with tests/cli/expected/triton-capture.*; after a deliberate
# change, rewrite them with
#   CA_UPDATE_GOLDEN=1 ctest -R cli/t_triton_source_plan
# and read their diff before committing it. Needs python3.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
expected="$CA_SOURCE_DIR/tests/cli/expected"

# expect_text TEXT FILE: FILE holds TEXT (no pattern characters)
expect_text() {
	if grep -q -F -- "$1" "$2"; then ok; else not_ok "'$1' not found in $2: $(head -c 400 "$2")"; fi
}

# compare NAME FILE: FILE against expected/NAME (or writes it)
compare() {
	local want="$expected/$1"
	if [ -n "${CA_UPDATE_GOLDEN:-}" ]; then
		cp "$2" "$want"
		ok
	elif diff -u "$want" "$2" > "$TMP/diff"; then
		ok
	else
		not_ok "$1 differs:"
		head -40 "$TMP/diff" >&2
	fi
}

# the reports print the directory as given: a fixed relative name
cd "$TMP" || exit 1
cp -r "$CA_SOURCE_DIR/tests/fixtures/triton-capture" cap
mkdir -p src
cp "$CA_SOURCE_DIR/tests/fixtures/triton/kernels.py" src/kernels.py
expect_status 0 "$CACHEADVISE" report cap --all --source-root src

# the two plans: the advice has the no_allocate, the source plan has none
# of it and only forms tl.load can write
expect_grep '"L1::no_allocate"' cap/plan.json
expect_no_grep 'no_allocate' cap/source-plan.json
python3 - cap/source-plan.json > "$TMP/forms" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(sorted({l["action"] for m in d["modules"] for f in m["functions"] for l in f["loads"]}))
PY
expect_line "['L1::evict_last+L2::evict_last', 'default']" "$TMP/forms"

# source.patch rewrites every load of the source plan, and nothing else
compare triton-capture.source.patch cap/source.patch
expect_grep 'eviction_policy="evict_last"\)$' cap/source.patch
expect_no_grep '^\+.*other=0.0\)$' cap/source.patch

# the report: what apply delivers, then the run --plan-only part apart
"$CACHEADVISE" report cap --source-root src > "$TMP/report.txt" 2>"$TMP/err" ||
	not_ok "report failed: $(cat "$TMP/err")"
awk '/^SUMMARY$/ { on = 1 } on && /^[^ ]/ && !/^SUMMARY$/ { exit } on' "$TMP/report.txt" \
	> "$TMP/summary.txt"
compare triton-capture.summary.txt "$TMP/summary.txt"
expect_text '(8 of 8 loads rewritten in source.patch' "$TMP/summary.txt"
expect_text "what \`apply\` delivers: 1.10x; advice via \`run --plan\`: 1.15x" "$TMP/summary.txt"
expect_text "only through \`run --plan\` (1.15x program GPU time, verified):" "$TMP/summary.txt"
expect_line '      L1::no_allocate on the tl.load at kernels.py:17:20 (loads 0-7 of rownorm_kernel), which tl.load cannot write' "$TMP/summary.txt"
expect_grep 'loads 0-7 .*\[only through run --plan\]' "$TMP/summary.txt"
expect_grep 'only through cacheadvise run --plan: .L1::no_allocate. has no Triton form' "$TMP/report.txt"
"$CACHEADVISE" report cap --format json --source-root src > "$TMP/report.json"
python3 - "$TMP/report.json" > "$TMP/sum" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print(s["source_plan_loads_changed"], s["loads_rewritten_in_source"], len(s["only_through_run_plan"]))
PY
expect_line '8 8 1' "$TMP/sum"

# apply: the call at 27:20 gets the argument, the one at 17:20 stays
expect_status 0 "$CACHEADVISE" apply cap --source-root src
expect_text 'w = tl.load(W + cols, mask=cols < N, eviction_policy="evict_last")' src/kernels.py
expect_line '        x = tl.load(X + row * N + cols, mask=cols < N, other=0.0)' src/kernels.py
python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' src/kernels.py &&
	ok || not_ok "the patched kernels.py does not parse"

# the plan of the issue's profile at the defaults: L1::no_allocate alone
# (no L2 priority measured). The source plan changes no load: apply says
# so and names run --plan, and the report gives run --plan's figure apart
cp -r "$CA_SOURCE_DIR/tests/fixtures/triton-capture" l1only
python3 - l1only/capture.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["kernels"][0]["l2_priority"]
d["verification"]["source_patch"] = {"rewritten": 0, "left_out": [], "status": "changes no load",
                                     "speedup": 1.0}
json.dump(d, open(sys.argv[1], "w"))
PY
cp "$CA_SOURCE_DIR/tests/fixtures/triton/kernels.py" src/kernels.py
expect_status 0 "$CACHEADVISE" report l1only --all --source-root src
[ -s l1only/source.patch ] && not_ok "l1only: source.patch is not empty" || ok
"$CACHEADVISE" report l1only --source-root src > "$TMP/l1only.txt" 2>&1
expect_text '(the source plan changes no load: nothing to rewrite)' "$TMP/l1only.txt"
expect_text "what \`apply\` delivers: rewrites no load, so nothing was timed; advice via \`run --plan\`: 1.15x" "$TMP/l1only.txt"
expect_text 'L1::no_allocate on the tl.load at kernels.py:17:20 (loads 0-7 of rownorm_kernel), which tl.load cannot write' "$TMP/l1only.txt"
expect_status 2 "$CACHEADVISE" apply l1only --source-root src
expect_text 'nothing to apply: the source plan changes no load, and the 8 loads the advice changes take forms their source cannot carry' "$TMP/err"

# a capture written before source plans (plan.json, no source-plan.json):
# its source patch writes plan.json's loads where tl.load can
cp -r "$CA_SOURCE_DIR/tests/fixtures/triton-capture" old
cp cap/plan.json old/plan.json
cp "$CA_SOURCE_DIR/tests/fixtures/triton/kernels.py" src/kernels.py
"$CACHEADVISE" report old --source-root src > "$TMP/old.txt" 2>&1
expect_text '(8 of 16 loads rewritten in source.patch' "$TMP/old.txt"
expect_text "'L1::no_allocate' has no Triton form" "$TMP/old.txt"
finish
