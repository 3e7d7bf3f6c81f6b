#!/usr/bin/env bash
# Issue 16: `report --all` replaces every file it writes (plan.json,
# patched/*.ptx, the reports, source.patch, sources.json) or none: on a full
# disk no report is new while another is old, and no temporary is left.
# The disk is a small tmpfs where this test may mount one (it runs as root
# in CI), and a file size limit (ulimit -f) otherwise and in addition.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -d "$fixture" ] || { echo "no real capture"; exit 77; }
outputs="plan.json report.txt report.html report.json hints.sarif source.patch sources.json patched/83c50ebd491c19e2.ptx"
# The reports and the patched PTX are not read by report: mark them, to see
# whether they were replaced; plan.json and sources.json are, so their inode
# numbers tell instead (a rename gives a new one).
marked="report.txt report.html report.json hints.sarif source.patch patched/83c50ebd491c19e2.ptx"

prepare() {
	local c=$1 f
	cp -r "$fixture" "$c"
	for f in $marked; do printf 'OLD %s\n' "$f" >"$c/$f"; done
}
inodes() { (cd "$1" && for f in $outputs; do stat -c '%i %n' "$f"; done); }
# none_replaced C BEFORE: every output is the old one, no temporary is left.
none_replaced() {
	local c=$1 before=$2 f
	[ "$(inodes "$c")" = "$before" ] && ok || not_ok "a failed --all replaced some files: $(diff <(echo "$before") <(inodes "$c") | tr '\n' ' ')"
	for f in $marked; do
		grep -q "^OLD $f" "$c/$f" && ok || not_ok "a failed --all replaced $f"
	done
	if find "$c" -name '*.tmp.*' | grep -q .; then not_ok "a failed --all left $(find "$c" -name '*.tmp.*' | tr '\n' ' ')"; else ok; fi
}
all_replaced() {
	local c=$1 before=$2 f
	diff <(echo "$before") <(inodes "$c") | grep -c '^>' | grep -qx "$(echo $outputs | wc -w)" && ok || not_ok "--all did not replace every file"
	for f in $marked; do
		grep -q "^OLD $f" "$c/$f" && not_ok "--all left $f old" || ok
	done
}

# 1. A file size limit: report.json (about 50 KB) cannot be written, the
#    files before it (plan.json, patched PTX, report.txt, report.html) could.
prepare "$TMP/c1"
before=$(inodes "$TMP/c1")
(trap '' XFSZ; ulimit -f 24; exec "$CACHEADVISE" report "$TMP/c1" --all) >"$TMP/out" 2>"$TMP/err"
st=$?
[ "$st" = 2 ] && ok || not_ok "--all past the file size limit exited $st, want 2: $(cat "$TMP/err")"
expect_grep "cannot write .*(File too large|report\.json)" "$TMP/err"
none_replaced "$TMP/c1" "$before"
expect_status 0 "$CACHEADVISE" report "$TMP/c1" --all
all_replaced "$TMP/c1" "$before"

# 2. A full disk: a tmpfs with 32 KiB left once the capture is on it.
mnt="$TMP/mnt"
mkdir "$mnt"
if mount -t tmpfs -o size=4m tmpfs "$mnt" 2>/dev/null; then
	trap 'umount "$mnt"; rm -rf "$TMP"' EXIT
	prepare "$mnt/c"
	avail=$(df --output=avail -B1 "$mnt" | tail -n 1)
	head -c $((avail - 32768)) /dev/zero >"$mnt/filler"
	before=$(inodes "$mnt/c")
	expect_status 2 "$CACHEADVISE" report "$mnt/c" --all
	expect_grep "No space left on device" "$TMP/err"
	none_replaced "$mnt/c" "$before"
	rm "$mnt/filler"
	expect_status 0 "$CACHEADVISE" report "$mnt/c" --all
	all_replaced "$mnt/c" "$before"
else
	echo "cannot mount a tmpfs here: the full-disk case is covered by the size limit only"
fi
finish
