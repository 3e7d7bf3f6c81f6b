#!/usr/bin/env bash
# Triton kernels' advice in their Python source (issue 27), on the PTX Triton
# 3.6 compiled offline (tests/fixtures/triton): the PTX loads carry the
# tl.load's line and column; a capture made of that PTX with a plan of
# Triton forms gets a source.patch that rewrites the tl.load calls'
# keyword arguments (by Python's ast, through emitters/rewrite/tl_load_rewrite.py),
# which `apply` applies and Python still parses; forms Triton cannot write
# are named as such. The helper itself is checked on calls that span lines,
# already have the argument, or share a line. Needs python3.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
FIX="$CA_SOURCE_DIR/tests/fixtures/triton"

# the loads' columns: one per tl.load of a line
"$CACHEADVISE" inspect --json "$FIX"/cache/*/gather_kernel.ptx >"$TMP/g.json"
python3 - "$TMP/g.json" >"$TMP/cols" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(sorted({(l["line"], l["column"]) for l in d["modules"][0]["functions"][0]["loads"]}))
PY
expect_line '[(36, 16), (36, 71), (37, 16)]' "$TMP/cols"

# a capture of the rownorm and gather kernels: loads as inspect sees them
mkdir -p "$TMP/cap/modules" "$TMP/src"
cp "$FIX/kernels.py" "$TMP/src/kernels.py"
python3 - "$CACHEADVISE" "$FIX" "$TMP/cap" <<'PY'
import glob, json, subprocess, sys
tool, fix, cap = sys.argv[1:4]
mods, kernels = [], []
for name in ("rownorm_kernel", "gather_kernel"):
    ptx = glob.glob(fix + "/cache/*/%s.ptx" % name)[0]
    d = json.loads(subprocess.check_output([tool, "inspect", "--json", ptx]))
    m = d["modules"][0]
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
json.dump({"schema": "cacheadvise.capture/1", "status": "complete",
           "program": {"path": "python3", "args": ["prog.py"], "cwd": "/tmp"},
           "device": {"schema": "cacheadvise.device/1", "name": "NVIDIA H100 80GB HBM3", "cc": "9.0"},
           "modules": mods, "kernels": kernels, "runs": []}, open(cap + "/capture.json", "w"), indent=1)
# the plan: by line (and column) of kernels.py
want = {(17, None): "L1::evict_last+L2::evict_last",     # pass 1 of rownorm
        (27, None): "L1::evict_first+L2::evict_first",   # w of rownorm
        (36, 71): "L1::evict_first+L2::evict_first",     # s, the second tl.load of line 36
        (37, None): "L1::no_allocate"}                   # no Triton form
plan = {"schema": "cacheadvise.plan/1", "modules": []}
for m, k in zip(mods, kernels):
    out = []
    for l in k["loads"]:
        for (line, col), a in want.items():
            if l["line"] == line and l["patchable"]:
                cols = json.loads(subprocess.check_output([tool, "inspect", "--json",
                                  cap + "/" + m["ptx"]]))["modules"][0]["functions"][0]["loads"]
                if col is None or cols[l["ordinal"]]["column"] == col:
                    out.append({"ordinal": l["ordinal"], "action": a})
    plan["modules"].append({"id": m["id"], "functions": [{"name": k["name"], "loads": out}]})
json.dump(plan, open(cap + "/plan.json", "w"), indent=1)
PY
expect_status 0 "$CACHEADVISE" report "$TMP/cap" --all --source-root "$TMP/src"
patch="$TMP/cap/source.patch"
expect_grep '^--- a/kernels.py' "$patch"
expect_line '+        x = tl.load(X + row * N + cols, mask=cols < N, other=0.0, eviction_policy="evict_last")' "$patch"
expect_line '+        w = tl.load(W + cols, mask=cols < N, eviction_policy="evict_first")' "$patch"
expect_line '+    i = tl.load(Idx + offs, mask=m, cache_modifier=".cg"); s = tl.load(S + offs, mask=m, eviction_policy="evict_first")' "$patch"
# line 37's form has no Triton spelling: not in the patch, and the report says why
expect_no_grep '^\+    t = tl.load' "$patch"
"$CACHEADVISE" report "$TMP/cap" --source-root "$TMP/src" >"$TMP/report.txt" 2>&1
expect_grep "has no Triton form" "$TMP/report.txt"
expect_grep 'the tl.load at kernels.py:17:20' "$TMP/report.txt"
# apply, and the result is Python whose calls carry the arguments
expect_status 0 "$CACHEADVISE" apply "$TMP/cap" --source-root "$TMP/src"
python3 - "$TMP/src/kernels.py" >"$TMP/kw" <<'PY'
import ast, sys
t = ast.parse(open(sys.argv[1]).read())
for n in ast.walk(t):
    if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "load":
        kw = {k.arg: k.value.value for k in n.keywords if k.arg in ("eviction_policy", "cache_modifier")}
        print(n.lineno, n.func.end_col_offset + 1, sorted(kw.items()))
PY
expect_line "17 20 [('eviction_policy', 'evict_last')]" "$TMP/kw"
expect_line "25 20 [('eviction_policy', 'evict_first')]" "$TMP/kw"
expect_line "27 20 [('eviction_policy', 'evict_first')]" "$TMP/kw"
expect_line "36 71 [('eviction_policy', 'evict_first')]" "$TMP/kw"
expect_line "36 16 [('cache_modifier', '.cg')]" "$TMP/kw"
expect_line "37 16 []" "$TMP/kw"

# check: the rerun program's Triton kernels (the one compile of each in
# Triton's cache: tests/fixtures/triton/rebuilt, compiled offline from the
# patched kernels.py) carry the advised forms, each traced to its createpolicy
TRITON_CACHE_DIR="$FIX/rebuilt/cache" "$CACHEADVISE" check "$TMP/cap" --static \
	--source-root "$FIX/rebuilt" -- python3 prog.py >"$TMP/check.out" 2>&1
rc=$?
[ "$rc" = 0 ] && ok || not_ok "check --static exited $rc: $(tail -5 "$TMP/check.out")"
expect_grep 'rownorm_kernel +load 0 +L1::evict_last\+L2::evict_last +found' "$TMP/check.out"
expect_grep 'rownorm_kernel +load 23 +L1::evict_first\+L2::evict_first +found' "$TMP/check.out"
expect_grep 'gather_kernel +load 8 +L1::evict_first\+L2::evict_first +found' "$TMP/check.out"
# the original kernels (the cache before the patch) do not: a wrong form, exit 2
TRITON_CACHE_DIR="$FIX/cache" "$CACHEADVISE" check "$TMP/cap" --static \
	--source-root "$FIX/rebuilt" -- python3 prog.py >"$TMP/check0.out" 2>&1
rc=$?
[ "$rc" = 2 ] && ok || not_ok "check --static of the unpatched kernels exited $rc, want 2"
expect_grep 'rownorm_kernel +load 0 +L1::evict_last\+L2::evict_last +wrong form' "$TMP/check0.out"
# the rerun in the same environment (issue 35): Triton's cache holds the
# original compiles beside the patched ones, the originals written last.
# The compile read is the one with the advised forms (by identity, not by
# time), and the output names it
stale="$TMP/stale-cache"
mkdir -p "$stale"
cp -r "$FIX"/rebuilt/cache/* "$stale/"
touch -d '2020-01-01 00:00' "$stale"/*/*
cp -r "$FIX"/cache/* "$stale/"
patched=$(ls "$FIX"/rebuilt/cache/*/rownorm_kernel.cubin)
patched="$stale/$(basename "$(dirname "$patched")")/rownorm_kernel.cubin"
TRITON_CACHE_DIR="$stale" "$CACHEADVISE" check "$TMP/cap" --static \
	--source-root "$FIX/rebuilt" -- python3 prog.py >"$TMP/check1.out" 2>&1
rc=$?
[ "$rc" = 0 ] && ok || not_ok "check --static beside the original compiles exited $rc: $(tail -5 "$TMP/check1.out")"
expect_line "  rownorm_kernel: reading '$patched', the one of its 2 compiles in Triton's cache that carries the advised forms" "$TMP/check1.out"
expect_grep 'rownorm_kernel +load 0 +L1::evict_last\+L2::evict_last +found' "$TMP/check1.out"
expect_grep 'gather_kernel +load 8 +L1::evict_first\+L2::evict_first +found' "$TMP/check1.out"
# the timed check would run the program once to see the compile it loads;
# without a GPU it chooses by the forms too, then exits 4
if ! nvidia-smi -L >/dev/null 2>&1; then
	TRITON_CACHE_DIR="$stale" expect_status 4 "$CACHEADVISE" check "$TMP/cap" \
		--source-root "$FIX/rebuilt" --baseline 'python3 orig.py' -- python3 prog.py
	expect_line "  rownorm_kernel: reading '$patched', the one of its 2 compiles in Triton's cache that carries the advised forms" "$TMP/out"
	expect_grep 'the static check above passed; timing the rebuilt program needs a GPU' "$TMP/err"
fi
# two compiles and neither carries the forms: which one the program loads
# cannot be told, and the output says so, naming both and the way out
amb="$TMP/ambiguous-cache"
mkdir -p "$amb/a" "$amb/b"
cp "$FIX"/cache/*/rownorm_kernel.* "$amb/a/"
cp "$FIX"/cache/*/rownorm_kernel.* "$amb/b/"
TRITON_CACHE_DIR="$amb" "$CACHEADVISE" check "$TMP/cap" --static \
	--source-root "$FIX/rebuilt" -- python3 prog.py >"$TMP/check2.out" 2>&1
rc=$?
[ "$rc" = 2 ] && ok || not_ok "check --static of two unpatched compiles exited $rc, want 2"
expect_grep "rownorm_kernel: cannot tell which of its 2 compiles in Triton's cache the rebuilt program loads" "$TMP/check2.out"
expect_grep "'$amb/a/rownorm_kernel.cubin'" "$TMP/check2.out"
expect_grep "'$amb/b/rownorm_kernel.cubin'" "$TMP/check2.out"
expect_grep 'TRITON_CACHE_DIR set to an empty folder' "$TMP/check2.out"

# a kernel torch.compile generated: its source lies in Inductor's cache, so
# it is not rewritten, and the report names where it came from (Inductor's
# output code, whose comments are shown as written)
ind="$TMP/torchinductor_root"
mkdir -p "$ind/ab" "$ind/xy" "$TMP/cap2/modules"
cp "$FIX/kernels.py" "$ind/ab/cabc123.py"
{
	echo "# AOT ID: ['0_inference']"
	echo "# kernel path: $ind/ab/cabc123.py"
	echo "# Topologically Sorted Source Nodes: [gather, add], Original ATen: [aten.index, aten.add]"
	echo "# Source node to ATen node mapping:"
	echo "#   add => add"
	echo "triton_poi_fused_add_index_0 = async_compile.triton('gather_kernel', '...')"
} >"$ind/xy/cxyz456.py"
python3 - "$CACHEADVISE" "$TMP/cap" "$TMP/cap2" "$ind/ab/cabc123.py" <<'PY'
import json, re, subprocess, sys
tool, cap, cap2, kfile = sys.argv[1:5]
doc = json.load(open(cap + "/capture.json"))
k = [k for k in doc["kernels"] if k["name"] == "gather_kernel"][0]
m = [m for m in doc["modules"] if m["id"] == k["module"]][0]
text = open(cap + "/" + m["ptx"]).read()
text = re.sub(r'\.file\s+1 "[^"]*"', '.file 1 "%s"' % kfile, text, count=1)
open(cap2 + "/k.ptx", "w").write(text)
mid = json.loads(subprocess.check_output([tool, "inspect", "--json", cap2 + "/k.ptx"]))["modules"][0]["id"]
open("%s/modules/%s.ptx" % (cap2, mid), "w").write(text)
k["module"] = mid
for l in k["loads"]:
    l["file"] = kfile
doc["modules"] = [dict(m, id=mid, ptx="modules/%s.ptx" % mid)]
doc["kernels"] = [k]
json.dump(doc, open(cap2 + "/capture.json", "w"))
plan = json.load(open(cap + "/plan.json"))
plan["modules"] = [dict(pm, id=mid) for pm in plan["modules"]
                   if any(f["name"] == "gather_kernel" for f in pm["functions"])]
json.dump(plan, open(cap2 + "/plan.json", "w"))
PY
expect_status 0 "$CACHEADVISE" report "$TMP/cap2"
expect_grep "generated by torch.compile \(Inductor\): $ind/ab/cabc123\.py" "$TMP/out"
expect_line "    Topologically Sorted Source Nodes: [gather, add], Original ATen: [aten.index, aten.add]" "$TMP/out"
expect_line "      add => add" "$TMP/out"
expect_grep 'not rewritten: torch.compile generated this kernel' "$TMP/out"
expect_status 0 "$CACHEADVISE" report "$TMP/cap2" --all
if [ -s "$TMP/cap2/source.patch" ]; then not_ok "source.patch rewrites a generated kernel: $(head -5 "$TMP/cap2/source.patch")"; else ok; fi

# the PTX loads of one tl.load are one decision: with the loads' columns in
# the capture, the analysis decides per call, and the reports say so
mkdir -p "$TMP/cap3"
cp -r "$TMP/cap/modules" "$TMP/cap3/"
python3 - "$CACHEADVISE" "$TMP/cap" "$TMP/cap3" >"$TMP/sites.want" <<'PY'
import json, subprocess, sys
tool, cap, cap3 = sys.argv[1:4]
doc = json.load(open(cap + "/capture.json"))
for k in doc["kernels"]:
    m = [m for m in doc["modules"] if m["id"] == k["module"]][0]
    cols = json.loads(subprocess.check_output([tool, "inspect", "--json",
                      cap + "/" + m["ptx"]]))["modules"][0]["functions"][0]["loads"]
    for l in k["loads"]:
        l["column"] = cols[l["ordinal"]]["column"]
    nodes = [l for l in k["loads"] if l["patchable"] and l["hit"] is not None]
    calls = {(l["line"], l["column"]) for l in nodes}
    print(k["name"], len(nodes), len(calls))
json.dump(doc, open(cap3 + "/capture.json", "w"))
PY
"$CACHEADVISE" report "$TMP/cap3" --format json -o "$TMP/cap3.json" 2>"$TMP/err" && ok ||
	not_ok "report --format json of the capture with columns: $(head -c 300 "$TMP/err")"
python3 - "$TMP/cap3.json" >"$TMP/sites.got" <<'PY'
import json, sys
for k in json.load(open(sys.argv[1]))["kernels"]:
    s = k.get("sites") or {"loads": 0, "calls": 0}
    print(k["name"], s["loads"], s["calls"])
PY
if cmp -s "$TMP/sites.want" "$TMP/sites.got"; then ok; else
	not_ok "sites: want $(cat "$TMP/sites.want" | tr '\n' ';') got $(cat "$TMP/sites.got" | tr '\n' ';')"; fi
# every kernel has a tl.load of several PTX loads (vector chunks): fewer calls than loads
awk '$3 >= $2 || $2 == 0 { bad = 1 } END { exit bad }' "$TMP/sites.want" && ok ||
	not_ok "a fixture kernel has no tl.load of several PTX loads: $(cat "$TMP/sites.want")"
"$CACHEADVISE" report "$TMP/cap3" >"$TMP/cap3.txt" 2>&1
expect_grep 'decided per call: [0-9]+ PTX loads are [0-9]+ source calls' "$TMP/cap3.txt"

# the Python samples are Python that parses (they need torch and a GPU to run)
# (compiled into $TMP: never a __pycache__ in the source tree)
for py in triton_rownorm torch_gemm; do
	python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
		"$CA_SOURCE_DIR/samples/$py.py" "$TMP/$py.pyc" 2>"$TMP/pyc" && ok ||
		not_ok "samples/$py.py: $(cat "$TMP/pyc")"
done

# the helper on its own: a call over two lines, an argument replaced and
# removed, a call with no arguments, a call that is not there
cat >"$TMP/k.py" <<'PY'
import triton.language as tl
def f(X, Y, m):
    a = tl.load(X, mask=m,
                eviction_policy="evict_first",)
    b = tl.load(Y, cache_modifier=".cg",
                mask=m)
    c = tl.load(X)
    d = tl.load(X, m, 0.0, (), "", ".cg")
    e = tl.load(X, **kw)
PY
python3 - "$TMP/k.py" >"$TMP/req.json" <<'PY'
import json, sys
print(json.dumps({"source": open(sys.argv[1]).read(), "edits": [
    {"line": 3, "column": 16, "set": {"eviction_policy": "evict_last"}},
    {"line": 5, "column": 16, "set": {"cache_modifier": None}},
    {"line": 7, "column": 16, "set": {"eviction_policy": "evict_first"}},
    {"line": 20, "column": 1, "set": {"eviction_policy": "evict_first"}},
    {"line": 8, "column": 16, "set": {"cache_modifier": None}},
    {"line": 9, "column": 16, "set": {"eviction_policy": "evict_last"}}]}))
PY
python3 "$CA_SOURCE_DIR/emitters/rewrite/tl_load_rewrite.py" <"$TMP/req.json" >"$TMP/resp.json"
python3 - "$TMP/resp.json" >"$TMP/resp.txt" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["edits"]:
    print(e["status"], e.get("first"), e.get("last"), repr(e.get("text", e.get("why"))))
PY
expect_line "rewritten 3 4 '    a = tl.load(X, mask=m,\\n                eviction_policy=\"evict_last\",)'" "$TMP/resp.txt"
expect_line "rewritten 5 6 '    b = tl.load(Y,\\n                mask=m)'" "$TMP/resp.txt"
expect_line "rewritten 7 7 '    c = tl.load(X, eviction_policy=\"evict_first\")'" "$TMP/resp.txt"
expect_line "not found None None 'no tl.load call is on line 20'" "$TMP/resp.txt"
# an argument given by position, or **kwargs: by hand
expect_line "not found None None 'the tl.load on line 8 passes cache_modifier by position or through *args/**kwargs: rewrite it by hand'" "$TMP/resp.txt"
expect_line "not found None None 'the tl.load on line 9 passes its arguments by position or through *args/**kwargs: rewrite it by hand'" "$TMP/resp.txt"
finish
