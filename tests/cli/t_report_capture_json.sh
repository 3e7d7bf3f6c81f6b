#!/usr/bin/env bash
# Issue 16: `report` on a capture whose capture.json is not a readable
# regular file says what it is (a directory, a FIFO, permission denied)
# rather than "capture.json is missing", and never blocks on a FIFO.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-handmade"
[ -d "$fixture" ] || { echo "no hand-made capture"; exit 77; }
fresh() { rm -rf "$TMP/c"; cp -r "$fixture" "$TMP/c"; rm "$TMP/c/capture.json"; }

# quick STATUS CMD...: CMD must finish within 10 s with STATUS.
quick() {
	local want=$1; shift
	timeout 10 "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	local got=$?
	if [ "$got" = 124 ]; then not_ok "'$*' hung (killed after 10 s)"
	elif [ "$got" = "$want" ]; then ok
	else not_ok "'$*' exited $got, want $want; stderr: $(head -c 600 "$TMP/err")"; fi
}

fresh
mkdir "$TMP/c/capture.json"
quick 2 "$CACHEADVISE" report "$TMP/c"
expect_grep "capture.json.*is a directory" "$TMP/err"
expect_no_grep "capture.json is missing" "$TMP/err"

fresh
mkfifo "$TMP/c/capture.json"
quick 2 "$CACHEADVISE" report "$TMP/c"
expect_grep "capture.json.*not a regular file" "$TMP/err"
expect_no_grep "capture.json is missing" "$TMP/err"
quick 2 "$CACHEADVISE" report "$TMP/c" --all
expect_grep "capture.json.*not a regular file" "$TMP/err"

# Still "missing" when it is missing.
fresh
quick 2 "$CACHEADVISE" report "$TMP/c"
expect_grep "capture.json is missing" "$TMP/err"

# An unreadable capture directory: needs a user other than root (root reads
# everything), so run as nobody where setpriv can.
fresh
cp "$fixture/capture.json" "$TMP/c/"
chmod 755 "$TMP"
chmod 000 "$TMP/c"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
   setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null &&
   setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$CACHEADVISE"; then
	quick 2 setpriv --reuid=nobody --regid=nogroup --clear-groups "$CACHEADVISE" report "$TMP/c"
	expect_grep "capture.json.*Permission denied" "$TMP/err"
	expect_no_grep "capture.json is missing" "$TMP/err"
	# capture.json itself unreadable (the folder readable).
	chmod 755 "$TMP/c"
	chmod 000 "$TMP/c/capture.json"
	quick 2 setpriv --reuid=nobody --regid=nogroup --clear-groups "$CACHEADVISE" report "$TMP/c"
	expect_grep "capture.json.*Permission denied" "$TMP/err"
elif [ "$(id -u)" != 0 ]; then
	quick 2 "$CACHEADVISE" report "$TMP/c"
	expect_grep "capture.json.*Permission denied" "$TMP/err"
	expect_no_grep "capture.json is missing" "$TMP/err"
else
	echo "skipped the unreadable-directory case: root reads everything and cannot run as nobody here"
fi
chmod -R u+rwX "$TMP/c"
finish
