#!/usr/bin/env bash
# Issue 16: a plan.json ordinal that is not a load of the module's PTX, and a
# module PTX that is truncated (no longer what its id says), are refused by
# every form of `report` with the same message and exit status: rendering
# one format must not pass over what `report --all` catches.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -d "$fixture" ] || { echo "no real capture"; exit 77; }
ptx=modules/83c50ebd491c19e2.ptx

# same_everywhere DIR PATTERN: every format and --all exit 2 with one message.
same_everywhere() {
	local c=$1 pattern=$2 fmt first=
	for fmt in text html json sarif all; do
		if [ "$fmt" = all ]; then
			expect_status 2 "$CACHEADVISE" report "$c" --all
		else
			expect_status 2 "$CACHEADVISE" report "$c" --format "$fmt"
			[ -s "$TMP/out" ] && not_ok "report --format $fmt printed a report: $(head -c 200 "$TMP/out")" || ok
		fi
		expect_grep "$pattern" "$TMP/err"
		if [ -z "$first" ]; then first=$(cat "$TMP/err")
		elif [ "$(cat "$TMP/err")" = "$first" ]; then ok
		else not_ok "report ($fmt) says '$(cat "$TMP/err")', not '$first'"; fi
	done
}

# A plan ordinal beyond the function's loads.
cp -r "$fixture" "$TMP/ord"
python3 - "$TMP/ord/plan.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["modules"][0]["functions"][0]["loads"][-1]["ordinal"] = 77
json.dump(d, open(sys.argv[1], "w"))
EOF
same_everywhere "$TMP/ord" "no load 77"
expect_grep "$TMP/ord/$ptx" "$TMP/err"

# A truncated module PTX.
cp -r "$fixture" "$TMP/trunc"
head -c 2000 "$fixture/$ptx" >"$TMP/trunc/$ptx"
same_everywhere "$TMP/trunc" "does not match its module id"
expect_grep "$TMP/trunc/$ptx" "$TMP/err"

# -o leaves nothing behind when refused.
expect_status 2 "$CACHEADVISE" report "$TMP/trunc" --format html -o "$TMP/r.html"
[ ! -e "$TMP/r.html" ] && ok || not_ok "a refused report wrote $TMP/r.html"

# The intact capture still renders in every format.
for fmt in text html json sarif; do
	expect_status 0 "$CACHEADVISE" report "$fixture" --format "$fmt"
done
finish
