#!/usr/bin/env bash
# GPU: the headline is the delivered figure (issue 38 item 3). `profile`
# rebuilds the program from source.patch in a private copy of its sources
# and times it against the original: a CUDA sample with --build (the
# samples' nvcc line, run in the copy), and the Triton sample without
# (its patched .py from the copy, a private TRITON_CACHE_DIR). Each
# rebuilt program reaches at least 95% of run --plan's verified speedup
# (or the capture says why not), the report leads with the rebuilt figure,
# and the user's tree is untouched; an independent `check --build` of each
# CUDA capture prints bench/results/delivered.md's row (program, headline,
# check, ratio). CA_REBUILD_SAMPLES picks the CUDA samples (default deposit
# decode_iter stream_table helper_loads: the last reads through a template
# helper in a header, issue 38 item 1); CA_REBUILD_TRITON=0 leaves the Triton
# sample out.
. "$(dirname "$0")/lib.sh"

NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
[ -n "$NVCC" ] || { echo "no nvcc: skipped"; exit 77; }
sha() { sha256sum "$1" | cut -c1-64; }
app=$WORK/app
cp -r "$CA_SOURCE_DIR/samples" "$app"

judge() { # judge NAME CAPTURE REPORT: the rebuilt figure against run --plan's
	local name=$1 cap=$2 rep=$3
	python3 - "$cap" "$name" <<'PY' >"$WORK/$name.judge"
import json, sys
j = json.load(open(sys.argv[1])); v = j.get("verification") or {}
rb = v.get("rebuilt"); plan = (v.get("program") or {}).get("gpu_speedup", {}).get("median")
if not v.get("kept"):
    print("RESULT: %s: no kept advice, nothing to rebuild" % sys.argv[2]); print("OK"); sys.exit()
if not rb:
    print("RESULT: %s: no verification.rebuilt (the patch rewrites %s loads)" % (sys.argv[2], (v.get("source_patch") or {}).get("rewritten"))); print("FAIL"); sys.exit()
s = rb.get("speedup")
print("RESULT: %s: run --plan %.4fx, rebuilt from source.patch %s (%s) %s" % (sys.argv[2], plan, "%.4fx" % s if s else "-", rb["status"], rb.get("reason") or rb.get("how") or ""))
print("OK" if rb["status"] == "timed" and s and s >= 0.95 * plan else "FAIL")
PY
	grep '^RESULT' "$WORK/$name.judge"
	tail -n 1 "$WORK/$name.judge" | grep -qx OK && ok || not_ok "$name: $(head -1 "$WORK/$name.judge")"
	if python3 -c 'import json,sys; sys.exit(0 if ((json.load(open(sys.argv[1])).get("verification") or {}).get("rebuilt") or {}).get("speedup") else 1)' "$cap"; then
		grep -q 'rebuilt from source.patch (run --plan' "$rep" && ok || not_ok "$name: the report does not lead with the rebuilt figure"
	fi
}

for s in ${CA_REBUILD_SAMPLES:-deposit decode_iter stream_table helper_loads}; do
	BUILD="$NVCC -gencode arch=compute_90,code=[sm_90,compute_90] -lineinfo -O3 $s.cu -o $s"
	(cd "$app" && sh -c "$BUILD") 2>"$WORK/$s.nvcc" || { not_ok "$s: nvcc: $(head -c 400 "$WORK/$s.nvcc")"; continue; }
	a=()
	case $s in decode_iter | deposit)
		"$app/$s" --make-input "$WORK/$s.in" >/dev/null && a=("$WORK/$s.in" "$WORK/$s.result") ;;
	esac
	before=$(sha "$app/$s.cu")
	out=$WORK/cap-$s
	if "$CACHEADVISE" profile --out "$out" --top 1 --max-loads 6 --repeat 5 --no-l2 --no-softcache \
		--build "$BUILD" -- "$app/$s" "${a[@]}" >"$WORK/$s.out" 2>&1; then ok; else
		not_ok "profile --build $s: $(tail -5 "$WORK/$s.out")"; continue; fi
	cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-rebuild-$s.json" 2>/dev/null
	cp "$out/report.txt" "${CA_GPU_LOGS:-$WORK}/report-rebuild-$s.txt" 2>/dev/null
	judge "$s" "$out/capture.json" "$out/report.txt"
	[ "$(sha "$app/$s.cu")" = "$before" ] && ok || not_ok "$s: profile --build changed the user's source"
	# delivered.md's row: the headline against an independent `check --build`
	"$CACHEADVISE" check "$out" --build "$BUILD" --repeat 5 -- "$app/$s" "${a[@]}" >"$WORK/$s.check" 2>&1
	python3 - "$out/report.json" "$WORK/$s.check" "$s" <<'PY'
import json, re, sys
sm = json.load(open(sys.argv[1])).get("summary", {})
head = sm.get("rebuilt_speedup") or sm.get("program_speedup")
m = re.search(r"^RESULT program rebuilt_speedup=([0-9.]+)", open(sys.argv[2]).read(), re.M)
chk = float(m.group(1)) if m else None
ratio = chk / head if chk and head else None
print("RESULT: | %s | %s | %s | %s |" % (sys.argv[3], "%.4fx" % head if head else "-",
      "%.4fx" % chk if chk else "-", "%.1f%%" % (100 * ratio) if ratio else "-"))
PY
done

# Triton: no build; the patched .py runs from the copy
if [ "${CA_REBUILD_TRITON:-1}" != 0 ] && python3 -c 'import torch, triton' 2>/dev/null; then
	export TRITON_CACHE_DIR="$WORK/triton-cache"
	out=$WORK/cap-triton
	before=$(sha "$app/triton_rownorm.py")
	if "$CACHEADVISE" profile --out "$out" -- python3 "$app/triton_rownorm.py" iters=5 \
		>"$WORK/triton.out" 2>&1; then ok; else not_ok "profile triton: $(tail -5 "$WORK/triton.out")"; fi
	cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-rebuild-triton.json" 2>/dev/null
	cp "$out/report.txt" "${CA_GPU_LOGS:-$WORK}/report-rebuild-triton.txt" 2>/dev/null
	judge triton_rownorm "$out/capture.json" "$out/report.txt"
	[ "$(sha "$app/triton_rownorm.py")" = "$before" ] && ok || not_ok "triton: profile changed the user's .py"
fi
finish
