#!/usr/bin/env python3
"""The differences between plans (issue 38 item 5: three profiles of one
program give the same plan).

    bench/plan_diff.py PLAN.json PLAN.json [PLAN.json ...]

Each plan.json (or a capture directory holding one) is read; a load is
named by kernel and ordinal (module ids differ between processes that
JIT-compile, so they are not compared). Prints one line per load whose
form differs between the plans, with each plan's form ("-": as built), then
"same plan in N profiles" or "K of L loads differ", and exits 0 when every
plan is the same, 1 when they differ, 2 on bad input.
"""
import json
import os
import sys


def fail(message):
    print("plan_diff.py: " + message, file=sys.stderr)
    sys.exit(2)


def load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "plan.json")
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        fail("cannot read '%s': %s" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("modules"), list):
        fail("'%s' is not a plan (no \"modules\" list)" % path)
    forms = {}
    for m in doc["modules"]:
        for f in m.get("functions", []):
            for l in f.get("loads", []):
                forms[(f["name"], l["ordinal"])] = l["action"]
    return forms


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    plans = [load(p) for p in argv[1:]]
    keys = sorted(set().union(*plans))
    differ = 0
    for k in keys:
        forms = [p.get(k, "-") for p in plans]
        if len(set(forms)) > 1:
            differ += 1
            print("%s load %d: %s" % (k[0], k[1], "  |  ".join(forms)))
    if differ:
        print("%d of %d loads differ between the %d plans" % (differ, len(keys), len(plans)))
        return 1
    print("same plan in %d profiles (%d loads)" % (len(plans), len(keys)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
