# Every fixture, every action: a plan rewriting every patchable load of every
# function (from `inspect --json`), applied with `patch`, must assemble with
# ptxas -arch=sm_90, and only the edited loads' opcodes may differ.
# Skipped (77) where ptxas is missing.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

PTXAS=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null) || true
if [ -z "$PTXAS" ] || ! command -v python3 >/dev/null; then
	echo "ptxas or python3 not found: skipped"
	exit 77
fi

FIX="$CA_SOURCE_DIR/tests/fixtures/ptx"
ACTIONS="default cache bypass stream last_use L1::no_allocate L1::evict_first L1::evict_last"

# make_plan INSPECT.json ACTION PLAN.json LINES: all patchable loads (last_use
# skips .nc loads: ptxas has no ld.global.lu.nc); LINES gets their PTX lines.
make_plan() {
	python3 - "$@" <<'EOF'
import json, sys
inspect, action, out, lines = sys.argv[1:5]
doc = json.load(open(inspect))
mods, edited = [], []
for m in doc["modules"]:
    fns = []
    for f in m["functions"]:
        loads = [l for l in f["loads"] if l["patchable"] and not (action == "last_use" and l["nc"])]
        if loads:
            fns.append({"name": f["name"], "loads": [{"ordinal": l["ordinal"], "action": action} for l in loads]})
            edited += [l["ptx_line"] for l in loads]
    if fns:
        mods.append({"id": m["id"], "functions": fns})
json.dump({"schema": "cacheadvise.plan/1", "modules": mods}, open(out, "w"), indent=1)
open(lines, "w").write("\n".join(map(str, edited)) + "\n")
print(len(edited))
EOF
}

# only_opcodes ORIG NEW LINES: differing lines are edited loads whose text
# matches but for the opcode token.
only_opcodes() {
	python3 - "$@" <<'EOF'
import re, sys
a = open(sys.argv[1]).read().split("\n")
b = open(sys.argv[2]).read().split("\n")
edited = set(int(x) for x in open(sys.argv[3]).read().split())
if len(a) != len(b):
    sys.exit("line count changed")
op = re.compile(r"^(\s*(?:@!?\S+\s+)?)(ldu?\.\S+)(.*)$")
for n, (x, y) in enumerate(zip(a, b), 1):
    if x == y:
        continue
    mx, my = op.match(x), op.match(y)
    if n not in edited or not mx or not my or mx.group(1) != my.group(1) or mx.group(3) != my.group(3):
        sys.exit("line %d changed beyond its opcode:\n  %s\n  %s" % (n, x, y))
EOF
}

for ptx in "$FIX"/*.ptx; do
	name=$(basename "$ptx" .ptx)
	if ! "$CACHEADVISE" inspect --json "$ptx" >"$TMP/$name.json" 2>"$TMP/err"; then
		not_ok "inspect --json $name: $(head -c 300 "$TMP/err")"
		continue
	fi
	# The unpatched fixture itself assembles (-c: func.ptx calls an extern function).
	if "$PTXAS" -arch=sm_90 -c "$ptx" -o /dev/null 2>"$TMP/err"; then ok; else
		not_ok "ptxas rejects the fixture $name: $(head -c 300 "$TMP/err")"; fi
	for action in $ACTIONS; do
		tag="$name/$action"
		n=$(make_plan "$TMP/$name.json" "$action" "$TMP/plan.json" "$TMP/lines") || { not_ok "$tag: plan"; continue; }
		[ "$n" -gt 0 ] && ok || not_ok "$tag: no patchable loads"
		if ! "$CACHEADVISE" patch --plan "$TMP/plan.json" -o "$TMP/out.ptx" "$ptx" 2>"$TMP/err"; then
			not_ok "$tag: patch failed: $(head -c 300 "$TMP/err")"
			continue
		fi
		expect_no_grep 'has no loads' "$TMP/err"
		# "cache" changes every patchable load (none is .ca already).
		if [ "$action" = cache ]; then
			changed=$(diff "$ptx" "$TMP/out.ptx" | grep -c '^>')
			[ "$changed" = "$n" ] && ok || not_ok "$tag: $changed lines changed, want $n"
		fi
		if "$PTXAS" -arch=sm_90 -c "$TMP/out.ptx" -o /dev/null 2>"$TMP/err"; then ok; else
			not_ok "$tag: ptxas rejects the patched PTX: $(head -c 400 "$TMP/err")"; fi
		if msg=$(only_opcodes "$ptx" "$TMP/out.ptx" "$TMP/lines" 2>&1); then ok; else
			not_ok "$tag: $msg"; fi
	done
done

finish
