#!/usr/bin/env bash
# cacheadvise inspect on bad input: exit 2, a message naming the file and
# what is wrong, nothing on stdout and no output file.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"
FIX="$CA_SOURCE_DIR/tests/fixtures/intake"

# expect_bad FILE PATTERN: inspect (text, --json and -o) exits 2 with PATTERN
expect_bad() {
	local file=$1 pattern=$2
	expect_status 2 "$CACHEADVISE" inspect "$file"
	expect_grep "^cacheadvise inspect: .*$pattern" "$TMP/err"
	[ ! -s "$TMP/out" ] && ok || not_ok "inspect $file wrote to stdout"
	expect_status 2 "$CACHEADVISE" inspect --json -o "$TMP/never.json" "$file"
	expect_grep "$pattern" "$TMP/err"
	[ ! -s "$TMP/out" ] && ok || not_ok "inspect --json $file wrote to stdout"
	if ls "$TMP"/never.json* >/dev/null 2>&1; then not_ok "output file left for $file"; else ok; fi
}

expect_bad "$TMP/missing" "cannot open '$TMP/missing': No such file or directory"
mkdir "$TMP/dir"
expect_bad "$TMP/dir" "cannot read '$TMP/dir': it is a directory"
: >"$TMP/empty"
expect_bad "$TMP/empty" "'$TMP/empty' is empty"
printf 'hello\nworld\n' >"$TMP/notes.txt"
expect_bad "$TMP/notes.txt" "'$TMP/notes.txt' is not an ELF file, a fatbin or PTX text"
head -c 4096 /dev/urandom | tr -d '\177' >"$TMP/random.bin"
expect_bad "$TMP/random.bin" "is not an ELF file, a fatbin or PTX text"
# An ELF without CUDA code: the tool itself.
cp "$CACHEADVISE" "$TMP/host-only"
expect_bad "$TMP/host-only" "'$TMP/host-only' has no .nv_fatbin section: it contains no CUDA device code"

# Truncated files.
head -c 20000 "$FIX/app" >"$TMP/app-cut"
expect_bad "$TMP/app-cut" "cannot read ELF file '$TMP/app-cut': it is truncated"
head -c 3000 "$FIX/multi.fatbin" >"$TMP/cut.fatbin"
expect_bad "$TMP/cut.fatbin" "cannot read fatbin in '$TMP/cut.fatbin' \(fatbin 0\): its size \(23376 bytes\) runs past the end"

# Corrupt copies made here: entry 1 of the third fatbin in .nv_fatbin claims
# a payload past the end; a flipped magic; a zstd frame claiming 1 TiB.
python3 - "$FIX" "$TMP" <<'PY'
import struct, sys
fix, tmp = sys.argv[1], sys.argv[2]
app = bytearray(open(fix + "/app", "rb").read())
starts = [o for o in range(0, len(app) - 4, 8) if app[o:o + 4] == b"\x50\xed\x55\xba"]
f = starts[2]
e1 = f + 16 + struct.unpack_from("<I", app, f + 16 + 4)[0] + struct.unpack_from("<Q", app, f + 16 + 8)[0]
struct.pack_into("<Q", app, e1 + 8, 1 << 30)
open(tmp + "/app-bad-entry", "wb").write(app)

fb = bytearray(open(fix + "/uncompressed.fatbin", "rb").read())
fb[0] ^= 0xff
open(tmp + "/bad-magic.fatbin", "wb").write(fb)

fb = bytearray(open(fix + "/compressed_cubin.fatbin", "rb").read())
e1 = 16 + struct.unpack_from("<I", fb, 16 + 4)[0] + struct.unpack_from("<Q", fb, 16 + 8)[0]
p = e1 + struct.unpack_from("<I", fb, e1 + 4)[0]
assert fb[p:p + 4] == b"\x28\xb5\x2f\xfd"
# frame header: 8-byte content size 2^40, single segment; one empty last raw block
bomb = b"\x28\xb5\x2f\xfd\xe0" + struct.pack("<Q", 1 << 40) + b"\x01\x00\x00"
fb[p:p + len(bomb)] = bomb
struct.pack_into("<I", fb, e1 + 0x10, len(bomb))
struct.pack_into("<Q", fb, e1 + 0x38, 0)
open(tmp + "/bomb.fatbin", "wb").write(fb)
PY
expect_bad "$TMP/app-bad-entry" "cannot read fatbin in '$TMP/app-bad-entry' \(section .nv_fatbin, fatbin 2\): entry 1 payload runs past the end"
expect_bad "$TMP/bad-magic.fatbin" "is not an ELF file, a fatbin or PTX text"
expect_bad "$TMP/bomb.fatbin" "\(fatbin 0\): entry 1: zstd data claims 1099511627776 bytes decompressed from 16 bytes"

# Malformed PTX: a function body that never closes.
sed '$d' "$FIX/kernels.ptx" | sed '$d' | grep -v '^}$' >"$TMP/broken.ptx"
expect_bad "$TMP/broken.ptx" "broken.ptx"
finish
