# The report leads with the program rebuilt from source.patch (issue 38
# item 3, capture.json verification.rebuilt): the headline's program
# speedup is the rebuilt program's, run --plan's beside it; where the
# program was not rebuilt the report says why, so the figures read as
# run --plan's; and a capture whose rebuilt section is malformed is refused.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

cap="$TMP/cap"
cp -r "$CA_SOURCE_DIR/tests/fixtures/capture-real" "$cap"
set_rebuilt() { # JSON for verification.rebuilt
	python3 - "$cap/capture.json" "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
v = j["verification"]
v["source_patch"] = {"rewritten": 2, "left_out": [], "status": "same as the advice",
                     "speedup": v["program"]["gpu_speedup"]["median"]}
v["rebuilt"] = json.loads(sys.argv[2])
json.dump(j, open(sys.argv[1], "w"))
PY
}

set_rebuilt '{"status": "timed", "speedup": 1.7421, "how": "built with '"'"'make'"'"' in a private copy of '"'"'/home/me/app'"'"'", "kernels": [{"name": "_Z11decode_keysPK5uint4jmjPKjjS3_jjPj", "speedup": 1.79, "kept": true}]}'
expect_status 0 "$CACHEADVISE" report "$cap"
expect_grep 'program speedup 1\.74x rebuilt from source\.patch \(run --plan 1\.76x\)' "$TMP/out"
expect_grep '^    1\. 1\.74x load plan .*; run --plan 1\.76x \(program GPU time, rebuilt from source\.patch\)' "$TMP/out"
expect_grep "the program rebuilt from source\.patch: 1\.74x \(built with 'make' in a private copy of '/home/me/app'\); advice via \`run --plan\`: 1\.76x" "$TMP/out"
expect_status 0 "$CACHEADVISE" report "$cap" --format html -o "$TMP/r.html"
expect_grep 'program speedup 1\.74x rebuilt from source\.patch \(run --plan 1\.76x\)' "$TMP/r.html"
# capture.json keeps the section as written (report --all rewrites nothing of it)
expect_status 0 "$CACHEADVISE" report "$cap" --all
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["summary"]["rebuilt_speedup"] == 1.7421 else 1)' "$cap/report.json" && ok || not_ok "report.json summary.rebuilt_speedup"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["verification"]["rebuilt"]; sys.exit(0 if r["speedup"] == 1.7421 and r["kernels"][0]["kept"] is True else 1)' "$cap/capture.json" && ok || not_ok "verification.rebuilt changed by report --all"

set_rebuilt '{"status": "not rebuilt", "reason": "a CUDA program is rebuilt only with the command that builds it", "speedup": null}'
expect_status 0 "$CACHEADVISE" report "$cap"
expect_grep 'not rebuilt \(a CUDA program is rebuilt only with the command that builds it\), so the figures are run --plan' "$TMP/out"
expect_grep 'program speedup 1\.76x' "$TMP/out"
if grep -q 'rebuilt from source\.patch (run --plan' "$TMP/out"; then not_ok "a program not rebuilt leads with a rebuilt figure"; else ok; fi

set_rebuilt '{"status": "timed", "speedup": "fast"}'
expect_status 2 "$CACHEADVISE" report "$cap"
expect_grep 'verification\.rebuilt' "$TMP/err"
finish
