#!/usr/bin/env bash
# Issue 36, item 10: a --source-root that is not a directory is refused by
# report as apply refuses it (exit 2, the path named, nothing written).
# `report --all --source-root /nonexistent` used to exit 0 without a word
# and empty source.patch and sources.json.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -f "$fixture/source-root.txt" ] || { echo "no real capture with sources"; exit 77; }
src="$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")"
cp -r "$fixture" "$TMP/c"
expect_status 0 "$CACHEADVISE" report "$TMP/c" --all --source-root "$src"
[ -s "$TMP/c/source.patch" ] && ok || not_ok "report --all wrote an empty source.patch"
state() { (cd "$TMP/c" && find . -type f -exec sha256sum {} + | sort); }
before=$(state)
printf 'not a directory\n' >"$TMP/file"

for root in "$TMP/nonexistent" "$TMP/file"; do
	expect_status 2 "$CACHEADVISE" report "$TMP/c" --all --source-root "$root"
	expect_grep "the source root '$root' is not a directory" "$TMP/err"
	[ "$(state)" = "$before" ] && ok || not_ok "report --all --source-root $root changed the capture"
	expect_status 2 "$CACHEADVISE" report "$TMP/c" --source-root "$root"
	expect_grep "the source root '$root' is not a directory" "$TMP/err"
	[ -s "$TMP/out" ] && not_ok "report --source-root $root printed a report" || ok
	expect_status 2 "$CACHEADVISE" apply "$TMP/c" --source-root "$root"
	expect_grep "the source root '$root' is not a directory" "$TMP/err"
done
# apply without a source.patch writes none from a root that is not there
rm "$TMP/c/source.patch" "$TMP/c/sources.json"
expect_status 2 "$CACHEADVISE" apply "$TMP/c" --source-root "$TMP/nonexistent"
expect_grep "the source root '$TMP/nonexistent' is not a directory" "$TMP/err"
[ ! -e "$TMP/c/source.patch" ] && [ ! -e "$TMP/c/sources.json" ] && ok ||
	not_ok "apply wrote source.patch or sources.json from a root that is not there"
finish
