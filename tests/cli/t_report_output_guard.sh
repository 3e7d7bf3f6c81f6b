#!/usr/bin/env bash
# Issue 16: `report DIR -o FILE` never writes over one of DIR's own files
# (capture.json, plan.json, modules/, patched/, runs/, ...), however FILE is
# spelled: the check is on the directory's identity, not on the string.
# Writing a format's own report file (report.txt for text) stays allowed.
# Issue 36, item 5: nor through a symbolic link, outside the capture or in
# it, that leads to one of those files.
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
# A link to one of the files, outside the capture and as the own report.
ln -s "$c/capture.json" "$TMP/to-capture"
refused "$TMP/to-capture"
ln -s "$c/modules/83c50ebd491c19e2.ptx" "$TMP/to-module"
refused "$TMP/to-module" json
(cd "$TMP" && ln -s c/plan.json rel-plan)
refused "$TMP/rel-plan" html
mv "$c/report.txt" "$TMP/report.txt.saved"
ln -s capture.json "$c/report.txt"
before=$(snapshot)
refused "$c/report.txt" text
rm "$c/report.txt"
mv "$TMP/report.txt.saved" "$c/report.txt"
before=$(snapshot)

# A source file the report reads (with --source-root) is an input too.
root="$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")"
cp -r "$root" "$TMP/src"
cp "$TMP/src/stream_table.cu" "$TMP/stream_table.orig"
expect_status 2 "$CACHEADVISE" report "$c" --source-root "$TMP/src" -o "$TMP/src/stream_table.cu"
expect_grep "refusing to write over '$TMP/src/stream_table.cu': it is a source file the report reads" "$TMP/err"
cmp -s "$TMP/src/stream_table.cu" "$TMP/stream_table.orig" && ok || not_ok "report -o replaced a source file"
expect_status 0 "$CACHEADVISE" report "$c" --source-root "$TMP/src" -o "$TMP/src/report.txt"

# Allowed: a file outside the capture, and the format's own report file.
expect_status 0 "$CACHEADVISE" report "$c" --format json -o "$TMP/elsewhere.json"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/elsewhere.json" && ok || not_ok "-o elsewhere.json is not JSON"
expect_status 0 "$CACHEADVISE" report "$c" --format text -o "$c/report.txt"
expect_grep '^SUMMARY' "$c/report.txt"
cmp -s "$c/capture.json" "$fixture/capture.json" && ok || not_ok "capture.json changed"
finish
