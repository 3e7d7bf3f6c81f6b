# The bundled samples: each samples/*.cu to PTX (nvcc -ptx -arch=sm_90
# -lineinfo), then for every action a plan covering all patchable loads of
# all functions (from `inspect --json`), applied with `patch`, must assemble
# with ptxas. Skipped (77) without nvcc/ptxas/python3 or without samples.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

CUDA_BIN=/usr/local/cuda/bin
NVCC=$(command -v nvcc || ls "$CUDA_BIN/nvcc" 2>/dev/null) || true
PTXAS=$(command -v ptxas || ls "$CUDA_BIN/ptxas" 2>/dev/null) || true
shopt -s nullglob
samples=("$CA_SOURCE_DIR"/samples/*.cu)
if [ -z "$NVCC" ] || [ -z "$PTXAS" ] || ! command -v python3 >/dev/null || [ ${#samples[@]} = 0 ]; then
	echo "nvcc, ptxas, python3 or samples/*.cu missing: skipped"
	exit 77
fi

ACTIONS="default cache bypass stream last_use L1::no_allocate L1::evict_first L1::evict_last"

make_plan() {  # INSPECT.json ACTION PLAN.json -> prints the number of loads
	python3 - "$@" <<'EOF'
import json, sys
inspect, action, out = sys.argv[1:4]
doc = json.load(open(inspect))
mods, n = [], 0
for m in doc["modules"]:
    fns = []
    for f in m["functions"]:
        loads = [l["ordinal"] for l in f["loads"]
                 if l["patchable"] and not (action == "last_use" and l["nc"])]
        if loads:
            fns.append({"name": f["name"], "loads": [{"ordinal": o, "action": action} for o in loads]})
            n += len(loads)
    if fns:
        mods.append({"id": m["id"], "functions": fns})
json.dump({"schema": "cacheadvise.plan/1", "modules": mods}, open(out, "w"))
print(n)
EOF
}

for cu in "${samples[@]}"; do
	name=$(basename "$cu" .cu)
	if ! "$NVCC" -ptx -arch=sm_90 -lineinfo -O3 -I"$CA_SOURCE_DIR" "$cu" -o "$TMP/$name.ptx" 2>"$TMP/err"; then
		not_ok "nvcc $name: $(head -c 300 "$TMP/err")"
		continue
	fi
	if ! "$CACHEADVISE" inspect --json "$TMP/$name.ptx" >"$TMP/$name.json" 2>"$TMP/err"; then
		not_ok "inspect $name: $(head -c 300 "$TMP/err")"
		continue
	fi
	total=0
	for action in $ACTIONS; do
		n=$(make_plan "$TMP/$name.json" "$action" "$TMP/plan.json") || { not_ok "$name/$action: plan"; continue; }
		total=$((total + n))
		if ! "$CACHEADVISE" patch --plan "$TMP/plan.json" -o "$TMP/out.ptx" "$TMP/$name.ptx" 2>"$TMP/err"; then
			not_ok "$name/$action: patch failed: $(head -c 300 "$TMP/err")"
			continue
		fi
		if [ "$n" -gt 0 ]; then expect_no_grep 'has no loads' "$TMP/err"; fi
		if "$PTXAS" -arch=sm_90 -c "$TMP/out.ptx" -o /dev/null 2>"$TMP/err"; then ok; else
			not_ok "$name/$action: ptxas rejects the patched PTX: $(head -c 400 "$TMP/err")"; fi
	done
	echo "$name: $total load rewrites over $(echo $ACTIONS | wc -w) actions"
	[ "$total" -gt 0 ] && ok || not_ok "$name: no patchable loads at all"
done

finish
