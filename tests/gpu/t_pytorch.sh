#!/usr/bin/env bash
# GPU: `cacheadvise profile python3 -c '<a small PyTorch program>'` (issue
# 14): the program is found on PATH, the capture completes, and the report
# lists the modules that carry no PTX (PyTorch's kernels come as cubin only)
# as not patchable, saying why. Skips where PyTorch with CUDA is missing.
. "$(dirname "$0")/lib.sh"

if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "no PyTorch with CUDA: skipped"
	exit 77
fi
prog='import torch
x = torch.randn(2048, 2048, device="cuda")
w = torch.randn(2048, 2048, device="cuda")
for _ in range(50):
    x = torch.tanh(x @ w) * 0.5 + x.mean(dim=0)
torch.cuda.synchronize()
print("sum", float(x.sum()))'
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
PY
finish
