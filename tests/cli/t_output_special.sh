#!/usr/bin/env bash
# Issue 25, item 7: `-o X` of report, inspect and patch where X is not a
# plain file. A FIFO or a device is written into, never replaced by a
# regular file; a write error there (a full device) is exit 2; a directory
# is refused with a message saying what X is. Issue 36: a symbolic link is
# replaced by the output, never written through (the file it led to stays
# as it was), dangling or not; a link to a FIFO or a device, as
# /dev/stdout is, is written into.
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

	# a symbolic link: replaced, the file it led to unchanged
	rm -f "$TMP/link" "$TMP/target"
	echo OLD-CONTENT-MARKER >"$TMP/target"
	ln -s "$TMP/target" "$TMP/link"
	run_o $cmd "$TMP/link" 0
	[ -f "$TMP/link" ] && [ ! -L "$TMP/link" ] && [ -s "$TMP/link" ] && ok ||
		not_ok "$cmd -o LINK did not replace the link with the output"
	grep -qx OLD-CONTENT-MARKER "$TMP/target" && ok || not_ok "$cmd -o LINK wrote through the link"
	# a dangling one: replaced too
	rm -f "$TMP/link" "$TMP/target"
	ln -s "$TMP/target" "$TMP/link"
	run_o $cmd "$TMP/link" 0
	[ -f "$TMP/link" ] && [ ! -L "$TMP/link" ] && ok || not_ok "$cmd -o dangling LINK was not replaced"
	[ ! -e "$TMP/target" ] && ok || not_ok "$cmd -o dangling LINK created the file it named"
	# a link to a FIFO (as /dev/stdout is, to a pipe): written into, both stay
	rm -f "$TMP/link" "$TMP/fifo" "$TMP/fifo.out"
	mkfifo "$TMP/fifo"
	ln -s "$TMP/fifo" "$TMP/link"
	cat "$TMP/fifo" >"$TMP/fifo.out" &
	reader=$!
	run_o $cmd "$TMP/link" 0
	wait $reader
	[ -L "$TMP/link" ] && [ -p "$TMP/fifo" ] && ok || not_ok "$cmd -o LINK-TO-FIFO replaced something"
	[ -s "$TMP/fifo.out" ] && ok || not_ok "$cmd -o LINK-TO-FIFO: the reader got nothing"
	# /dev/stdout, whether it is a pipe or a file the shell opened
	case $cmd in
	report) "$CACHEADVISE" report "$capture" -o /dev/stdout | cat >"$TMP/via-pipe" ;;
	inspect) "$CACHEADVISE" inspect -o /dev/stdout "$ptx" | cat >"$TMP/via-pipe" ;;
	patch) "$CACHEADVISE" patch --plan "$plan" -o /dev/stdout "$ptx" | cat >"$TMP/via-pipe" ;;
	esac
	[ -s "$TMP/via-pipe" ] && ok || not_ok "$cmd -o /dev/stdout into a pipe wrote nothing"
	run_o $cmd /dev/stdout 0
	cmp -s "$TMP/out" "$TMP/via-pipe" && ok || not_ok "$cmd -o /dev/stdout into a file differs from a pipe"
	[ -L /dev/stdout ] || [ -c /dev/stdout ] && ok || not_ok "$cmd -o /dev/stdout replaced /dev/stdout"

	# a directory: refused as one, nothing left in it
	mkdir -p "$TMP/dir"
	run_o $cmd "$TMP/dir/" 2
	expect_grep "it is a directory" "$TMP/err"
	[ -z "$(ls -A "$TMP/dir")" ] && ok || not_ok "$cmd -o DIR/ left files in it"
done

finish
