# Shared helpers for tests/cli/t_*.sh (sourced). Each test runs the built
# binary ($CACHEADVISE) and fails with a message on the first broken check.
set -u
: "${CACHEADVISE:?set by ctest}"
: "${CA_SOURCE_DIR:?set by ctest}"
: "${CA_BUILD_DIR:?set by ctest}"
TMP=$(mktemp -d)
trap '[ -n "${CA_KEEP:-}" ] && echo "kept $TMP" >&2 || rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
not_ok() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# expect_status WANT CMD...: run CMD, keep stdout/stderr in $TMP/out, $TMP/err
expect_status() {
	local want=$1; shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	local got=$?
	if [ "$got" = "$want" ]; then ok; else
		not_ok "'$*' exited $got, want $want; stderr: $(head -c 600 "$TMP/err")"
	fi
}
# expect_grep PATTERN FILE
expect_grep() {
	if grep -q -E -- "$1" "$2"; then ok; else not_ok "'$1' not found in $2: $(head -c 400 "$2")"; fi
}
# expect_line LINE FILE: FILE has exactly this line (no pattern characters)
expect_line() {
	if grep -q -x -F -- "$1" "$2"; then ok; else not_ok "line '$1' not found in $2: $(head -c 400 "$2")"; fi
}
expect_no_grep() {
	if grep -q -E -- "$1" "$2"; then not_ok "'$1' unexpectedly found in $2"; else ok; fi
}
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit $?
}
