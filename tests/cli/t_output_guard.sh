#!/usr/bin/env bash
# Issue 36, item 6: an output may not be any input of its command, however
# it is spelled (a symbolic link, a hard link, ./ and ..). `patch --plan
# p.json -o p.json` used to replace the plan with PTX: patch guarded its
# PTX input only. Each refusal is a usage error (exit 1) naming the input,
# and the input is left as it was.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

ptx_fixture="$CA_SOURCE_DIR/tests/fixtures/intake/kernels.ptx"
cp "$ptx_fixture" "$TMP/k.ptx"
printf '{"schema": "cacheadvise.plan/1", "modules": []}\n' >"$TMP/plan.json"
cp "$TMP/plan.json" "$TMP/plan.orig"
ln -s "$TMP/plan.json" "$TMP/plan-link"
ln "$TMP/plan.json" "$TMP/plan-hard"
ln -s plan.json "$TMP/plan-rel"
mkdir "$TMP/sub"
ln -s "$TMP/k.ptx" "$TMP/k-link"

# intact WHAT: both inputs as they were (restored after a failure, so that
# one failure does not cascade).
intact() {
	cmp -s "$TMP/plan.json" "$TMP/plan.orig" && ok || {
		not_ok "$1 replaced the plan"; cp "$TMP/plan.orig" "$TMP/plan.json"; }
	cmp -s "$TMP/k.ptx" "$ptx_fixture" && ok || {
		not_ok "$1 replaced the PTX"; cp "$ptx_fixture" "$TMP/k.ptx"; }
}

# patch -o and --layout against the plan and the PTX
for out in "$TMP/plan.json" "$TMP/./plan.json" "$TMP/sub/../plan.json" "$TMP/plan-link" \
	"$TMP/plan-hard" "$TMP/plan-rel"; do
	expect_status 1 "$CACHEADVISE" patch --plan "$TMP/plan.json" -o "$out" "$TMP/k.ptx"
	expect_grep "'$out' is the plan to apply: writing it would destroy the input" "$TMP/err"
	intact "patch -o $out"
	(cd "$TMP/sub" && expect_status 1 "$CACHEADVISE" patch --plan ../plan.json -o "$out" ../k.ptx)
	intact "patch -o $out (relative plan)"
done
(cd "$TMP" && expect_status 1 "$CACHEADVISE" patch --plan plan.json -o plan.json k.ptx)
expect_grep "'plan.json' is the plan to apply" "$TMP/err"
intact "patch -o plan.json in its folder"
expect_status 1 "$CACHEADVISE" patch --plan "$TMP/plan-link" -o "$TMP/plan.json" "$TMP/k.ptx"
intact "patch --plan LINK -o PLAN"
for out in "$TMP/k.ptx" "$TMP/k-link"; do
	expect_status 1 "$CACHEADVISE" patch --plan "$TMP/plan.json" -o "$out" "$TMP/k.ptx"
	expect_grep "is the PTX to patch" "$TMP/err"
	intact "patch -o $out"
	expect_status 1 "$CACHEADVISE" patch --instrument --layout "$out" -o "$TMP/mon.ptx" "$TMP/k.ptx"
	expect_grep "is the PTX to patch" "$TMP/err"
	intact "patch --layout $out"
done
[ ! -e "$TMP/mon.ptx" ] && ok || not_ok "a refused patch wrote -o"

# inspect -o against its input, through links
for out in "$TMP/k.ptx" "$TMP/k-link" "$TMP/sub/../k.ptx"; do
	expect_status 1 "$CACHEADVISE" inspect -o "$out" "$TMP/k.ptx"
	expect_grep "is the file to inspect" "$TMP/err"
	intact "inspect -o $out"
done
expect_status 1 "$CACHEADVISE" inspect -o "$TMP/k.ptx" "$TMP/k-link"
intact "inspect -o FILE LINK"

# What is not an input is written.
expect_status 0 "$CACHEADVISE" patch --plan "$TMP/plan.json" -o "$TMP/sub/out.ptx" "$TMP/k.ptx"
cmp -s "$TMP/sub/out.ptx" "$ptx_fixture" && ok || not_ok "patch -o a new file did not write the PTX"
finish
