"""torch_gemm.py: a PyTorch program whose kernels are all cubin-only.

cuBLAS GEMMs re-read a 26 MB weight matrix in 48 launches while 250 MB of
activations stream through, and a reduction sums the results. PyTorch's
and cuBLAS's kernels carry no PTX, so no load can be rewritten: what
cacheadvise can advise is a persisting-L2 window for the weight matrix
(docs/cmd-profile.md, "L2 windows"). Used by tests/gpu/t_pytorch.sh (as
`python3 -c`) and bench/gpu_cost_targets.sh (issue 39's cubin-only
program). Prints one line, "sum X".

w is scaled in place: a temporary would leave a freed segment that h and y
then share, making it the most reused allocation instead of w.
"""
import torch

w = torch.randn(2560, 2560, device="cuda")
w.mul_(1.0 / 64)
x = torch.randn(24, 1024, 2560, device="cuda")
h = torch.empty(1024, 2560, device="cuda")
y = torch.empty(1024, 2560, device="cuda")
s = torch.zeros((), device="cuda")
for i in range(24):
    torch.mm(x[i], w, out=h)
    torch.mm(h, w, out=y)
    s += y.sum()
torch.cuda.synchronize()
print("sum %.3f" % float(s))
