#!/usr/bin/env bash
# GPU: the samples that behave like real programs (issue 14 item 4). Both
# read an input file, print timings on stdout that vary from run to run,
# run 100 launches and write their results to a file named on the command
# line.
# - decode_iter is deterministic: its advice is judged on its output file
#   (found as a file the run creates, named in its arguments), which is
#   unchanged, and the advice is kept when faster; a timing line that
#   changes never rejects it.
# - deposit sums with float atomics, so its output file differs between
#   the two baselines in the last bits: since the output check compares
#   numbers within a tolerance (rtol 1e-5), its file is "within_tolerance"
#   (or "unchecked" where the baselines differ beyond it), never
#   rejected as "output changed".
# The output check's fields in capture.json (assumed, issue 14 item 1):
#   verification.output = {"status": "identical"|"changed"|"unchecked",
#                          "volatile_lines": N,
#                          "files": [{"path": ..., "status": ...}]}
. "$(dirname "$0")/lib.sh"

profile() { # profile NAME INPUT OUTPUT: make the input, profile in $WORK/NAME.run
	local name=$1 in=$2 outfile=$3 run=$WORK/$1.run
	mkdir -p "$run"
	"$SAMPLES/$name" --make-input "$run/$in" >/dev/null || { not_ok "$name --make-input failed"; return 1; }
	# as a user types it: in the program's folder, relative paths
	(cd "$run" && "$CACHEADVISE" profile --out "$WORK/$name" --top 1 --max-loads 6 --repeat 5 --no-l2 \
		"$SAMPLES/$name" "$in" "$outfile" >"$WORK/$name.stdout" 2>"$WORK/$name.stderr")
	local rc=$?
	cp "$WORK/$name/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-realistic-$name.json" 2>/dev/null
	[ "$rc" = 0 ] || { not_ok "profile $name failed (exit $rc): $(tail -n 5 "$WORK/$name.stderr")"; return 1; }
	ok
}

results() { # results NAME: RESULT lines
	python3 - "$WORK/$1/capture.json" "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); s = sys.argv[2]; v = j["verification"] or {}
o = v.get("output") or {}
print("RESULT: %s: %d runs, %s; output %s (%s volatile lines; files: %s)" % (
    s, len(j["runs"]), v.get("status"), o.get("status"), o.get("volatile_lines"),
    ", ".join("%s %s" % (f.get("path"), f.get("status")) for f in o.get("files", [])) or "none"))
for k in v.get("kernels", []):
    sp = k["speedup"] or {}
    print("RESULT: %s %s: speedup median %.3f, noise %.3f, %s (%s)" % (
        s, k["name"][:28], sp.get("median", 0), k["noise"] or 0,
        "KEPT" if k["kept"] else "rejected", k["reason"]))
PY
}

# --- decode_iter: deterministic, judged on its output file --------------
if profile decode_iter in.bin result.txt; then
	cap=$WORK/decode_iter/capture.json
	check "decode_iter: capture complete, the kernel measured" \
		'j["status"] == "complete" and any("decode_step" in k["name"] for k in j["kernels"])' "$cap"
	check "decode_iter: 100 launches of decode_step in the baseline" \
		'[k for k in j["kernels"] if "decode_step" in k["name"]][0]["launches"] >= 100' "$cap"
	check "decode_iter: the advice was verified" 'j["verification"]["status"] == "verified"' "$cap"
	check "decode_iter: the output check compared result.txt and found it identical" \
		'j["verification"]["output"]["status"] == "identical" and any(f["path"].endswith("result.txt") and f["status"] == "identical" for f in j["verification"]["output"]["files"])' "$cap"
	check "decode_iter: the timing lines were found volatile, not compared" \
		'j["verification"]["output"]["volatile_lines"] >= 1' "$cap"
	check "decode_iter: no advice rejected because the output changed" \
		'not any("output" in k["reason"] for k in j["verification"]["kernels"] if not k["kept"])' "$cap"
	# stream_table's shape: bypassing the key loads was 1.78x there
	check "decode_iter: the advice is kept, faster by more than the noise" \
		'j["verification"]["kept"] is True and all(k["kept"] and k["speedup"]["median"] - 1 > k["noise"] for k in j["verification"]["kernels"])' "$cap"
	results decode_iter
fi

# --- deposit: float atomics, output unchecked ---------------------------
if profile deposit parts.bin grid.bin; then
	cap=$WORK/deposit/capture.json
	check "deposit: capture complete, the kernel measured" \
		'j["status"] == "complete" and any("deposit_step" in k["name"] for k in j["kernels"])' "$cap"
	check "deposit: the advice was verified" 'j["verification"]["status"] == "verified"' "$cap"
	check "deposit: grid.bin compared within tolerance or reported unchecked, never changed" \
		'j["verification"]["output"]["status"] in ("within_tolerance", "unchecked") and any(f["path"].endswith("grid.bin") and f["status"] in ("within_tolerance", "unchecked") for f in j["verification"]["output"]["files"])' "$cap"
	check "deposit: no advice rejected because the output changed" \
		'not any("output" in k["reason"] for k in j["verification"]["kernels"] if not k["kept"])' "$cap"
	check "deposit: a kept plan is faster by more than the noise" \
		'all(k["speedup"]["median"] - 1 > k["noise"] for k in j["verification"]["kernels"] if k["kept"])' "$cap"
	if grep -qE 'output unchecked|within tolerance|within_tolerance' "$WORK/deposit/report.txt"; then ok; else
		not_ok "deposit: report.txt says neither 'output unchecked' nor 'within tolerance'"; fi
	results deposit
fi
finish
