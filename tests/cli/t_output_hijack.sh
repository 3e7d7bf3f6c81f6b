#!/usr/bin/env bash
# Issue 36, item 3: temporary output names taken in advance. Outputs used to
# be written to "<OUT>.tmp.<pid>" with fopen: a symbolic link planted there
# sent the write to the file it led to (replacing a file outside), and a
# FIFO planted there made the command wait forever. Here both are planted
# under the pid the command will have (exec keeps the shell's pid) for
# report -o, inspect -o, patch -o and every file of report --all: the
# command must succeed, leave the file the link leads to alone and not wait
# on the FIFO (a hang is a failure after 30 s; the verdict does not depend
# on the machine's speed, the command either waits for ever or not at all).
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -d "$fixture" ] || { echo "no real capture"; exit 77; }
root="$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")"
ptx="$CA_SOURCE_DIR/tests/fixtures/intake/kernels.ptx"
plan="$TMP/plan.json"
printf '{"schema": "cacheadvise.plan/1", "modules": []}\n' >"$plan"
victim="$TMP/victim"
all_outputs="plan.json report.txt report.html report.json hints.sarif source.patch sources.json patched/83c50ebd491c19e2.ptx"

# planted KIND NAME... -- CMD...: NAME.tmp.<pid> for each NAME is a link to
# $victim (KIND link) or a FIFO (KIND fifo), then CMD runs under that pid.
planted() {
	timeout 30 bash -c '
		kind=$1 victim=$2; shift 2
		while [ "$1" != -- ]; do
			if [ "$kind" = link ]; then ln -s "$victim" "$1.tmp.$$"; else mkfifo "$1.tmp.$$"; fi
			shift
		done
		shift
		exec "$@"' _ "$1" "$victim" "${@:2}" >"$TMP/out" 2>"$TMP/err" </dev/null
}

# check WHAT STATUS OUT...: exit 0, the victim intact, each OUT a regular
# file, and no temporary left but the planted ones (removed here).
check() {
	local what=$1 st=$2 o
	shift 2
	[ "$st" = 0 ] && ok || not_ok "$what exited $st (124: it hung); stderr: $(head -c 400 "$TMP/err")"
	grep -qx VICTIM "$victim" && ok || not_ok "$what wrote through a link planted at its temporary name"
	for o in "$@"; do
		[ -f "$o" ] && [ ! -L "$o" ] && [ -s "$o" ] && ok || not_ok "$what: '$o' is not a written file"
	done
	find "$TMP" \( -type l -o -type p \) -name '*.tmp.*' -delete
	if find "$TMP" -name '*.tmp.*' | grep -q .; then
		not_ok "$what left $(find "$TMP" -name '*.tmp.*' | tr '\n' ' ')"
	else ok; fi
}

for kind in link fifo; do
	echo VICTIM >"$victim"
	rm -rf "$TMP/c" "$TMP"/out.*
	cp -r "$fixture" "$TMP/c"

	planted $kind "$TMP/out.txt" -- "$CACHEADVISE" report "$TMP/c" -o "$TMP/out.txt"
	check "report -o ($kind)" $? "$TMP/out.txt"

	planted $kind "$TMP/out.inspect" -- "$CACHEADVISE" inspect -o "$TMP/out.inspect" "$ptx"
	check "inspect -o ($kind)" $? "$TMP/out.inspect"

	planted $kind "$TMP/out.ptx" -- "$CACHEADVISE" patch --plan "$plan" -o "$TMP/out.ptx" "$ptx"
	check "patch -o ($kind)" $? "$TMP/out.ptx"

	names=()
	for f in $all_outputs; do names+=("$TMP/c/$f"); done
	planted $kind "${names[@]}" -- "$CACHEADVISE" report "$TMP/c" --all --source-root "$root"
	check "report --all ($kind)" $? "${names[@]}"
	grep -q '^--- a/stream_table.cu' "$TMP/c/source.patch" && ok ||
		not_ok "report --all ($kind) wrote no source patch"
done
finish
