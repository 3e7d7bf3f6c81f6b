#!/usr/bin/env bash
# Benchmark and test (GPU): `cacheadvise profile` on the corpus of real
# third-party CUDA programs (shared/corpus, its README.md), as a new user
# would run it. For each app: prepare.sh once, the native run (its run.sh)
# timed and checked (check.sh), then
#     RUN_PREFIX="cacheadvise profile --out DIR OPTIONS --" <app>/run.sh
# (run.sh cds into the app folder and execs the binary with its arguments),
# then check.sh on the last profiled run's output. Prints one RESULT line an
# app: native wall, profile wall, ratio, runs, kernels measured, advice and
# verdict (from capture.json), and the checks.
#
# Fails an app when profile does not complete, when the output files of the
# last profiled run fail check.sh, or when advice is rejected because the
# output changed: cache operators never change a result, so that verdict is
# a false alarm (issue 14: a timing line on stdout is not an output change).
#
# Environment:
#   CA_CORPUS_DIR     the corpus (default $CA_SOURCE_DIR/shared/corpus, then
#                     $CA_SOURCE_DIR/../shared/corpus)
#   CA_CORPUS_APPS    the apps to run (default: every app of the table)
#   CA_CORPUS_EXTRA   options added to every app's (e.g. "--no-verify")
#   CA_CORPUS_LIMIT   seconds one profile may take before it is stopped with
#                     SIGINT (its capture is kept, marked incomplete); default 900
. "$(dirname "$0")/../tests/gpu/lib.sh"

# The per-app options: what is needed to finish within the GPU time of a
# session. With in-run capture and verification (the default since issue
# 15) the defaults finish on every app of the corpus, so the table holds
# only a per-run timeout. One app a line: NAME OPTIONS... (no spaces inside
# an option).
options_table() {
	cat <<'TABLE'
bfs            --timeout 120
particlefilter --timeout 120
lud            --timeout 120
stencil        --timeout 120
atax           --timeout 120
lavaMD         --timeout 120
TABLE
}

corpus=${CA_CORPUS_DIR:-}
if [ -z "$corpus" ]; then
	for d in "$CA_SOURCE_DIR/shared/corpus" "$CA_SOURCE_DIR/../shared/corpus"; do
		[ -x "$d/prepare.sh" ] && { corpus=$(cd "$d" && pwd); break; }
	done
fi
if [ -z "$corpus" ] || [ ! -x "$corpus/prepare.sh" ]; then
	echo "no corpus at $CA_SOURCE_DIR/shared/corpus or $CA_SOURCE_DIR/../shared/corpus (set CA_CORPUS_DIR): skipped"
	exit 77
fi
apps=${CA_CORPUS_APPS:-$(options_table | awk '{print $1}')}
limit=${CA_CORPUS_LIMIT:-900}

if "$corpus/prepare.sh" >"$WORK/prepare.log" 2>&1; then ok; else
	not_ok "prepare.sh failed: $(tail -n 3 "$WORK/prepare.log")"; fi

now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }
check_line() { # check_line APP LOG: check.sh's verdict line in $check_out, its status in $check_rc
	check_out=$("$corpus/$1/check.sh" "$2" 2>&1)
	check_rc=$?
	check_out=$(printf '%s\n' "$check_out" | tail -n 1)
	check_out=${check_out#CHECK "$1" }
}

for app in $apps; do
	opts=$(options_table | awk -v a="$app" '$1 == a { $1 = ""; print }')
	if [ ! -x "$corpus/$app/run.sh" ]; then
		not_ok "$app: no $corpus/$app/run.sh"
		continue
	fi
	if [ -z "$opts" ]; then
		not_ok "$app: not in the options table of $(basename "$0")"
		continue
	fi
	opts="$opts ${CA_CORPUS_EXTRA:-}"

	# native: the app as built, its own output and check
	t0=$(now)
	"$corpus/$app/run.sh" >"$corpus/$app/last_run.log" 2>&1
	native_rc=$?
	native_wall=$(elapsed "$t0" "$(now)")
	check_line "$app" "$corpus/$app/last_run.log"
	native_check=$check_out
	if [ "$native_rc" = 0 ] && [ "$check_rc" = 0 ]; then ok; else
		not_ok "$app: the native run failed (exit $native_rc): $native_check"; fi

	# profiled, as a user types it (word splitting of RUN_PREFIX is run.sh's)
	out=$WORK/corpus-$app
	t0=$(now)
	# shellcheck disable=SC2086 # opts is a list of options
	RUN_PREFIX="$CACHEADVISE profile --out $out $opts --" \
		timeout -s INT -k 60 "$limit" "$corpus/$app/run.sh" >"$WORK/$app.profile.log" 2>&1
	prof_rc=$?
	prof_wall=$(elapsed "$t0" "$(now)")
	cp "$WORK/$app.profile.log" "${CA_GPU_LOGS:-$WORK}/corpus-$app.profile.log" 2>/dev/null
	cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-corpus-$app.json" 2>/dev/null
	[ -f "$out/report.txt" ] && cp "$out/report.txt" "${CA_GPU_LOGS:-$WORK}/report-corpus-$app.txt"
	if [ "$prof_rc" = 0 ]; then ok; else
		not_ok "$app: profile exited $prof_rc after ${prof_wall}s: $(tail -n 3 "$WORK/$app.profile.log")"; fi
	if [ ! -f "$out/capture.json" ]; then
		result "$app: native ${native_wall}s ($native_check); profile exit $prof_rc after ${prof_wall}s, no capture.json"
		continue
	fi
	check "$app: capture complete" 'j["status"] == "complete"' "$out/capture.json"
	check "$app: no advice rejected because the output changed" \
		'not any("output" in (k.get("reason") or "") for k in (j.get("verification") or {}).get("kernels", []) if not k.get("kept"))' \
		"$out/capture.json"

	# the last profiled run's output: its log (stdout and stderr) and the
	# files it left in the app folder
	last_log=$(python3 -c 'import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
print(runs[-1]["log"] if runs else "")' "$out/capture.json" 2>/dev/null)
	prof_check="no run recorded"
	if [ -n "$last_log" ] && [ -f "$out/$last_log" ]; then
		check_line "$app" "$out/$last_log"
		prof_check=$check_out
		if [ "$check_rc" = 0 ]; then ok; else not_ok "$app: after profile: $prof_check"; fi
	else
		not_ok "$app: the capture has no run log to check"
	fi

	python3 - "$out/capture.json" "$app" "$native_wall" "$prof_wall" "$prof_rc" "$opts" \
		"$native_check" "$prof_check" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
app, native, wall, rc, opts, nchk, pchk = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], \
    " ".join(sys.argv[6].split()), sys.argv[7], sys.argv[8]
v = j.get("verification") or {}
out = v.get("output") or {}
measured = [k for k in j.get("kernels", []) if any(l.get("measured") for l in k.get("loads", []))]
print("RESULT: %s [%s]: native %.2fs, profile %.1fs (x%.0f, exit %s, %s), %d runs, kernels measured %d of %d" % (
    app, opts, native, wall, wall / native if native > 0 else 0, rc, j.get("status"), len(j.get("runs", [])),
    len(measured), len(j.get("all_kernels") or j.get("kernels", []))))
for k in v.get("kernels", []):
    sp = k.get("speedup") or {}
    print("RESULT:   %s %s: advice speedup median %.3f (noise %.3f): %s, %s" % (
        app, k["name"][:40], sp.get("median") or 0, k.get("noise") or 0,
        "KEPT" if k.get("kept") else "rejected", k.get("reason")))
print("RESULT:   %s verdict: %s; output %s%s; check native: %s; after profile: %s" % (
    app, v.get("status", "none"), out.get("status", "n/a" if "output_identical" not in v else
    ("identical" if v["output_identical"] else "changed")),
    "" if not out.get("files") else " (" + ", ".join("%s %s" % (f.get("path", "").split("/")[-1], f.get("status"))
                                          for f in out["files"]) + ")", nchk, pchk))
PY
	python3 "$CA_SOURCE_DIR/bench/cost_breakdown.py" "$app" "$out/capture.json"
done
finish
