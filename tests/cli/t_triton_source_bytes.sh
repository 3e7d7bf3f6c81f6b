#!/usr/bin/env bash
# The Triton rewrite takes valid Python as Python does (issue 36 item 12):
# a UTF-8 BOM, a PEP 263 latin-1 file, CR or CRLF line ends. kernels.py of
# tests/fixtures/triton is written each way (same lines and columns), a
# capture of its kernels with a plan of Triton forms gets a source.patch
# that `apply` applies, and the result is the same Python in the file's
# own encoding, BOM and line ends, every other byte as it was. A file
# nested too deeply for Python's parser, or not decodable, is refused with
# a reason of one line, never a traceback. Needs python3.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
FIX="$CA_SOURCE_DIR/tests/fixtures/triton"

# a capture of the rownorm and gather kernels (as t_triton_source.sh)
mkdir -p "$TMP/cap/modules"
python3 - "$CACHEADVISE" "$FIX" "$TMP/cap" <<'PY'
import glob, json, subprocess, sys
tool, fix, cap = sys.argv[1:4]
mods, kernels, plan = [], [], {"schema": "cacheadvise.plan/1", "modules": []}
want = {17: "L1::evict_last+L2::evict_last", 27: "L1::evict_first+L2::evict_first",
        36: "L1::evict_first+L2::evict_first"}
for name in ("rownorm_kernel", "gather_kernel"):
    ptx = glob.glob(fix + "/cache/*/%s.ptx" % name)[0]
    m = json.loads(subprocess.check_output([tool, "inspect", "--json", ptx]))["modules"][0]
    open("%s/modules/%s.ptx" % (cap, m["id"]), "w").write(open(ptx).read())
    mods.append({"id": m["id"], "origin": "cuModuleLoad#%d" % len(mods), "arch": "sm_90",
                 "has_ptx": True, "ptx": "modules/%s.ptx" % m["id"]})
    f = m["functions"][0]
    loads = [{"ordinal": l["ordinal"], "instruction": l["instruction"], "file": l["file"],
              "line": l["line"], "param": l["param"], "read_only": l["read_only"],
              "patchable": l["patchable"], "measured": l["patchable"], "access": 1000,
              "hit": 100 if l["patchable"] else None} for l in f["loads"]]
    kernels.append({"module": m["id"], "name": f["name"], "launches": 10, "loads": loads,
                    "pairs": []})
    plan["modules"].append({"id": m["id"], "functions": [{"name": f["name"], "loads": [
        {"ordinal": l["ordinal"], "action": want[l["line"]]} for l in f["loads"]
        if l["patchable"] and l["line"] in want and (l["line"] != 36 or l["column"] == 71)]}]})
json.dump({"schema": "cacheadvise.capture/1", "status": "complete",
           "program": {"path": "python3", "args": ["prog.py"], "cwd": "/tmp"},
           "device": {"schema": "cacheadvise.device/1", "name": "NVIDIA H100 80GB HBM3", "cc": "9.0"},
           "modules": mods, "kernels": kernels, "runs": []}, open(cap + "/capture.json", "w"))
json.dump(plan, open(cap + "/plan.json", "w"))
PY

# kernels.py written one way: same Python lines and columns; a comment of
# non-ASCII text after a rewritten call checks the bytes after the edit
variant() {
	python3 - "$FIX/kernels.py" "$1" "$2" <<'PY'
import sys
src, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(src, encoding="utf-8").read().split("\n")
lines[16] += "  # caf\u00e9"
lines[35] += "  # na\u00efve"
if kind == "latin1":
    lines[0:4] = ["# -*- coding: latin-1 -*-", '"""Triton kernels, caf\u00e9 (a latin-1 file)',
                  "with the same lines and columns as kernels.py.", '"""']
text = "\n".join(lines)
data = {"bom": lambda: b"\xef\xbb\xbf" + text.encode("utf-8"),
        "latin1": lambda: text.encode("latin-1"),
        "cr": lambda: text.replace("\n", "\r").encode("utf-8"),
        "crlf": lambda: text.replace("\n", "\r\n").encode("utf-8"),
        "deep": lambda: (text + "deep = 1" + " + 1" * 20000 + "\n").encode("utf-8"),
        "badcookie": lambda: ("# coding: no-such-codec\n" + text).encode("utf-8")}[kind]()
open(out, "wb").write(data)
PY
}

# the calls' keywords as Python reads the file (its own encoding)
keywords() {
	python3 - "$1" <<'PY'
import ast, io, sys, tokenize
raw = open(sys.argv[1], "rb").read()
enc, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
t = ast.parse(raw.decode(enc))
for n in ast.walk(t):
    if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "load":
        kw = {k.arg: k.value.value for k in n.keywords if k.arg in ("eviction_policy", "cache_modifier")}
        print(n.lineno, n.func.end_col_offset + 1, sorted(kw.items()))
PY
}

for kind in bom latin1 cr crlf; do
	rm -rf "$TMP/src" "$TMP/cap/source.patch" "$TMP/cap/sources.json"
	mkdir -p "$TMP/src"
	variant $kind "$TMP/src/kernels.py"
	cp "$TMP/src/kernels.py" "$TMP/before.py"
	expect_status 0 "$CACHEADVISE" report "$TMP/cap" --all --source-root "$TMP/src"
	"$CACHEADVISE" report "$TMP/cap" --source-root "$TMP/src" >"$TMP/report.txt" 2>&1
	expect_no_grep "not rewritten|bad input|does not parse|invalid non-printable" "$TMP/report.txt"
	expect_grep '^--- a/kernels.py' "$TMP/cap/source.patch"
	expect_status 0 "$CACHEADVISE" apply "$TMP/cap" --source-root "$TMP/src"
	keywords "$TMP/src/kernels.py" >"$TMP/kw" 2>&1
	expect_line "17 20 [('eviction_policy', 'evict_last')]" "$TMP/kw"
	expect_line "25 20 [('eviction_policy', 'evict_first')]" "$TMP/kw"
	expect_line "27 20 [('eviction_policy', 'evict_first')]" "$TMP/kw"
	expect_line "36 71 [('eviction_policy', 'evict_first')]" "$TMP/kw"
	expect_line "36 16 [('cache_modifier', '.cg')]" "$TMP/kw"
	# the file's own bytes: only the arguments changed
	python3 - "$TMP/before.py" "$TMP/src/kernels.py" $kind <<'PY' && ok || not_ok "$kind: bytes of the file changed beyond the arguments"
import sys
a, b, kind = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), sys.argv[3]
add = [b', eviction_policy="evict_last"', b', eviction_policy="evict_first"']
assert b.replace(add[0], b"").replace(add[1], b"") == a, (a[:200], b[:200])
assert b.count(add[0]) == 1 and b.count(add[1]) == 2, b.count(add[1])
assert (kind == "bom") == b.startswith(b"\xef\xbb\xbf")
assert (kind == "latin1") == (b"caf\xe9" in b)
assert (kind == "cr") == (b"\n" not in b)
assert (kind == "crlf") == (b.count(b"\r\n") == b.count(b"\n") == a.count(b"\n") > 0)
PY
done

# refused with a reason of one line: nested too deeply, not decodable
for kind in deep badcookie; do
	rm -rf "$TMP/src" "$TMP/cap/source.patch" "$TMP/cap/sources.json"
	mkdir -p "$TMP/src"
	variant $kind "$TMP/src/kernels.py"
	"$CACHEADVISE" report "$TMP/cap" --source-root "$TMP/src" >"$TMP/report-$kind.txt" 2>&1
	expect_no_grep 'Traceback|File "|\^\^\^' "$TMP/report-$kind.txt"
done
expect_grep "not rewritten: tl_load_rewrite: the source does not parse: it is nested too deeply for Python's parser" "$TMP/report-deep.txt"
expect_grep "not rewritten: tl_load_rewrite: the source cannot be decoded: unknown encoding: no-such-codec" "$TMP/report-badcookie.txt"

# the helper on its own: bytes in, bytes out, lines as the diff counts them
python3 - "$CA_SOURCE_DIR/emitters/rewrite/tl_load_rewrite.py" <<'PY' && ok || not_ok "the helper on bytes"
import json, subprocess, sys
def ask(raw, line, col, expect_status=0):
    req = {"source_bytes": raw.decode("latin-1"),
           "edits": [{"line": line, "column": col, "set": {"eviction_policy": "evict_last"}}]}
    p = subprocess.run([sys.executable, sys.argv[1]], input=json.dumps(req).encode(),
                       capture_output=True)
    assert p.returncode == expect_status, (p.returncode, p.stderr)
    return json.loads(p.stdout)["edits"][0] if p.returncode == 0 else p.stderr.decode()
# CR line ends: one diff line; the text keeps the CRs
e = ask(b"import triton.language as tl\rdef f(X):\r    a = tl.load(X)\r", 3, 16)
assert e["status"] == "rewritten" and e["first"] == e["last"] == 1, e
assert e["text_bytes"].encode("latin-1") == \
    b'import triton.language as tl\rdef f(X):\r    a = tl.load(X, eviction_policy="evict_last")\r', e
# latin-1: the byte stays one byte, after the edit on the same line
e = ask(b"# -*- coding: latin-1 -*-\nimport triton.language as tl\n"
        b"a = tl.load(X)  # caf\xe9\n", 3, 12)
assert e["text_bytes"].encode("latin-1") == b'a = tl.load(X, eviction_policy="evict_last")  # caf\xe9', e
# a UTF-8 BOM stays on line 1
e = ask(b"\xef\xbb\xbfa = tl.load(X)\n", 1, 12)
assert e["first"] == 1 and e["text_bytes"].encode("latin-1") == \
    b'\xef\xbb\xbfa = tl.load(X, eviction_policy="evict_last")', e
# a non-ASCII character before the call: columns are Python's
e = ask("s = 'é'; a = tl.load(X)\n".encode("utf-8"), 1, 22)
assert e["text_bytes"].encode("latin-1") == "s = 'é'; a = tl.load(X, eviction_policy=\"evict_last\")".encode("utf-8"), e
# reasons of one line
why = ask(b"x = 1" + b" + 1" * 20000 + b"\n", 1, 1, 2)
assert why == "tl_load_rewrite: the source does not parse: it is nested too deeply for Python's parser\n", why
why = ask(b"x = (\n", 1, 1, 2)
assert why.startswith("tl_load_rewrite: the source does not parse: line 1: ") and why.count("\n") == 1, why
why = ask(b"\xef\xbb\xbf# coding: latin-1\n", 1, 1, 2)
assert why.startswith("tl_load_rewrite: the source cannot be decoded: ") and why.count("\n") == 1, why
why = ask(b"x = '\xff'\n", 1, 1, 2)
assert why.startswith("tl_load_rewrite: the source cannot be decoded: ") and why.count("\n") == 1, why
PY
finish
