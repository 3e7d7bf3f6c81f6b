#!/usr/bin/env bash
# Issue 36, item 1: nothing a capture names is ever executed. capture.json's
# program.path, when its file name started with "python", was the
# interpreter of the Triton rewrite helper: `report`, `report --all`,
# `apply` (even --dry-run) and `check --static` ran it. The helper now runs
# with --python PATH, else $CACHEADVISE_PYTHON, else python3 from PATH.
# A capture of Triton kernels (tests/fixtures/triton) whose program is a
# "python" that leaves a mark: the mark must never appear, and the rewrite
# must still be made (by python3), or by the Python the user names.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
FIX="$CA_SOURCE_DIR/tests/fixtures/triton"
mkdir -p "$TMP/cap/modules" "$TMP/src" "$TMP/bin"
cp "$FIX/kernels.py" "$TMP/src/kernels.py"

# mark NAME: a "python" that records that it ran, then does the job
mark() {
	printf '#!/bin/sh\necho ran >>"%s/%s.ran"\nexec python3 "$@"\n' "$TMP" "$1" >"$TMP/bin/$1"
	chmod +x "$TMP/bin/$1"
}
mark python-evil
mark python-mine

python3 - "$CACHEADVISE" "$FIX" "$TMP/cap" "$TMP/bin/python-evil" <<'PY'
import glob, json, subprocess, sys
tool, fix, cap, evil = sys.argv[1:5]
ptx = glob.glob(fix + "/cache/*/rownorm_kernel.ptx")[0]
m = json.loads(subprocess.check_output([tool, "inspect", "--json", ptx]))["modules"][0]
open("%s/modules/%s.ptx" % (cap, m["id"]), "w").write(open(ptx).read())
f = m["functions"][0]
loads = [{"ordinal": l["ordinal"], "instruction": l["instruction"], "file": l["file"],
          "line": l["line"], "param": l["param"], "read_only": l["read_only"],
          "patchable": l["patchable"], "measured": l["patchable"], "access": 1000,
          "hit": 100 if l["patchable"] else None} for l in f["loads"]]
json.dump({"schema": "cacheadvise.capture/1", "status": "complete",
           "program": {"path": evil, "args": ["prog.py"], "cwd": "/tmp"},
           "device": {"schema": "cacheadvise.device/1", "name": "NVIDIA H100 80GB HBM3", "cc": "9.0"},
           "modules": [{"id": m["id"], "origin": "cuModuleLoad#0", "arch": "sm_90", "has_ptx": True,
                        "ptx": "modules/%s.ptx" % m["id"]}],
           "kernels": [{"module": m["id"], "name": f["name"], "launches": 10, "loads": loads,
                        "pairs": []}], "runs": []}, open(cap + "/capture.json", "w"), indent=1)
out = [{"ordinal": l["ordinal"], "action": "L1::evict_last+L2::evict_last"}
       for l in f["loads"] if l["line"] == 17 and l["patchable"]]
json.dump({"schema": "cacheadvise.plan/1", "modules": [{"id": m["id"], "functions": [
    {"name": f["name"], "loads": out}]}]}, open(cap + "/plan.json", "w"), indent=1)
PY
want='+        x = tl.load(X + row * N + cols, mask=cols < N, other=0.0, eviction_policy="evict_last")'
evil_ran() { [ ! -e "$TMP/python-evil.ran" ] && ok || not_ok "$1 ran the capture's program.path"; }

# every reader of the capture: the rewrite is made by python3 from PATH
env -u CACHEADVISE_PYTHON "$CACHEADVISE" report "$TMP/cap" --all --source-root "$TMP/src" \
	>"$TMP/out" 2>"$TMP/err" && ok || not_ok "report --all: $(head -c 300 "$TMP/err")"
evil_ran "report --all"
expect_line "$want" "$TMP/cap/source.patch"
env -u CACHEADVISE_PYTHON "$CACHEADVISE" report "$TMP/cap" --source-root "$TMP/src" >"$TMP/out" 2>&1
evil_ran "report"
env -u CACHEADVISE_PYTHON "$CACHEADVISE" report "$TMP/cap" --format json -o "$TMP/r.json" \
	--source-root "$TMP/src" >"$TMP/out" 2>&1
evil_ran "report --format json"
rm "$TMP/cap/source.patch" "$TMP/cap/sources.json"
expect_status 0 env -u CACHEADVISE_PYTHON "$CACHEADVISE" apply "$TMP/cap" --source-root "$TMP/src" --dry-run
evil_ran "apply --dry-run"
expect_line "$want" "$TMP/out"
TRITON_CACHE_DIR="$FIX/rebuilt/cache" env -u CACHEADVISE_PYTHON "$CACHEADVISE" check "$TMP/cap" \
	--static --source-root "$TMP/src" -- python3 prog.py >"$TMP/out" 2>&1
evil_ran "check --static"

# the Python the user names: CACHEADVISE_PYTHON, and --python over it
CACHEADVISE_PYTHON="$TMP/bin/python-mine" "$CACHEADVISE" report "$TMP/cap" --all \
	--source-root "$TMP/src" >"$TMP/out" 2>"$TMP/err" && ok || not_ok "report --all with CACHEADVISE_PYTHON"
[ -e "$TMP/python-mine.ran" ] && ok || not_ok "CACHEADVISE_PYTHON was not used"
expect_line "$want" "$TMP/cap/source.patch"
rm -f "$TMP/python-mine.ran"
CACHEADVISE_PYTHON="$TMP/nowhere/python3" "$CACHEADVISE" apply "$TMP/cap" --dry-run \
	--source-root "$TMP/src" --python "$TMP/bin/python-mine" >"$TMP/out" 2>"$TMP/err" && ok ||
	not_ok "apply --dry-run --python: $(head -c 300 "$TMP/err")"
[ -e "$TMP/python-mine.ran" ] && ok || not_ok "--python was not used"
evil_ran "apply --python"

# a Python that is not there: the report says so for the load, and runs nothing else
expect_status 0 "$CACHEADVISE" report "$TMP/cap" --source-root "$TMP/src" --python "$TMP/nowhere/python3"
expect_grep "cannot run '$TMP/nowhere/python3' \(not found\)" "$TMP/out"
evil_ran "report --python (missing)"
finish
