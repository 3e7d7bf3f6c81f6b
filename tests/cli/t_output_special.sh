#!/usr/bin/env bash
# Issue 25, item 7: `-o X` of report, inspect and patch where X is not a
# plain file. A FIFO or a device is written into, never replaced by a
# regular file; a write error there (a full device) is exit 2; a symbolic
# link is written through and stays a link; a dangling link and a
# directory are refused with a message saying what X is.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

capture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
ptx="$CA_SOURCE_DIR/tests/fixtures/intake/kernels.ptx"
plan="$TMP/plan.json"
printf '{"schema": "cacheadvise.plan/1", "modules": []}\n' >"$plan"

# run_o KIND OUT: each command's -o
run_o() {
	case $1 in
	report) expect_status "$3" "$CACHEADVISE" report "$capture" -o "$2" ;;
	inspect) expect_status "$3" "$CACHEADVISE" inspect -o "$2" "$ptx" ;;
	patch) expect_status "$3" "$CACHEADVISE" patch --plan "$plan" -o "$2" "$ptx" ;;
	esac
}

for cmd in report inspect patch; do
	# a FIFO with a reader gets the output, and stays a FIFO
	rm -f "$TMP/fifo" "$TMP/fifo.out"
	mkfifo "$TMP/fifo"
	cat "$TMP/fifo" >"$TMP/fifo.out" &
	reader=$!
	run_o $cmd "$TMP/fifo" 0
	wait $reader
	[ -p "$TMP/fifo" ] && ok || not_ok "$cmd -o FIFO replaced the FIFO"
	[ -s "$TMP/fifo.out" ] && ok || not_ok "$cmd -o FIFO: the reader got nothing"

	# devices of our own (root only): a full one is an error, a null one is not
	if mknod "$TMP/full" c 1 7 2>/dev/null && mknod "$TMP/null" c 1 3 2>/dev/null; then
		run_o $cmd "$TMP/full" 2
		expect_grep "cannot write '$TMP/full': No space left on device" "$TMP/err"
		[ -c "$TMP/full" ] && ok || not_ok "$cmd -o full device replaced the device"
		run_o $cmd "$TMP/null" 0
		[ -c "$TMP/null" ] && ok || not_ok "$cmd -o null device replaced the device"
		rm -f "$TMP/full" "$TMP/null"
	fi
	ls "$TMP" | grep -q '\.tmp\.' && not_ok "$cmd left a temporary file" || ok

	# a symbolic link: written through, the link stays
	rm -f "$TMP/link" "$TMP/target"
	echo OLD-CONTENT-MARKER >"$TMP/target"
	ln -s "$TMP/target" "$TMP/link"
	run_o $cmd "$TMP/link" 0
	[ -L "$TMP/link" ] && ok || not_ok "$cmd -o LINK replaced the link"
	grep -q OLD-CONTENT-MARKER "$TMP/target" && not_ok "$cmd -o LINK did not write the target" || ok
	# a dangling one: refused
	rm -f "$TMP/target"
	run_o $cmd "$TMP/link" 2
	expect_grep "symbolic link to a file that cannot be reached" "$TMP/err"
	[ -L "$TMP/link" ] && ok || not_ok "$cmd -o dangling LINK replaced the link"

	# a directory: refused as one, nothing left in it
	mkdir -p "$TMP/dir"
	run_o $cmd "$TMP/dir/" 2
	expect_grep "it is a directory" "$TMP/err"
	[ -z "$(ls -A "$TMP/dir")" ] && ok || not_ok "$cmd -o DIR/ left files in it"
done

finish
