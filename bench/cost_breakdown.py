#!/usr/bin/env python3
"""One RESULT line: where a profile's time went (issue 39 item 1).

    bench/cost_breakdown.py NAME CAPTURE.json

prints "RESULT: NAME cost: wall W s = N x native; steps: capture 9.0 s (4 runs),
...; mechanisms: program 5.1 s, counter_setup 3.2 s, ..." from capture.json's
cost (seconds_by_step, runs_by_step, seconds_by_mechanism), largest first.
Used by bench/gpu_capture_cost.sh and bench/gpu_corpus.sh.
"""
import json
import sys


def main():
    name, path = sys.argv[1], sys.argv[2]
    cost = (json.load(open(path)).get("cost") or {})
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


if __name__ == "__main__":
    main()
