#!/usr/bin/env bash
# Issue 25, item 7: `cacheadvise apply` changes only the files sources.json
# records, in place. A source.patch with a hunk for another file, one that
# deletes or creates a file, or renames one, is refused whole (exit 2,
# naming it), with --dry-run too, and nothing is changed or created.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -f "$fixture/source-root.txt" ] || { echo "no real capture with sources"; exit 77; }
srcdir="$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")"
tree() { (cd "$1" && find . -type f -exec sha256sum {} + | sort); }

prepare() {
	rm -rf "$TMP/c" "$TMP/src"
	cp -r "$fixture" "$TMP/c"
	cp -r "$srcdir" "$TMP/src"
	printf 'keep me\n' >"$TMP/src/notes.txt"
	"$CACHEADVISE" report "$TMP/c" --all --source-root "$TMP/src" 2>/dev/null ||
		not_ok "report --all failed"
	[ -s "$TMP/c/source.patch" ] || not_ok "empty source.patch"
}

# refused NAME PATTERN: apply and its dry run refuse, and change nothing
refused() {
	local before
	before=$(tree "$TMP/src")
	expect_status 2 "$CACHEADVISE" apply "$TMP/c" --source-root "$TMP/src" --dry-run
	expect_grep "$2" "$TMP/err"
	expect_status 2 "$CACHEADVISE" apply "$TMP/c" --source-root "$TMP/src"
	expect_grep "$2" "$TMP/err"
	[ "$(tree "$TMP/src")" = "$before" ] && ok || not_ok "$1: the sources changed"
	[ ! -e "$TMP/src/evil.sh" ] && ok || not_ok "$1: a file was created"
}

# The patch as written applies (the baseline of this test).
prepare
expect_status 0 "$CACHEADVISE" apply "$TMP/c" --source-root "$TMP/src" --dry-run

# A deletion of a file the capture never read.
prepare
cat >>"$TMP/c/source.patch" <<'P'
--- a/notes.txt
+++ /dev/null
@@ -1 +0,0 @@
-keep me
P
refused delete "only change a file in place"

# A change to a file sources.json does not record.
prepare
cat >>"$TMP/c/source.patch" <<'P'
--- a/notes.txt
+++ b/notes.txt
@@ -1 +1 @@
-keep me
+changed
P
refused foreign "changes 'notes.txt', which .*sources.json does not record"

# A new file, the git way.
prepare
cat >>"$TMP/c/source.patch" <<'P'
diff --git a/evil.sh b/evil.sh
new file mode 100755
--- /dev/null
+++ b/evil.sh
@@ -0,0 +1 @@
+echo pwned
P
refused create "new file mode"

finish
