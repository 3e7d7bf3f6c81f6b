#!/usr/bin/env bash
# GPU: the carve-out a program sets itself (issue 18). carveout_bad sets
# cudaFuncAttributePreferredSharedMemoryCarveout = 100 on gather_table, a
# kernel that lives on L1 hits in a 160 KB table: profile must time it
# against the driver's default in-run and keep the default, faster by more
# than 5%, with the call to remove named in the report. With --carveout 0
# (the most L1, as good as the default for a kernel without shared memory)
# the program's own setting must be kept as it is.
. "$(dirname "$0")/lib.sh"

bin=$SAMPLES/carveout_bad
[ -x "$bin" ] || { echo "carveout_bad not built at $bin" >&2; exit 1; }

# profile_case NAME ARGS...: profiles carveout_bad with ARGS into $WORK/NAME
profile_case() {
	local name=$1
	shift
	if "$CACHEADVISE" profile --out "$WORK/$name" --top 1 --no-l2 --repeat 5 "$bin" "$@" \
		>"$WORK/$name.stdout" 2>"$WORK/$name.stderr"; then ok; else
		not_ok "profile carveout_bad $* failed: $(tail -n 5 "$WORK/$name.stderr")"; return 1; fi
	cp "$WORK/$name/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-carveout-$name.json" 2>/dev/null
	return 0
}

# figures NAME: "program_value kept median noise method" of gather_table
figures() {
	python3 - "$WORK/$1/capture.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for k in (j.get("carveout") or {}).get("kernels", []):
    if "gather_table" in k["name"]:
        v = k.get("speedup_of_default") or {}
        sp = v.get("speedup") or {}
        print(k["program_value"], k["kept"], sp.get("median"), v.get("noise"),
              (v.get("method") or "none").replace(" ", "_"))
PY
}

if profile_case harmful; then
	cap=$WORK/harmful/capture.json
	check "harmful: the carve-out section lists gather_table with the program's value 100" \
		'any("gather_table" in k["name"] and k["program_value"] == 100 for k in j["carveout"]["kernels"])' "$cap"
	check "harmful: the default is kept at a median speedup > 1.05, beyond the noise" \
		'all(k["kept"] == "default" and k["speedup_of_default"]["speedup"]["median"] > 1.05 and k["speedup_of_default"]["speedup"]["median"] - 1 > (k["speedup_of_default"]["noise"] or 0) for k in j["carveout"]["kernels"] if "gather_table" in k["name"])' "$cap"
	if grep -q "cudaFuncAttributePreferredSharedMemoryCarveout, 100) call for kernel _Z12gather_table" "$WORK/harmful/report.txt" &&
		grep -q "L1/SHARED CARVE-OUT" "$WORK/harmful/report.txt"; then ok; else
		not_ok "harmful: report.txt does not name the cudaFuncSetAttribute call to remove"; fi
	grep -q '"carveout"' "$WORK/harmful/report.json" && ok || not_ok "harmful: report.json has no carveout"
	grep -q 'id="carveout"' "$WORK/harmful/report.html" && ok || not_ok "harmful: report.html has no carve-out section"
	read -r pv kept med noise method <<<"$(figures harmful)"
	result "carveout_bad (carve-out $pv): kept $kept, default ${med}x the program's setting (noise $noise, $method)"
fi

if profile_case harmless --carveout 0; then
	cap=$WORK/harmless/capture.json
	check "harmless: gather_table's carve-out 0 is kept as it is" \
		'any("gather_table" in k["name"] and k["program_value"] == 0 and k["kept"] == "program" for k in j["carveout"]["kernels"])' "$cap"
	check "harmless: it was measured, not skipped" \
		'all(k["speedup_of_default"] is not None for k in j["carveout"]["kernels"] if "gather_table" in k["name"])' "$cap"
	grep -q "kept as it is" "$WORK/harmless/report.txt" && ok || not_ok "harmless: report.txt does not say 'kept as it is'"
	read -r pv kept med noise method <<<"$(figures harmless)"
	result "carveout_bad --carveout $pv: kept $kept, default ${med}x the program's setting (noise $noise, $method)"
fi

# A kernel launched fewer than 16 times is timed by replays of one launch.
if profile_case few --launches 4; then
	check "few launches: timed by replays and the default kept" \
		'all(k["kept"] == "default" and k["speedup_of_default"]["method"] == "in-run, replays of one launch" for k in j["carveout"]["kernels"] if "gather_table" in k["name"])' "$WORK/few/capture.json"
	read -r pv kept med noise method <<<"$(figures few)"
	result "carveout_bad --launches 4 (carve-out $pv): kept $kept, default ${med}x (noise $noise, $method)"
fi
finish
