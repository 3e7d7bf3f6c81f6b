#!/usr/bin/env bash
# Issue 36, item 4: `report --all` on a capture directory from someone else
# whose output files are symbolic links (to a file outside the capture), or
# not files at all (a FIFO, a directory), or whose patched/ is a link. It
# used to write through such links, replacing the files outside. Now it
# refuses the capture with a message naming the file: exit 2, nothing
# written, nothing outside touched.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -d "$fixture" ] || { echo "no real capture"; exit 77; }
root="$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")"
c="$TMP/c"
outside="$TMP/outside"
# Everything in the capture and outside it, links as links: a refused --all
# changes nothing here.
snapshot() {
	(cd "$TMP" && find c outside -xtype f -exec sha256sum {} + | sort
	 find c outside -printf '%p %y %l\n' | sort)
}

# refused WHAT SETUP: SETUP (shell code run in $c) plants the trap.
refused() {
	local what=$1 setup=$2 before
	rm -rf "$c" "$outside"
	cp -r "$fixture" "$c"
	mkdir "$outside"
	echo OUTSIDE >"$outside/file"
	mkdir "$outside/patched"
	echo OUTSIDE >"$outside/patched/83c50ebd491c19e2.ptx"
	(cd "$c" && eval "$setup")
	before=$(snapshot)
	timeout 30 "$CACHEADVISE" report "$c" --all --source-root "$root" >"$TMP/out" 2>"$TMP/err" </dev/null
	st=$?
	[ "$st" = 2 ] && ok || not_ok "$what: report --all exited $st, want 2: $(head -c 400 "$TMP/err")"
	expect_grep "refusing to write in the capture '.*': '.*' is (a symbolic link|not a regular file|not a directory)" "$TMP/err"
	[ "$(snapshot)" = "$before" ] && ok || not_ok "$what: a refused --all changed files: $(diff <(echo "$before") <(snapshot) | head -5 | tr '\n' ' ')"
	grep -qx OUTSIDE "$outside/file" && ok || not_ok "$what: the file outside was replaced"
}

for f in report.txt report.html report.json hints.sarif plan.json source.patch sources.json regcache.patch \
	patched/83c50ebd491c19e2.ptx; do
	refused "$f as a link" "rm -f $f; ln -s '$outside/file' $f"
	expect_grep "'$c/$f' is a symbolic link" "$TMP/err"
done
refused "a dangling link" "rm -f report.json; ln -s '$outside/gone' report.json"
refused "patched/ as a link" "rm -rf patched; ln -s '$outside/patched' patched"
expect_grep "'$c/patched' is a symbolic link" "$TMP/err"
refused "a FIFO" "rm -f report.html; mkfifo report.html"
expect_grep "'$c/report.html' is not a regular file" "$TMP/err"
refused "a directory" "rm -f sources.json; mkdir sources.json"

# The same capture without the trap is re-written as before.
rm -rf "$c"; cp -r "$fixture" "$c"
expect_status 0 "$CACHEADVISE" report "$c" --all --source-root "$root"
grep -q '^--- a/stream_table.cu' "$c/source.patch" && ok || not_ok "report --all wrote no source patch"
finish
