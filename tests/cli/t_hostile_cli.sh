#!/usr/bin/env bash
# Issue 25, item 7: what a user can get wrong on the command line, each
# answered with the exit status DESIGN.md gives and a message that says
# what is wrong, never a wrong reason.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

ptx="$CA_SOURCE_DIR/tests/fixtures/intake/kernels.ptx"
capture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
printf '{"schema": "cacheadvise.plan/1", "modules": []}\n' >"$TMP/plan.json"

# PTX from standard input (a pipe: no size known in advance)
cat "$ptx" | "$CACHEADVISE" patch --plan "$TMP/plan.json" - >"$TMP/out" 2>"$TMP/err"
[ $? = 0 ] && ok || not_ok "patch from a pipe failed: $(cat "$TMP/err")"
cmp -s "$TMP/out" "$ptx" && ok || not_ok "patch of a pipe with an empty plan changed the PTX"
cat "$ptx" | expect_status 1 "$CACHEADVISE" inspect -
expect_grep "inspect reads a file, not standard input" "$TMP/err"

# -o naming the input: refused, the input intact
cp "$ptx" "$TMP/k.ptx"
expect_status 1 "$CACHEADVISE" inspect -o "$TMP/k.ptx" "$TMP/k.ptx"
expect_grep "is the file to inspect" "$TMP/err"
ln -s "$TMP/k.ptx" "$TMP/k-link.ptx"
expect_status 1 "$CACHEADVISE" inspect -o "$TMP/k-link.ptx" "$TMP/k.ptx"
expect_status 1 "$CACHEADVISE" patch --plan "$TMP/plan.json" -o "$TMP/./k.ptx" "$TMP/k.ptx"
expect_grep "is the PTX to patch" "$TMP/err"
cmp -s "$TMP/k.ptx" "$ptx" && ok || not_ok "the input was overwritten"

# a 32-bit ELF is called one, not "no .nv_fatbin"
python3 - "$TMP/elf32" <<'PY'
import struct, sys
h = b"\x7fELF" + bytes([1, 1, 1, 0]) + bytes(8)
h += struct.pack("<HHIIIIIHHHHHH", 2, 3, 1, 0, 0, 0, 0, 52, 32, 0, 40, 0, 0)
open(sys.argv[1], "wb").write(h)
PY
expect_status 2 "$CACHEADVISE" inspect "$TMP/elf32"
expect_grep "is a 32-bit ELF file" "$TMP/err"
expect_no_grep "nv_fatbin" "$TMP/err"

# plan.json that is a directory is called one, not "missing"
cp -r "$capture" "$TMP/c"
rm "$TMP/c/plan.json"
mkdir "$TMP/c/plan.json"
expect_status 2 "$CACHEADVISE" report "$TMP/c"
expect_grep "plan.json': it is a directory" "$TMP/err"
expect_no_grep "missing" "$TMP/err"

finish
