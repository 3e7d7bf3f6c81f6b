#!/usr/bin/env bash
# Issue 16: `cacheadvise apply` on what a user can break: a source.patch
# that is not a patch (exit 2, the file named, not "nothing to apply"); a
# dry run writes nothing, even where sources.json is missing; capture.json
# is read and checked before anything is applied; a read-only source tree
# is called read-only, naming the path, before git or patch try to write.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -f "$fixture/source-root.txt" ] || { echo "no real capture with sources"; exit 77; }
srcdir="$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")"
tree() { (cd "$1" && find . -type f -exec sha256sum {} + | sort); }
inodes() { (cd "$1" && find . -exec stat -c '%i %Y %n' {} + | sort); }

# prepare NAME: a capture and a copy of its sources, source.patch written.
prepare() {
	rm -rf "$TMP/$1" "$TMP/$1-src"
	cp -r "$fixture" "$TMP/$1"
	cp -r "$srcdir" "$TMP/$1-src"
	"$CACHEADVISE" report "$TMP/$1" --all --source-root "$TMP/$1-src" 2>/dev/null ||
		not_ok "$1: report --all failed"
	[ -s "$TMP/$1/source.patch" ] || not_ok "$1: empty source.patch"
}

# 1. A source.patch that is not a patch.
prepare garbage
printf 'this is not a patch\nat all\n' >"$TMP/garbage/source.patch"
before=$(tree "$TMP/garbage-src")
expect_status 2 "$CACHEADVISE" apply "$TMP/garbage" --source-root "$TMP/garbage-src"
expect_grep "'$TMP/garbage/source.patch' is not a patch" "$TMP/err"
expect_no_grep "nothing to apply" "$TMP/err"
expect_status 2 "$CACHEADVISE" apply "$TMP/garbage" --source-root "$TMP/garbage-src" --dry-run
expect_grep "'$TMP/garbage/source.patch' is not a patch" "$TMP/err"
[ "$(tree "$TMP/garbage-src")" = "$before" ] && ok || not_ok "a garbage patch changed the sources"

# 2. A dry run writes nothing, even with sources.json missing (the patch is
#    then made from the capture in memory).
prepare dry
rm "$TMP/dry/sources.json"
before_cap=$(inodes "$TMP/dry") before_src=$(tree "$TMP/dry-src")
sleep 1
expect_status 0 "$CACHEADVISE" apply "$TMP/dry" --source-root "$TMP/dry-src" --dry-run
expect_grep '^\+\+\+ b/' "$TMP/out"
expect_grep 'applies cleanly' "$TMP/err"
[ "$(inodes "$TMP/dry")" = "$before_cap" ] && ok || not_ok "--dry-run changed the capture: $(diff <(echo "$before_cap") <(inodes "$TMP/dry") | tr '\n' ' ')"
[ "$(tree "$TMP/dry-src")" = "$before_src" ] && ok || not_ok "--dry-run changed the sources"
[ ! -e "$TMP/dry/sources.json" ] && ok || not_ok "--dry-run wrote sources.json"
# Both missing: still nothing written.
rm "$TMP/dry/source.patch"
before_cap=$(inodes "$TMP/dry")
expect_status 0 "$CACHEADVISE" apply "$TMP/dry" --source-root "$TMP/dry-src" --dry-run
expect_grep '^\+\+\+ b/' "$TMP/out"
[ "$(inodes "$TMP/dry")" = "$before_cap" ] && ok || not_ok "--dry-run wrote into the capture"
# Without --dry-run the missing files are written, as documented.
expect_status 0 "$CACHEADVISE" apply "$TMP/dry" --source-root "$TMP/dry-src"
[ -s "$TMP/dry/source.patch" ] && [ -s "$TMP/dry/sources.json" ] && ok || not_ok "apply did not write source.patch and sources.json"

# 3. A corrupt capture.json is found before anything is applied.
prepare corrupt
head -c 300 "$fixture/capture.json" >"$TMP/corrupt/capture.json"
before=$(tree "$TMP/corrupt-src")
expect_status 2 "$CACHEADVISE" apply "$TMP/corrupt" --source-root "$TMP/corrupt-src"
expect_grep "$TMP/corrupt/capture.json" "$TMP/err"
[ "$(tree "$TMP/corrupt-src")" = "$before" ] && ok || not_ok "apply changed the sources of a corrupt capture"
printf '{"schema": "cacheadvise.capture/9"}\n' >"$TMP/corrupt/capture.json"
expect_status 2 "$CACHEADVISE" apply "$TMP/corrupt" --source-root "$TMP/corrupt-src" --dry-run
expect_grep "capture.json" "$TMP/err"
[ "$(tree "$TMP/corrupt-src")" = "$before" ] && ok || not_ok "apply changed the sources of a corrupt capture"

# 4. A read-only source tree: a read-only tmpfs where one can be mounted,
#    else a tree that the user nobody cannot write.
prepare ro
ro_src="$TMP/ro-mnt"
mkdir "$ro_src"
if mount -t tmpfs -o size=8m tmpfs "$ro_src" 2>/dev/null; then
	trap 'umount "$ro_src" 2>/dev/null; rm -rf "$TMP"' EXIT
	cp -r "$TMP/ro-src/." "$ro_src/"
	mount -o remount,ro "$ro_src"
	before=$(tree "$ro_src")
	expect_status 2 "$CACHEADVISE" apply "$TMP/ro" --source-root "$ro_src"
	expect_grep "'$ro_src.*' is read-only" "$TMP/err"
	expect_no_grep "changed since the capture" "$TMP/err"
	expect_no_grep "Read-only file system" "$TMP/err"
	[ "$(tree "$ro_src")" = "$before" ] && ok || not_ok "apply changed a read-only tree"
	# A dry run needs no write access.
	expect_status 0 "$CACHEADVISE" apply "$TMP/ro" --source-root "$ro_src" --dry-run
	umount "$ro_src"
elif [ "$(id -u)" = 0 ] && setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
	chmod 755 "$TMP"
	chmod -R a+rX,a-w "$TMP/ro-src"
	chmod -R a+rwX "$TMP/ro"
	expect_status 2 setpriv --reuid=nobody --regid=nogroup --clear-groups "$CACHEADVISE" apply "$TMP/ro" --source-root "$TMP/ro-src"
	expect_grep "'$TMP/ro-src.*' is not writable" "$TMP/err"
	expect_no_grep "changed since the capture" "$TMP/err"
	chmod -R u+w "$TMP/ro-src"
else
	echo "skipped the read-only tree: cannot mount a tmpfs or run as another user here"
fi
finish
