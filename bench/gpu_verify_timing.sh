#!/usr/bin/env bash
# Benchmark (GPU): how the verification's timing methods agree (issue 15,
# "Numbers" (c)). For each sample, CA_VT_PROFILES profiles at the defaults
# (--measure launches); from each one's runs it prints the advice's speedup
# as every method sees it:
#   replays (events)    the in-run replays of one launch, CUDA events
#   replays (activity)  the same replays, CUPTI's kernel durations (the
#                       verdict for kernels launched fewer than 12 times)
#   launches            the program's own launches in the in-run run, A B B A
#   program runs        the verify-baseline and verify-advice runs' launches
# each as median(base) / median(advice), with the launch times listed.
#
# Environment: CA_VT_SAMPLES (default stream_table thrash_pair),
# CA_VT_PROFILES (default 2), CA_VT_EXTRA (options added to each profile).
. "$(dirname "$0")/../tests/gpu/lib.sh"

samples=${CA_VT_SAMPLES:-stream_table thrash_pair}
profiles=${CA_VT_PROFILES:-2}
logs=${CA_GPU_LOGS:-$WORK}

for s in $samples; do
	for i in $(seq 1 "$profiles"); do
		out=$WORK/$s-$i
		# shellcheck disable=SC2086
		if "$CACHEADVISE" profile --out "$out" ${CA_VT_EXTRA:-} "$SAMPLES/$s" \
			>"$logs/vt-$s-$i.stdout" 2>"$logs/vt-$s-$i.stderr"; then ok; else
			not_ok "profile $s ($i) failed: $(tail -n 3 "$logs/vt-$s-$i.stderr")"
			continue
		fi
		cp "$out/capture.json" "$logs/vt-capture-$s-$i.json"
		python3 - "$out" "$s ($i)" <<'PY'
import json, os, statistics, sys
d, name = sys.argv[1], sys.argv[2]
cap = json.load(open(os.path.join(d, "capture.json")))
ver = {k["name"]: k for k in cap.get("verification", {}).get("kernels", [])}

def events(run):
    path = os.path.join(d, "runs", "%03d.d" % run["index"], "events.jsonl")
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path):
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out

def ratio(b, a):
    if not b or not a:
        return "-"
    return "%.4f (n %d/%d; base %s; advice %s)" % (
        statistics.median(b) / statistics.median(a), len(b), len(a),
        " ".join("%.3f" % (x / 1e6) for x in b), " ".join("%.3f" % (x / 1e6) for x in a))

per_kernel = {}
def add(kernel, method, version, ns):
    per_kernel.setdefault(kernel, {}).setdefault(method, {}).setdefault(version, []).append(ns)

for run in cap.get("runs", []):
    v = run.get("variant", "")
    ev = events(run)
    launch_corr = {e["correlation"]: e for e in ev if e.get("ev") == "launch" and "correlation" in e}
    seq_version = {e["seq"]: e["version"] for e in ev if e.get("ev") == "version"}
    corr_version = {e["correlation"]: seq_version[e["seq"]] for e in launch_corr.values()
                    if e["seq"] in seq_version}
    replays = [e for e in ev if e.get("ev") == "replay_time"]
    times = [e for e in ev if e.get("ev") == "kernel_time"]
    # a launch's records share its correlation id: the last to start is
    # the program's own, the earlier ones the library's replays
    groups = {}
    for t in times:
        groups.setdefault(t.get("correlation"), []).append(t)
    own = {}
    replay_recs = {}
    for c, recs in groups.items():
        recs.sort(key=lambda t: t["start"])
        own[c] = recs[-1]
        replay_recs[c] = recs[:-1]
    if v == "capture":
        shared = [c for c in launch_corr if len(groups.get(c, [])) > 1]
        print("RESULT: %s capture run: %d of %d program launches share their correlation id "
              "with %d replay records" % (name, len(shared), len(launch_corr),
                                          sum(len(replay_recs[c]) for c in shared)))
    if v == "verify-in-run":
        seq_corr = {e["seq"]: c for c, e in launch_corr.items()}
        by_launch = {}
        for e in replays:
            add(e["kernel"], "replays (events)", e["version"], e["ns"])
            by_launch.setdefault(seq_corr.get(e.get("seq")), []).append(e)
        for c, reps in by_launch.items():
            recs = replay_recs.get(c, [])
            if c is not None and len(recs) == len(reps):
                for t, e in zip(recs, reps):
                    add(e["kernel"], "replays (activity)", e["version"], t["end"] - t["start"])
        for c, t in own.items():
            if c in corr_version:
                add(t["kernel"], "launches (A B B A)", corr_version[c], t["end"] - t["start"])
    elif v in ("verify-baseline", "verify-advice"):
        for c, t in own.items():
            if c in launch_corr:
                add(t["kernel"], "program runs", "base" if v == "verify-baseline" else "advice",
                    t["end"] - t["start"])

for k, methods in per_kernel.items():
    vk = ver.get(k, {})
    print("RESULT: %s %s: verdict %s (%s), kept %s" % (
        name, k[:32], (vk.get("speedup") or {}).get("median"), vk.get("method"), vk.get("kept")))
    for m, by in methods.items():
        print("  %-20s %s" % (m, ratio(by.get("base"), by.get("advice"))))
PY
	done
done
finish
