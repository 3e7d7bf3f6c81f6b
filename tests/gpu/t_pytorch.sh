#!/usr/bin/env bash
# GPU: `cacheadvise profile python3 -c '<a small PyTorch program>'` (issue
# 14): the program is found on PATH, the capture completes, and the report
# lists the modules that carry no PTX (PyTorch's kernels come as cubin only)
# as not patchable, saying why. Skips where PyTorch with CUDA is missing.
# Issue 18, item 3: the program re-reads a 26 MB weight matrix in 48 GEMM
# launches (cuBLAS, no PTX) while 250 MB of activations stream through, so
# the L2 step advises windows for kernels without PTX and measures each
# (DRAM bytes read, then A/B timing unless the DRAM screen stops it); the
# report shows them under "Advice that needs no patching".
. "$(dirname "$0")/lib.sh"

if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "no PyTorch with CUDA: skipped"
	exit 77
fi
# the program (samples/torch_gemm.py), given as `python3 -c` as a user may
prog=$(cat "$CA_SOURCE_DIR/samples/torch_gemm.py")
out=$WORK/torch
if "$CACHEADVISE" profile --out "$out" --timeout 300 python3 -c "$prog" >"$WORK/torch.stdout" 2>"$WORK/torch.stderr"; then
	ok
else
	not_ok "profile python3 -c ... failed"; tail -n 20 "$WORK/torch.stderr" >&2
fi
cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-pytorch.json" 2>/dev/null
cp "$out/report.txt" "${CA_GPU_LOGS:-$WORK}/report-pytorch.txt" 2>/dev/null
cap=$out/capture.json
check "capture complete" 'j["status"] == "complete"' "$cap"
check "modules without PTX are recorded" \
	'any(m.get("has_ptx") is False or m.get("has_ptx") == 0 for m in j.get("modules", []))' "$cap"
if grep -qiE "no PTX|without PTX|not patchable" "$out/report.txt" 2>/dev/null; then ok; else not_ok "report.txt does not list the modules without PTX"; fi
check "l2 advised windows" 'j.get("l2", {}).get("status") == "advised" and len(j["l2"]["windows"]) > 0' "$cap"
check "every window names kernels without PTX" \
	'all(len(w.get("kernels_without_ptx", [])) > 0 for w in j["l2"]["windows"])' "$cap"
check "every window measured: DRAM bytes read > 0" \
	'all(((w.get("verification") or {}).get("dram_bytes") or 0) > 0 for w in j["l2"]["windows"])' "$cap"
check "every window timed, or not timed by the DRAM screen" \
	'all(isinstance((w.get("verification") or {}).get("speedup"), dict) or "not timed" in ((w.get("verification") or {}).get("reason") or "") for w in j["l2"]["windows"])' "$cap"
check "baseline DRAM bytes measured" '(j["l2"].get("baseline_dram_bytes") or 0) > 0' "$cap"
if grep -q "ADVICE THAT NEEDS NO PATCHING" "$out/report.txt" 2>/dev/null &&
   grep -q "\[no PTX\]" "$out/report.txt"; then ok; else not_ok "report.txt has no L2 section for kernels without PTX"; fi
python3 - "$cap" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
mods = j.get("modules", [])
nptx = [m for m in mods if not m.get("has_ptx")]
print("RESULT: pytorch: status %s, %d runs, %d modules, %d without PTX, %d kernels measured" % (
    j.get("status"), len(j.get("runs", [])), len(mods), len(nptx),
    sum(1 for k in j.get("kernels", []) if any(l.get("measured") for l in k.get("loads", [])))))
for m in nptx[:3]:
    print("RESULT:   %s: %s" % (m.get("origin"), m.get("no_ptx_reason") or m.get("reason")))
l2 = j.get("l2") or {}
print("RESULT: pytorch l2: %s, kept %s: %s" % (l2.get("status"), l2.get("kept"), l2.get("reason")))
for w in l2.get("windows", []):
    v = w.get("verification") or {}
    sp = (v.get("speedup") or {}).get("median")
    print("RESULT:   window %s alloc #%s %.1f MB ratio %.2f, DRAM %s (baseline %s), speedup %s, %s: %s" % (
        w.get("variant"), w.get("alloc"), w.get("num_bytes", 0) / 1e6, w.get("hit_ratio", 0),
        v.get("dram_bytes"), l2.get("baseline_dram_bytes"), sp,
        "kept" if v.get("kept") else "rejected", v.get("reason")))
PY
finish
