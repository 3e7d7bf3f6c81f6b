#!/usr/bin/env bash
# Issue 36, item 16: `-o ''` used to fail with "cannot rename '.tmp.PID' to
# ''"; it is now a usage error (exit 1) saying what -o wants, in every
# command that takes -o. `-o -` used to write a file named "-"; for report,
# inspect and patch it is now standard output (probe: the device model on
# standard output, as --json prints it), and no file "-" appears.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

capture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
ptx="$CA_SOURCE_DIR/tests/fixtures/intake/kernels.ptx"
plan="$TMP/plan.json"
printf '{"schema": "cacheadvise.plan/1", "modules": []}\n' >"$plan"
mkdir "$TMP/cwd"
cd "$TMP/cwd" || exit 1

# run KIND OPTION VALUE: each command with -o VALUE (or --output VALUE)
run() {
	local want=$1 cmd=$2 opt=$3 val=$4
	case $cmd in
	report) expect_status "$want" "$CACHEADVISE" report "$capture" "$opt" "$val" ;;
	report-json) expect_status "$want" "$CACHEADVISE" report "$capture" --format json "$opt" "$val" ;;
	inspect) expect_status "$want" "$CACHEADVISE" inspect "$opt" "$val" "$ptx" ;;
	patch) expect_status "$want" "$CACHEADVISE" patch --plan "$plan" "$opt" "$val" "$ptx" ;;
	probe) expect_status "$want" "$CACHEADVISE" probe "$opt" "$val" ;;
	profile) expect_status "$want" "$CACHEADVISE" profile "$opt" "$val" -- /bin/true ;;
	esac
}

for cmd in report inspect patch probe profile; do
	for opt in -o --output; do
		[ $cmd = profile ] && [ $opt = --output ] && opt=--out
		run 1 $cmd $opt ''
		expect_grep "^cacheadvise $cmd: -o wants a (file|folder) name, not an empty one" "$TMP/err"
		expect_no_grep "rename|\.tmp\." "$TMP/err"
	done
done
[ -z "$(ls -A)" ] && ok || not_ok "-o '' left files: $(ls -A)"

# -o -: standard output, the same bytes as without -o
for cmd in report report-json inspect patch; do
	run 0 $cmd -o -
	cp "$TMP/out" "$TMP/dash.out"
	run 0 $cmd --output -
	# solver times ("seconds") are the one volatile field of the JSON
	cmp -s <(grep -v '"seconds":' "$TMP/out") <(grep -v '"seconds":' "$TMP/dash.out") && ok ||
		not_ok "$cmd: -o - and --output - differ"
	expect_status 0 "$CACHEADVISE" $(case $cmd in
		report) echo report "$capture" ;;
		report-json) echo report "$capture" --format json ;;
		inspect) echo inspect "$ptx" ;;
		patch) echo patch --plan "$plan" "$ptx" ;;
		esac)
	cmp -s <(grep -v '"seconds":' "$TMP/out") <(grep -v '"seconds":' "$TMP/dash.out") && ok ||
		not_ok "$cmd -o - is not what standard output gets without -o"
	[ -s "$TMP/dash.out" ] && ok || not_ok "$cmd -o - wrote nothing"
done
[ ! -e - ] && ok || not_ok "-o - wrote a file named '-'"
# --all writes into DIR: -o - is refused with it as any -o is
expect_status 1 "$CACHEADVISE" report "$capture" --all -o -
expect_grep "takes no --format or -o" "$TMP/err"
# profile -o names a folder: '-' is not standard output there
run 1 profile -o -
expect_grep "^cacheadvise profile: -o wants a folder name" "$TMP/err"
[ -z "$(ls -A)" ] && ok || not_ok "-o - left files: $(ls -A)"

# the help of each command says so
for cmd in report inspect patch probe; do
	expect_status 0 "$CACHEADVISE" $cmd --help
	expect_grep "'-' for standard output" "$TMP/out"
done
finish
