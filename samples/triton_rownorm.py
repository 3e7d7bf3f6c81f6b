"""triton_rownorm: a hand-written Triton program whose data exceeds L2
(issue 27, the Triton sample; needs PyTorch and Triton, as on the GPU
machine).

Two kernels, each a two-pass read of rows larger than L2 in all:

  rownorm_kernel   normalises each row of x (8192 x 4096 floats, 128 MiB):
                   pass 1 reads the row for its statistics, pass 2 reads it
                   again with a weight vector and writes y;
  gather_kernel    out[i] = t[idx[i]] + s[i]: a 32 MiB table gathered while
                   512 MiB of idx, s and out stream through L2.

No tl.load carries eviction_policy or cache_modifier: which ones to set is
what `cacheadvise profile python3 samples/triton_rownorm.py` measures, and
its source.patch writes them into this file. FACTS.md measured such forms
at 1.19x (rownorm) and 1.10x (gather) on an H100.

Prints "kernel <name>: <ms> ms" per kernel (median of the timed launches;
the first launch compiles and is not timed) on stderr and a checksum of
both results on stdout: an exact integer hash, the same for any cache
policy.

Usage: python3 triton_rownorm.py [rows=N] [cols=N] [iters=N]
"""
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def rownorm_kernel(X, W, Y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(X + row * N + cols, mask=cols < N, other=0.0)
        acc += x
        acc2 += x * x
    mean = tl.sum(acc, axis=0) / N
    var = tl.sum(acc2, axis=0) / N - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(X + row * N + cols, mask=cols < N, other=0.0)
        w = tl.load(W + cols, mask=cols < N)
        tl.store(Y + row * N + cols, (x - mean) * rstd * w, mask=cols < N)


@triton.jit
def gather_kernel(Idx, T, S, Out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    i = tl.load(Idx + offs, mask=m)
    s = tl.load(S + offs, mask=m)
    t = tl.load(T + i, mask=m)
    tl.store(Out + offs, t + s, mask=m)


def hashed(n, seed, device):
    """Deterministic inputs: a multiplicative hash of the index, in [0, 1)."""
    i = torch.arange(n, dtype=torch.int64, device=device)
    h = (i * 2654435761 + seed * 40503) % 4294967296
    h = (h ^ (h >> 16)) * 73244475 % 4294967296
    return ((h & 0xFFFF).to(torch.float32) / 65536.0)


def checksum(t):
    """An exact integer hash of a tensor's bits, independent of summation order."""
    b = t.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    i = torch.arange(b.numel(), dtype=torch.int64, device=b.device)
    return int((((b.flatten() * 1000003) ^ (i * 2654435761)) % 1000000007).sum().item())


def timed(fn, iters):
    """The median time of iters launches after one untimed (compiling) one."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main(argv):
    opts = {"rows": 8192, "cols": 4096, "iters": 20}
    for a in argv[1:]:
        key, _, value = a.partition("=")
        if key not in opts or not value.isdigit() or int(value) < 1:
            sys.stderr.write("triton_rownorm: bad argument '%s' (rows=N cols=N iters=N)\n" % a)
            return 1
        opts[key] = int(value)
    dev = "cuda"
    rows, cols = opts["rows"], opts["cols"]
    x = hashed(rows * cols, 1, dev).view(rows, cols)
    w = hashed(cols, 2, dev)
    y = torch.empty_like(x)
    n, table = 128 * 1000 * 1000, 8 * 1024 * 1024
    idx = (hashed(n, 3, dev) * table).to(torch.int32)
    s = hashed(n, 4, dev)
    t = hashed(table, 5, dev)
    out = torch.empty_like(s)

    def norm():
        rownorm_kernel[(rows,)](x, w, y, cols, 1e-5, BLOCK=1024)

    def gather():
        gather_kernel[(triton.cdiv(n, 1024),)](idx, t, s, out, n, BLOCK=1024)

    sys.stderr.write("kernel rownorm_kernel: %.4f ms\n" % timed(norm, opts["iters"]))
    sys.stderr.write("kernel gather_kernel: %.4f ms\n" % timed(gather, opts["iters"]))
    torch.cuda.synchronize()
    print("checksum: %d %d" % (checksum(y), checksum(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
