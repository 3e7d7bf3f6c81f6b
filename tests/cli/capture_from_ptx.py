"""A capture of PTX files for the CLI tests (no GPU): each file is a module,
each kernel with global loads a measured kernel whose loads are as
`cacheadvise inspect --json` reads them (1,000 accesses, 100 L1 hits each),
and a plan.json giving every patchable load a form: the forms of --forms in
turn, one per source call (file, line and column), so a call's loads share
one. Prints "kernel line column form" for each call.

    python3 capture_from_ptx.py CACHEADVISE CAPDIR --forms F1,F2,... \\
        [--kernel-forms NAME=F1,F2,...]... [--origin API] \\
        [--program PATH ARGS...] -- PTX...

--kernel-forms: the forms of the kernels whose mangled name contains NAME,
in turn over their calls ordered by line and column, in place of --forms;
"-" leaves a call out of the plan (as built). A load keeps its inlined_at
(the calls a helper's line was inlined at), as inspect reads it.

--origin: how the program loaded the modules ("cuModuleLoadData": from
memory, as NVRTC's output is); default cuModuleLoad (a file).
"""
import json
import os
import shutil
import subprocess
import sys


def main():
    tool, cap = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    sep = rest.index("--")
    opts, ptxs = rest[:sep], rest[sep + 1:]
    forms = opts[opts.index("--forms") + 1].split(",")
    per_kernel = [opts[i + 1].split("=", 1) for i, o in enumerate(opts) if o == "--kernel-forms"]
    origin = opts[opts.index("--origin") + 1] if "--origin" in opts else "cuModuleLoad"
    program = opts[opts.index("--program") + 1:] if "--program" in opts else ["python3", "prog.py"]
    if "--origin" in program:
        program = program[:program.index("--origin")]
    os.makedirs(cap + "/modules", exist_ok=True)
    mods, kernels, plan, n = [], [], {"schema": "cacheadvise.plan/1", "modules": []}, 0
    for ptx in ptxs:
        d = json.loads(subprocess.check_output([tool, "inspect", "--json", ptx]))
        for m in d["modules"]:
            shutil.copy(ptx, "%s/modules/%s.ptx" % (cap, m["id"]))
            mods.append({"id": m["id"], "origin": "%s#%d" % (origin, len(mods)), "arch": "sm_90",
                         "has_ptx": True, "ptx": "modules/%s.ptx" % m["id"]})
            pm = {"id": m["id"], "functions": []}
            for f in m["functions"]:
                if f["kind"] != "entry":
                    continue
                loads = [{"ordinal": l["ordinal"], "instruction": l["instruction"],
                          "file": l["file"], "line": l["line"], "column": l["column"],
                          "param": l["param"], "read_only": l["read_only"],
                          "inlined_at": l.get("inlined_at") or [],
                          "patchable": l["patchable"], "measured": l["patchable"],
                          "access": 1000, "hit": 100 if l["patchable"] else None}
                         for l in f["loads"]]
                kernels.append({"module": m["id"], "name": f["name"], "launches": 10,
                                "loads": loads, "pairs": []})
                out = []
                sites = sorted({(l["line"] or 0, l["column"] or 0)
                                for l in f["loads"] if l["patchable"]})
                mine = [fs.split(",") for name, fs in per_kernel if name in f["name"]]
                for i, site in enumerate(sites):
                    if mine:
                        form = mine[0][i % len(mine[0])]
                    else:
                        form = forms[n % len(forms)]
                        n += 1
                    print(f["name"], site[0], site[1], form)
                    if form == "-":
                        continue
                    out += [{"ordinal": l["ordinal"], "action": form} for l in f["loads"]
                            if l["patchable"] and ((l["line"] or 0), (l["column"] or 0)) == site]
                pm["functions"].append({"name": f["name"], "loads": out})
            plan["modules"].append(pm)
    doc = {"schema": "cacheadvise.capture/1", "status": "complete",
           "program": {"path": program[0], "args": program[1:], "cwd": "/tmp"},
           "device": {"schema": "cacheadvise.device/1", "name": "NVIDIA H100 80GB HBM3",
                      "cc": "9.0"},
           "modules": mods, "kernels": kernels, "runs": []}
    json.dump(doc, open(cap + "/capture.json", "w"))
    json.dump(plan, open(cap + "/plan.json", "w"))


if __name__ == "__main__":
    main()
