#!/usr/bin/env bash
# Issue 36, items 2, 14 and 16: `apply` applies exactly what its one strict
# parser checked (emitters/rewrite/unified_diff.c), to every file or to none, with
# or without git and patch(1) on the machine. Before, the guard skipped an
# empty context line that git counts, so a file header after one was never
# checked; context diffs were not checked and `patch -p1` (used where git is
# missing) applied them; `patch -p1` left one file changed and a .rej when
# another failed; a symlinked source got git's "does not apply"; a CRLF
# patch was reported as 'stream_table.cu^M'. Each case runs with git on
# PATH and with only patch(1) on it, and with --dry-run.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -f "$fixture/source-root.txt" ] || { echo "no real capture with sources"; exit 77; }
srcdir="$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")"
# a PATH with patch(1) and without git, where the machine has patch
mkdir "$TMP/nogit"
p=$(command -v patch) && ln -s "$p" "$TMP/nogit/patch"
tree() { (cd "$1" && find . -exec sh -c 'for f; do if [ -L "$f" ]; then echo "$f -> $(readlink "$f")";
	elif [ -f "$f" ]; then sha256sum "$f"; else echo "$f/"; fi; done' sh {} + | sort); }

prepare() {
	rm -rf "$TMP/c" "$TMP/src"
	cp -r "$fixture" "$TMP/c"
	cp -r "$srcdir" "$TMP/src"
	printf 'keep me\n' >"$TMP/src/notes.txt"
	"$CACHEADVISE" report "$TMP/c" --all --source-root "$TMP/src" 2>/dev/null ||
		not_ok "report --all failed"
	[ -s "$TMP/c/source.patch" ] || not_ok "empty source.patch"
}

# refused NAME PATTERN: apply, with git and without, and its dry run refuse
# (exit 2, PATTERN in the message, no raw CR in it) and change nothing
refused() {
	local before path
	before=$(tree "$TMP/src")
	for path in "$PATH" "$TMP/nogit"; do
		expect_status 2 env PATH="$path" "$CACHEADVISE" apply "$TMP/c" --source-root "$TMP/src" --dry-run
		expect_grep "$2" "$TMP/err"
		expect_status 2 env PATH="$path" "$CACHEADVISE" apply "$TMP/c" --source-root "$TMP/src"
		expect_grep "$2" "$TMP/err"
		grep -q $'\r' "$TMP/err" && not_ok "$1: a carriage return in the message" || ok
		[ "$(tree "$TMP/src")" = "$before" ] && ok ||
			not_ok "$1 (PATH=$path): the sources changed: $(diff <(echo "$before") <(tree "$TMP/src") | head -5 | tr '\n' ' ')"
	done
}

# The hunk that ends on an empty line of stream_table.cu (old 152-154; the
# hunks above add 25 lines): git counts the empty line as context, so what
# follows is a file header of its own.
empty_line_hunk() {
	printf '@@ -152,3 +177,3 @@\n \tout[tid] = acc ^ (state << 20);\n-}\n+} /* ok */\n\n'
}

# 1. after the empty line, a change to a file sources.json does not record
prepare
{ empty_line_hunk; printf -- '--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-keep me\n+changed\n'; } \
	>>"$TMP/c/source.patch"
refused smuggled-change "changes 'notes.txt', which .*sources.json does not record"

# 2. after the empty line, a symbolic link to /etc/passwd, created the git way
prepare
{ empty_line_hunk
  printf 'diff --git a/evil b/evil\nnew file mode 120000\n--- /dev/null\n+++ b/evil\n'
  printf '@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n'; } >>"$TMP/c/source.patch"
refused smuggled-link "'new file mode 120000': creates a symbolic link"
[ ! -L "$TMP/src/evil" ] && ok || not_ok "a symbolic link was created"

# 3. a context diff, which patch(1) applies and git does not
prepare
printf -- '*** a/notes.txt\n--- b/notes.txt\n***************\n*** 1 ****\n! keep me\n--- 1 ----\n! changed\n' \
	>>"$TMP/c/source.patch"
refused context-diff "'\*\*\* a/notes.txt': a context diff"

# 4. all or nothing: the second file's hunk does not fit, the first stays
prepare
python3 - "$TMP/c/sources.json" "$(sha256sum <"$TMP/src/notes.txt" | cut -d' ' -f1)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["files"].append({"path": "notes.txt", "sha256": sys.argv[2], "patched": True})
json.dump(d, open(sys.argv[1], "w"))
PY
printf -- '--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-not what is there\n+changed\n' \
	>>"$TMP/c/source.patch"
refused half-applied "line 1 of '$TMP/src/notes.txt' is not the line the patch's hunk"
[ -z "$(find "$TMP/src" -name '*.rej' -o -name '*.orig' -o -name '.*cacheadvise-*')" ] && ok ||
	not_ok "apply left files behind: $(find "$TMP/src" -name '*.rej' -o -name '*.orig' -o -name '.*cacheadvise-*')"

# 5. a symbolic link in the sources: named as one, nothing written through it
prepare
mkdir "$TMP/real"
mv "$TMP/src/stream_table.cu" "$TMP/real/"
ln -s "$TMP/real/stream_table.cu" "$TMP/src/stream_table.cu"
real_before=$(sha256sum <"$TMP/real/stream_table.cu")
refused symlink "'$TMP/src/stream_table.cu' is a symbolic link \(to '$TMP/real/stream_table.cu'\): apply writes no file through a link"
[ "$(sha256sum <"$TMP/real/stream_table.cu")" = "$real_before" ] && ok || not_ok "written through the link"

# 6. a CRLF source.patch: called that, never 'stream_table.cu^M'
prepare
sed -i 's/$/\r/' "$TMP/c/source.patch"
refused crlf "Windows \(CRLF\) line ends"
expect_no_grep "stream_table\.cu.$" "$TMP/err"

# The patch as written applies, with and without git: the file keeps its
# permissions, nothing else is created, and the result is what sources.json
# says it will be.
for path in "$PATH" "$TMP/nogit"; do
	prepare
	chmod 640 "$TMP/src/stream_table.cu"
	before=$(cd "$TMP/src" && find . | sort)
	expect_status 0 env PATH="$path" "$CACHEADVISE" apply "$TMP/c" --source-root "$TMP/src" --dry-run
	expect_grep "applies cleanly" "$TMP/err"
	expect_status 0 env PATH="$path" "$CACHEADVISE" apply "$TMP/c" --source-root "$TMP/src"
	expect_grep "applied '$TMP/c/source.patch'" "$TMP/err"
	[ "$(stat -c %a "$TMP/src/stream_table.cu")" = 640 ] && ok || not_ok "the file's mode changed"
	[ "$(cd "$TMP/src" && find . | sort)" = "$before" ] && ok || not_ok "apply created or removed files"
	want=$(python3 -c 'import json,sys; print([f["patched_sha256"] for f in json.load(open(sys.argv[1]))["files"] if f["path"] == "stream_table.cu"][0])' "$TMP/c/sources.json")
	[ "$(sha256sum <"$TMP/src/stream_table.cu" | cut -d' ' -f1)" = "$want" ] && ok ||
		not_ok "the patched file is not what sources.json records"
	expect_status 0 env PATH="$path" "$CACHEADVISE" apply "$TMP/c" --source-root "$TMP/src"
	expect_grep "already applied" "$TMP/err"
done
finish
