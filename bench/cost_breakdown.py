#!/usr/bin/env python3
"""One RESULT line: where a profile's time went (issue 39 item 1).

    bench/cost_breakdown.py NAME CAPTURE.json

prints "RESULT: NAME cost: wall W s = N x native; steps: capture 9.0 s (4 runs),
...; mechanisms: program 5.1 s, counter_setup 3.2 s, ..." from capture.json's
cost (seconds_by_step, runs_by_step, seconds_by_mechanism), largest first,
and, where the capture replayed launches, one line per kernel: "RESULT: NAME
replays KERNEL: V variants in T s (M ms a variant; memory saved S MB, save
and restore R ms)" from measure.kernels[].replays, which tells the range
profiler's own cost a range from the memory the tool restores (the Triton
sample on the H200: 56 ms a variant, of which restores 0.5 ms).
Used by bench/gpu_capture_cost.sh and bench/gpu_corpus.sh.
"""
import json
import sys


def replay_lines(name, capture):
    """Per kernel: its replayed variants, their time, and what memory took."""
    kernels = ((capture.get("measure") or {}).get("kernels") or {})
    for kernel, k in sorted(kernels.items()):
        reps = [r for r in (k.get("replays") or []) if isinstance(r, dict)]
        variants = sum(r.get("variants") or 0 for r in reps)
        total = sum(r.get("total_ms") or 0 for r in reps)
        mem = sum((r.get("save_ms") or 0) + (r.get("restore_ms") or 0) for r in reps)
        saved = max([r.get("saved_bytes") or 0 for r in reps] or [0])
        if not variants:
            continue
        print("RESULT: %s replays %s: %d variants in %.1f s (%.0f ms a variant; memory "
              "saved %.0f MB, save and restore %.0f ms)" % (
                  name, kernel[:40], variants, total / 1e3, total / variants, saved / 1e6, mem))


def main():
    name, path = sys.argv[1], sys.argv[2]
    capture = json.load(open(path))
    cost = (capture.get("cost") or {})
    steps = cost.get("seconds_by_step") or {}
    runs = cost.get("runs_by_step") or {}
    mech = cost.get("seconds_by_mechanism") or {}
    step_text = ", ".join("%s %.1f s (%d runs)" % (s, t, runs.get(s, 0))
                          for s, t in sorted(steps.items(), key=lambda kv: -kv[1]))
    mech_text = ", ".join("%s %.1f s" % (m, t)
                          for m, t in sorted(mech.items(), key=lambda kv: -kv[1]) if t >= 0.05)
    wall, ratio = cost.get("wall_seconds"), cost.get("ratio")
    print("RESULT: %s cost: wall %s s = %s x native; steps: %s; mechanisms: %s" % (
        name, "%.1f" % wall if isinstance(wall, (int, float)) else "-",
        "%.1f" % ratio if isinstance(ratio, (int, float)) else "-",
        step_text or "-", mech_text or "- (a capture before issue 39)"))
    replay_lines(name, capture)


if __name__ == "__main__":
    main()
