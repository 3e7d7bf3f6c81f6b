#!/usr/bin/env bash
# Issue 16: `report DIR -o FILE` never writes over one of DIR's own files
# (capture.json, plan.json, modules/, patched/, runs/, ...), however FILE is
# spelled: the check is on the directory's identity, not on the string.
# Writing a format's own report file (report.txt for text) stays allowed.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -d "$fixture" ] || { echo "no real capture"; exit 77; }
cp -r "$fixture" "$TMP/c"
c="$TMP/c"
snapshot() { (cd "$c" && find . -type f -exec sha256sum {} + | sort); }
before=$(snapshot)

# refused OUT [FORMAT]: exit 2, the file named, nothing in the capture changed.
refused() {
	local out=$1 fmt=${2:-text}
	expect_status 2 "$CACHEADVISE" report "$c" --format "$fmt" -o "$out"
	expect_grep "refusing to write over .*capture" "$TMP/err"
	[ "$(snapshot)" = "$before" ] && ok || not_ok "report -o '$out' changed the capture"
	if ls "$c" "$c"/*/ 2>/dev/null | grep -q '\.tmp\.'; then not_ok "-o '$out' left a temporary file"; else ok; fi
}

refused "$c/capture.json"
refused "$c/capture.json" json
refused "$c/plan.json" json
refused "$c/sources.json"
refused "$c/source.patch"
refused "$c/report.json" text
refused "$c/hints.sarif" html
refused "$c/modules/83c50ebd491c19e2.ptx"
refused "$c/patched/83c50ebd491c19e2.ptx"
refused "$c/runs/000.log"
refused "$c/runs/new-file.txt"
# Other spellings of the same files.
refused "$c/./capture.json"
refused "$c/modules/../capture.json"
(cd "$c/modules" && refused "../plan.json")
ln -s "$c" "$TMP/link"
refused "$TMP/link/capture.json"

# Allowed: a file outside the capture, and the format's own report file.
expect_status 0 "$CACHEADVISE" report "$c" --format json -o "$TMP/elsewhere.json"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/elsewhere.json" && ok || not_ok "-o elsewhere.json is not JSON"
expect_status 0 "$CACHEADVISE" report "$c" --format text -o "$c/report.txt"
expect_grep '^SUMMARY' "$c/report.txt"
cmp -s "$c/capture.json" "$fixture/capture.json" && ok || not_ok "capture.json changed"
finish
