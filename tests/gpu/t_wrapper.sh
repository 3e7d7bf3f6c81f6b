#!/usr/bin/env bash
# GPU: `profile` runs what the user typed (issue 14 item 2): a #! wrapper
# script that starts the CUDA program as a child process (not exec), and
# `python3 wrapper.py` found through PATH. The injection environment
# reaches the child, its events are read, and the kernel is measured as if
# the program had been profiled directly.
. "$(dirname "$0")/lib.sh"

bin=$SAMPLES/stream_table
cat >"$WORK/wrap.sh" <<SH
#!/bin/bash
# a child, not exec: the CUDA program is the wrapper's child process
"$bin" "\$@"
exit \$?
SH
chmod +x "$WORK/wrap.sh"
cat >"$WORK/wrap.py" <<PY
import subprocess, sys
sys.exit(subprocess.call(["$bin"] + sys.argv[1:]))
PY

profile() { # profile NAME PROGRAM ARGS...
	local name=$1; shift
	"$CACHEADVISE" profile --out "$WORK/$name" --top 1 --max-loads 4 --no-verify --no-l2 "$@" \
		>"$WORK/$name.stdout" 2>"$WORK/$name.stderr"
	local rc=$?
	cp "$WORK/$name/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-wrapper-$name.json" 2>/dev/null
	[ "$rc" = 0 ] && ok || not_ok "profile $* failed (exit $rc): $(tail -n 5 "$WORK/$name.stderr")"
}

profile sh "$WORK/wrap.sh" mb=256
profile py python3 "$WORK/wrap.py" mb=256
for name in sh py; do
	cap=$WORK/$name/capture.json
	check "$name wrapper: capture complete, decode_keys measured through the child" \
		'j["status"] == "complete" and any("decode_keys" in k["name"] and any(l.get("measured") for l in k["loads"]) for k in j["kernels"])' "$cap"
	check "$name wrapper: hit_i was measured (the table load hits)" \
		'(lambda k: max(l["hit"] for l in k["loads"] if l.get("measured")) > 0)([k for k in j["kernels"] if "decode_keys" in k["name"]][0])' "$cap"
	python3 - "$cap" "$name" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("RESULT: %s wrapper: status %s, %d runs, kernels %s" % (sys.argv[2], j["status"], len(j["runs"]),
      ", ".join(k["name"][:24] for k in j["kernels"])))
PY
done
finish
