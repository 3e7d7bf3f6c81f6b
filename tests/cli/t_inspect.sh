#!/usr/bin/env bash
# cacheadvise inspect on the nvcc-built fixtures (tests/fixtures/intake):
# the table, the inspect JSON (checked with python3), --arch and -o.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"
FIX="$CA_SOURCE_DIR/tests/fixtures/intake"
MIX=_Z3mixPKfS0_PKiPfii

expect_status 0 "$CACHEADVISE" inspect --help
expect_grep '^usage: cacheadvise inspect' "$TMP/out"
expect_grep '^EXAMPLES' "$TMP/out"
expect_status 1 "$CACHEADVISE" inspect
expect_grep 'no FILE given' "$TMP/err"
expect_status 1 "$CACHEADVISE" inspect --bogus "$FIX/app"
expect_grep "option '--bogus' is unknown" "$TMP/err"
expect_status 1 "$CACHEADVISE" inspect --arch
expect_status 1 "$CACHEADVISE" inspect --arch banana "$FIX/app"
expect_grep "not an arch" "$TMP/err"
expect_status 1 "$CACHEADVISE" inspect "$FIX/app" "$FIX/app"

# Every fixture is read.
for f in app app_rdc libother.so kernels.obj kernels.cubin kernels.ptx kernels_noline.ptx \
	 multi.fatbin cubin_only.fatbin uncompressed.fatbin lz4.fatbin compressed_cubin.fatbin; do
	expect_status 0 "$CACHEADVISE" inspect "$FIX/$f"
	expect_status 0 "$CACHEADVISE" inspect --json "$FIX/$f"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="cacheadvise.inspect/1"; assert d["modules"]' \
		"$TMP/out" && ok || not_ok "inspect --json $f is not inspect JSON"
done

# The table.
expect_status 0 "$CACHEADVISE" inspect "$FIX/app"
expect_grep '^.*app: 4 modules \(3 with PTX\), 4 kernels, 17 global loads$' "$TMP/out"
expect_grep '^module [0-9a-f]{16}  app#fatbin2  sm_90  source kernels.cu$' "$TMP/out"
expect_grep "^  kernel $MIX  \(PTX line [0-9]+; 8 global loads, 1 store, 0 atomics\)" "$TMP/out"
expect_grep '^    params: 0 .u64, 1 .u64, 2 .u64, 3 .u64, 4 .u32, 5 .u32$' "$TMP/out"
expect_grep ' ld.global.nc.u32 +global +default +yes +32 +2 +yes +kernels.cu:12 +yes$' "$TMP/out"
expect_grep ' ldu.global.f32 .* no: ' "$TMP/out"
expect_grep ' ld.global.cg.f32 .* no: ' "$TMP/out"
expect_grep 'no PTX and no kernels: nothing to patch' "$TMP/out"

expect_status 0 "$CACHEADVISE" inspect "$FIX/cubin_only.fatbin"
expect_grep 'no PTX: cannot patch; rebuild with -gencode arch=compute_90,code=\[sm_90,compute_90\] \(or nvcc -arch=sm_90, which embeds PTX\)' "$TMP/out"
expect_grep "kernel $MIX  \(in the cubin only\)" "$TMP/out"
expect_status 0 "$CACHEADVISE" inspect "$FIX/app_rdc"
expect_grep 'no PTX: the program links its device code at build time \(-rdc=true\)' "$TMP/out"

# The JSON, field by field.
expect_status 0 "$CACHEADVISE" inspect --json "$FIX/app"
cp "$TMP/out" "$TMP/app.json"
python3 - "$TMP/app.json" <<'PY' && ok || not_ok "inspect --json app: content"
import json, re, sys
d = json.load(open(sys.argv[1]))
mods = d["modules"]
assert len(mods) == 4, len(mods)
assert [m["origin"] for m in mods] == ["app#fatbin%d" % i for i in range(4)]
assert [m["has_ptx"] for m in mods] == [False, True, True, True]
for m in mods:
    assert re.fullmatch(r"[0-9a-f]{16}", m["id"]), m["id"]
    assert m["arch"] == "sm_90"
k = mods[2]
assert k["source"] == "kernels.cu" and k["ptx_version"] == "9.0"
assert k["ptx_archs"] == ["compute_90"] and k["cubin_archs"] == ["sm_90"]
fn = {f["name"]: f for f in k["functions"]}
want = {"_Z3mixPKfS0_PKiPfii": 8, "_Z5scalePffi": 1, "_Z6strongPVfPKfS2_Pf": 4, "_Z4pickPKfi": 2}
assert {n: len(f["loads"]) for n, f in fn.items()} == want, {n: len(f["loads"]) for n, f in fn.items()}
assert fn["_Z4pickPKfi"]["kind"] == "func" and fn["_Z3mixPKfS0_PKiPfii"]["kind"] == "entry"
mix = fn["_Z3mixPKfS0_PKiPfii"]
assert mix["stores"] == 1 and mix["atomics"] == 0 and len(mix["params"]) == 6
assert fn["_Z6strongPVfPKfS2_Pf"]["atomics"] == 1
for i, l in enumerate(mix["loads"]):
    assert l["ordinal"] == i
    assert l["file"].endswith("kernels.cu") and isinstance(l["line"], int), l
    assert l["space"] == "global" and l["patchable"] is True and l["unpatchable_reason"] is None
l0 = mix["loads"][0]
assert (l0["instruction"], l0["nc"], l0["param"], l0["read_only"], l0["vector"], l0["bits"], l0["line"]) == \
       ("ld.global.nc.u32", True, 2, True, 1, 32, 12), l0
assert fn["_Z5scalePffi"]["loads"][0]["read_only"] is False
st = fn["_Z6strongPVfPKfS2_Pf"]["loads"]
assert [l["patchable"] for l in st] == [False, False, True, False]
assert all(l["unpatchable_reason"] for l in st if not l["patchable"])
assert st[1]["ldu"] is True and st[3]["cache_op"] == "cg" and st[0]["strong"] is True
assert all(l["space"] == "generic" for l in fn["_Z4pickPKfi"]["loads"])
assert mods[0]["no_ptx_reason"] and mods[0]["functions"] == []
PY

# The same PTX has the same id in every container: kernels.obj and app were
# compiled with the same flags.
expect_status 0 "$CACHEADVISE" inspect --json "$FIX/kernels.obj"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["modules"][2]["id"]; b=json.load(open(sys.argv[2]))["modules"][0]["id"]; assert a==b, (a,b)' \
	"$TMP/app.json" "$TMP/out" && ok || not_ok "kernels.obj and app#fatbin2 ids differ"
# A .ptx file's id is the SHA-256 of its text.
expect_status 0 "$CACHEADVISE" inspect --json "$FIX/kernels.ptx"
python3 -c 'import hashlib,json,sys; d=json.load(open(sys.argv[1])); h=hashlib.sha256(open(sys.argv[2],"rb").read()).hexdigest()[:16]; assert d["modules"][0]["id"]==h and d["modules"][0]["origin"]=="kernels.ptx"' \
	"$TMP/out" "$FIX/kernels.ptx" && ok || not_ok "kernels.ptx id"
expect_status 0 "$CACHEADVISE" inspect --json "$FIX/kernels_noline.ptx"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); ls=[l for f in d["modules"][0]["functions"] for l in f["loads"]]; assert len(ls)==15 and all(l["file"] is None and l["line"] is None for l in ls)' \
	"$TMP/out" && ok || not_ok "kernels_noline.ptx: file/line must be null"

# --arch picks among the PTX of several archs.
for a in 0:sm_90:True 90:sm_90:True sm_86:sm_80:True compute_80:sm_80:True 75:x:False; do
	arch=${a%%:*}; rest=${a#*:}; want=${rest%%:*}; has=${rest#*:}
	if [ "$arch" = 0 ]; then expect_status 0 "$CACHEADVISE" inspect --json "$FIX/multi.fatbin"
	else expect_status 0 "$CACHEADVISE" inspect --json --arch "$arch" "$FIX/multi.fatbin"; fi
	python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["modules"][0]; assert str(m["has_ptx"])==sys.argv[3], m; assert m["has_ptx"] is False or m["arch"]==sys.argv[2], m; assert m["ptx_archs"]==["compute_80","compute_90"]' \
		"$TMP/out" "$want" "$has" && ok || not_ok "--arch $arch on multi.fatbin"
done
expect_status 0 "$CACHEADVISE" inspect --arch 75 "$FIX/multi.fatbin"
expect_grep 'no PTX for sm_75 or older' "$TMP/out"

# -o writes the same bytes atomically; options may follow FILE.
expect_status 0 "$CACHEADVISE" inspect "$FIX/app" --json -o "$TMP/o.json"
[ ! -s "$TMP/out" ] && ok || not_ok "-o must leave stdout empty"
cmp -s "$TMP/o.json" "$TMP/app.json" && ok || not_ok "-o output differs from stdout output"
ls "$TMP"/o.json.tmp.* >/dev/null 2>&1 && not_ok "temporary file left behind" || ok
finish
