#!/usr/bin/env bash
# Issue 16: `profile` and `run` check the files their options name before
# they look for a GPU, so a missing --device, --compare or --plan file is an
# input error (exit 2, the file named) on any machine, with or without a GPU;
# an unknown option is named in the one usage message.
. "$(dirname "$0")/lib.sh"

ca=$CACHEADVISE
plan="$CA_SOURCE_DIR/tests/fixtures/capture-real/plan.json"

expect_status 2 "$ca" profile --device "$TMP/missing.json" --out "$TMP/o1" /bin/true
expect_grep "missing.json" "$TMP/err"
expect_no_grep "no usable GPU" "$TMP/err"
[ ! -e "$TMP/o1" ] && ok || not_ok "profile --device missing.json left '$TMP/o1' behind"

mkdir "$TMP/a-dir"
expect_status 2 "$ca" profile --device "$TMP/a-dir" /bin/true
expect_grep "a-dir.*directory" "$TMP/err"
printf '{"schema": ' >"$TMP/broken-device.json"
expect_status 2 "$ca" profile --device "$TMP/broken-device.json" /bin/true
expect_grep "broken-device.json" "$TMP/err"

expect_status 2 "$ca" profile --compare "$TMP/missing.out" --out "$TMP/o2" /bin/true
expect_grep "missing.out" "$TMP/err"
expect_no_grep "no usable GPU" "$TMP/err"
[ ! -e "$TMP/o2" ] && ok || not_ok "profile --compare missing left '$TMP/o2' behind"
expect_status 2 "$ca" profile --compare "$TMP/a-dir" /bin/true
expect_grep "a-dir.*directory" "$TMP/err"

expect_status 2 "$ca" run --plan "$TMP/missing.json" -- /bin/true
expect_grep "missing.json" "$TMP/err"
expect_no_grep "no usable GPU" "$TMP/err"

# An unknown option is named, once, by cacheadvise (not getopt's own line).
expect_status 1 "$ca" profile --bogus /bin/true
expect_grep "^cacheadvise profile: unknown option '--bogus'" "$TMP/err"
expect_no_grep "^profile: " "$TMP/err"
expect_status 1 "$ca" profile -Z /bin/true
expect_grep "^cacheadvise profile: unknown option '-Z'" "$TMP/err"
expect_status 1 "$ca" profile --top
expect_grep "^cacheadvise profile: option '--top' needs a value" "$TMP/err"
expect_status 1 "$ca" run --bogus --plan "$plan" /bin/true
expect_grep "^cacheadvise run: unknown option '--bogus'" "$TMP/err"
expect_no_grep "^run: " "$TMP/err"
expect_status 1 "$ca" run --plan
expect_grep "^cacheadvise run: option '--plan' needs a value" "$TMP/err"

# Valid input files still reach the GPU check (exit 4 here without one).
if ! nvidia-smi -L >/dev/null 2>&1; then
	printf 'old output\n' >"$TMP/out.txt"
	expect_status 4 "$ca" profile --compare "$TMP/out.txt" --out "$TMP/o3" /bin/true
	expect_grep "no usable GPU" "$TMP/err"
	expect_status 4 "$ca" run --plan "$plan" -- /bin/true
	expect_grep "no usable GPU" "$TMP/err"
fi
finish
