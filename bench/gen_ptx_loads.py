#!/usr/bin/env python3
"""Writes a synthetic PTX module with many global loads, for measuring
`cacheadvise inspect` (bench/results/inspect.md, issue 36 item 8b).

usage: gen_ptx_loads.py LOADS [KERNELS] > big.ptx

LOADS global loads (ld.global.f32) spread evenly over KERNELS entry
functions (default 1000). The module is valid PTX for sm_90.
"""
import sys


def main():
    loads = int(sys.argv[1])
    kernels = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    kernels = max(1, min(kernels, loads or 1))
    out = sys.stdout
    out.write(".version 8.0\n.target sm_90\n.address_size 64\n\n")
    per, extra = divmod(loads, kernels)
    for k in range(kernels):
        n = per + (1 if k < extra else 0)
        name = "k%d" % k
        out.write(".visible .entry %s(\n\t.param .u64 %s_param_0\n)\n{\n" % (name, name))
        out.write("\t.reg .f32 \t%f<2>;\n\t.reg .b64 \t%rd<3>;\n\n")
        out.write("\tld.param.u64 \t%%rd1, [%s_param_0];\n" % name)
        out.write("\tcvta.to.global.u64 \t%rd2, %rd1;\n")
        out.write("".join("\tld.global.f32 \t%%f1, [%%rd2+%d];\n" % (4 * (i % 65536))
                          for i in range(n)))
        out.write("\tret;\n\n}\n")


if __name__ == "__main__":
    main()
