#!/usr/bin/env bash
# Hostile input files (issue 16): a FIFO never hangs a command, a directory
# is called a directory, a huge sparse file is refused at once by its size,
# PTX with a NUL byte or a byte order mark is read the same way by inspect
# and patch, and patch --instrument --layout writes both files or neither.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

PTX="$CA_SOURCE_DIR/tests/fixtures/intake/kernels.ptx"
PLAN="$CA_SOURCE_DIR/tests/fixtures/capture-real/plan.json"
GRAPH="$CA_SOURCE_DIR/tests/fixtures/graphs/figure4.json"

# quick STATUS CMD...: CMD must finish within 10 s with STATUS.
quick() {
	local want=$1; shift
	timeout 10 "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	local got=$?
	if [ "$got" = 124 ]; then not_ok "'$*' hung (killed after 10 s)"
	elif [ "$got" = "$want" ]; then ok
	else not_ok "'$*' exited $got, want $want; stderr: $(head -c 600 "$TMP/err")"; fi
}

mkfifo "$TMP/fifo"
quick 2 "$CACHEADVISE" inspect "$TMP/fifo"
expect_grep "fifo.*not a regular file" "$TMP/err"
quick 2 "$CACHEADVISE" solve "$TMP/fifo"
expect_grep "fifo.*not a regular file" "$TMP/err"
quick 2 "$CACHEADVISE" patch --plan "$TMP/fifo" "$PTX"
expect_grep "fifo.*not a regular file" "$TMP/err"
quick 2 "$CACHEADVISE" patch --plan "$PLAN" "$TMP/fifo"
expect_grep "fifo.*not a regular file" "$TMP/err"
quick 2 "$CACHEADVISE" patch --instrument "$TMP/fifo"
expect_grep "fifo.*not a regular file" "$TMP/err"
# run reads its plan first; without a GPU it may stop at the GPU check (4).
timeout 10 "$CACHEADVISE" run --plan "$TMP/fifo" -- /bin/true >"$TMP/out" 2>"$TMP/err" </dev/null
got=$?
case $got in
2) expect_grep "fifo.*not a regular file" "$TMP/err" ;;
4) ok ;;
*) not_ok "run --plan FIFO exited $got (124: hung); stderr: $(head -c 400 "$TMP/err")" ;;
esac

# A directory is a directory, not invalid JSON.
mkdir "$TMP/dir"
quick 2 "$CACHEADVISE" solve "$TMP/dir"
expect_grep "dir.*is a directory" "$TMP/err"
expect_no_grep "invalid JSON" "$TMP/err"
quick 2 "$CACHEADVISE" patch --plan "$TMP/dir" "$PTX"
expect_grep "dir.*is a directory" "$TMP/err"
expect_no_grep "invalid JSON" "$TMP/err"
quick 2 "$CACHEADVISE" patch --plan "$PLAN" "$TMP/dir"
expect_grep "dir.*is a directory" "$TMP/err"
timeout 10 "$CACHEADVISE" run --plan "$TMP/dir" -- /bin/true >"$TMP/out" 2>"$TMP/err" </dev/null
case $? in
2) expect_grep "dir.*is a directory" "$TMP/err"; expect_no_grep "invalid JSON" "$TMP/err" ;;
4) ok ;;
*) not_ok "run --plan DIR: stderr: $(head -c 400 "$TMP/err")" ;;
esac

# A 50 GB sparse file: refused by its size at once (well under 2 s).
if truncate -s 50G "$TMP/huge" 2>/dev/null; then
	for cmd in "inspect" "patch --instrument" "solve" "patch --plan $PLAN"; do
		start=$(date +%s%N)
		# shellcheck disable=SC2086
		quick 2 "$CACHEADVISE" $cmd "$TMP/huge"
		ms=$(( ($(date +%s%N) - start) / 1000000 ))
		expect_grep "huge.*bytes" "$TMP/err"
		if [ "$ms" -lt 2000 ]; then ok; else not_ok "$cmd on a 50 GB sparse file took $ms ms"; fi
	done
	start=$(date +%s%N)
	quick 2 "$CACHEADVISE" patch --plan "$TMP/huge" "$PTX"
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	expect_grep "huge.*bytes" "$TMP/err"
	[ "$ms" -lt 2000 ] && ok || not_ok "patch --plan on a 50 GB sparse plan took $ms ms"
fi

# PTX with a NUL byte: inspect and patch agree (exit 2, file and offset).
{ head -c 40 "$PTX"; printf '\0'; tail -c +41 "$PTX"; } >"$TMP/nul.ptx"
quick 2 "$CACHEADVISE" inspect "$TMP/nul.ptx"
expect_grep "nul\\.ptx.* NUL byte at offset 40" "$TMP/err"
quick 2 "$CACHEADVISE" patch --plan "$PLAN" "$TMP/nul.ptx"
expect_grep "nul\\.ptx.* NUL byte at offset 40" "$TMP/err"
quick 2 "$CACHEADVISE" patch --instrument "$TMP/nul.ptx"
expect_grep "nul\\.ptx.* NUL byte at offset 40" "$TMP/err"
expect_no_grep . "$TMP/out"

# PTX with a UTF-8 byte order mark: read as the same module; the
# instrumented PTX starts with the module's own first line, not with
# declarations ahead of .version.
{ printf '\357\273\277'; cat "$PTX"; } >"$TMP/bom.ptx"
quick 0 "$CACHEADVISE" inspect --json "$TMP/bom.ptx"
cp "$TMP/out" "$TMP/bom.inspect"
quick 0 "$CACHEADVISE" inspect --json "$PTX"
if diff <(grep -v '"path"\|"file"\|bom.ptx\|kernels.ptx' "$TMP/bom.inspect") \
	<(grep -v '"path"\|"file"\|bom.ptx\|kernels.ptx' "$TMP/out") >/dev/null; then ok; else
	not_ok "inspect reads a PTX with a byte order mark differently"; fi
quick 0 "$CACHEADVISE" patch --instrument -o "$TMP/bom.out.ptx" "$TMP/bom.ptx"
quick 0 "$CACHEADVISE" patch --instrument -o "$TMP/plain.out.ptx" "$PTX"
if cmp -s "$TMP/bom.out.ptx" "$TMP/plain.out.ptx"; then ok; else
	not_ok "patch --instrument of a PTX with a BOM differs from the plain one"; fi
first=$(grep -v '^\s*$\|^\s*//' "$TMP/bom.out.ptx" | head -1)
case $first in
.version*) ok ;;
*) not_ok "instrumented PTX of a BOM file starts with '$first', not .version" ;;
esac

# patch --instrument --layout into an unwritable place: no out.ptx left.
mkdir "$TMP/ro"
quick 2 "$CACHEADVISE" patch --instrument -o "$TMP/ro/out.ptx" --layout "$TMP/ro/missing/l.json" "$PTX"
if [ -e "$TMP/ro/out.ptx" ]; then not_ok "out.ptx left behind when the layout cannot be written"; else ok; fi
expect_grep "l\\.json" "$TMP/err"
quick 2 "$CACHEADVISE" patch --instrument -o "$TMP/ro/missing/out.ptx" --layout "$TMP/ro/l.json" "$PTX"
if [ -e "$TMP/ro/l.json" ]; then not_ok "layout left behind when out.ptx cannot be written"; else ok; fi
ls "$TMP/ro" | grep -q tmp && not_ok "temporary files left in $TMP/ro: $(ls "$TMP/ro")" || ok

finish
