#!/usr/bin/env bash
# GPU: `cacheadvise run --plan` applies a plan without a rebuild. A plan
# written by hand (no module id: it applies to every module with the
# kernel) bypasses the two key loads of stream_table; the program prints
# the same checksum, the module was substituted, the patched PTX has the
# two no_allocate loads, and the program's exit status passes through.
. "$(dirname "$0")/lib.sh"

bin=$SAMPLES/stream_table
kernel=$("$CACHEADVISE" inspect --json "$bin" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print([f["name"] for m in j["modules"] for f in m["functions"] if "decode_keys" in f["name"]][0])')
cat >"$WORK/plan.json" <<JSON
{"schema": "cacheadvise.plan/1",
 "modules": [{"functions": [{"name": "$kernel",
   "loads": [{"ordinal": 1, "action": "L1::no_allocate"}, {"ordinal": 2, "action": "L1::no_allocate"}]}]}]}
JSON
want=$("$bin" 2>/dev/null | grep checksum)
"$CACHEADVISE" run --plan "$WORK/plan.json" --keep "$WORK/keep" -- "$bin" >"$WORK/out" 2>"$WORK/err"
rc=$?
got=$(grep checksum "$WORK/out")
[ "$rc" = 0 ] && ok || not_ok "run --plan failed: $(cat "$WORK/err")"
[ -n "$want" ] && [ "$want" = "$got" ] && ok || not_ok "checksum changed: '$want' vs '$got'"
if grep -q '"substituted":true' "$WORK/keep/events/events.jsonl"; then ok; else not_ok "module not substituted"; fi
n=$(cat "$WORK"/keep/*.ptx | grep -c 'ld.global.L1::no_allocate')
[ "$n" = 2 ] && ok || not_ok "patched PTX has $n no_allocate loads, want 2"
t_plain=$("$bin" 2>&1 >/dev/null | sed -n 's/^kernel decode_keys: \([0-9.]*\) ms/\1/p')
t_plan=$("$CACHEADVISE" run --plan "$WORK/plan.json" -- "$bin" 2>&1 >/dev/null | sed -n 's/^kernel decode_keys: \([0-9.]*\) ms/\1/p')
result "stream_table decode_keys: ${t_plain} ms as built, ${t_plan} ms under run --plan (key loads L1::no_allocate)"
# the program's own exit status comes back
"$CACHEADVISE" run --plan "$WORK/plan.json" -- "$bin" bogus=1 >/dev/null 2>&1
rc=$?
"$bin" bogus=1 >/dev/null 2>&1
want_rc=$?
[ "$rc" = "$want_rc" ] && ok || not_ok "exit status $rc, the program's own is $want_rc"
finish
