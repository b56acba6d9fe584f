#!/usr/bin/env python3
"""PyTorch references for normsim's CPU benchmark W1 (a Pre-LN MLP stack), in two modes.

--mode same: the same work as normsim, sample by sample: draw every weight (Gaussian, fan-in scaled), run
  the stack forward, backprop a Gaussian readout with autograd (which forms every weight gradient, as a
  PyTorch user would), and compute normsim's statistics at every layer: act_sq, act_mean_abs, act_max_abs,
  token_cos, eff_rank (eigenvalues of the T x T Gram in float64), cos_next, rel_update, branch_sq, grad_sq,
  and the Frobenius norms of both weight gradients.
--mode lean: what normsim does and no more, batched over samples: weights drawn for all samples at once
  without requires_grad (no weight gradient is formed), stream gradients by autograd, weight-gradient norms
  from T x T Gram matrices (||A^T B||_F^2 = <A A^T, B B^T>, normsim's trick), the same statistics batched.

Prints `torch_seconds <s>` (best of --repeat runs) and the torch version and threads. Usage:
  python3 bench/w1_torch.py --mode same --threads 1 --depth 64 --width 512 --tokens 64 --samples 4
"""
import argparse
import time

import torch
import torch.nn.functional as F


def stream_stats(x):
    """normsim's per-stream metrics of x (..., T, d), in float64; returns a list of tensors."""
    x = x.double()
    n = x / x.norm(dim=-1, keepdim=True)
    T = x.shape[-2]
    pair = (n.sum(dim=-2).pow(2).sum(dim=-1) - n.pow(2).sum(dim=(-1, -2))) / (T * (T - 1))
    s = torch.linalg.eigvalsh(x @ x.transpose(-1, -2)).clamp(min=0).sqrt()
    p = s / s.sum(dim=-1, keepdim=True)
    eff_rank = torch.exp(-(p * torch.log(p.clamp(min=1e-300))).sum(dim=-1))
    return [x.pow(2).mean(dim=(-1, -2)), x.abs().mean(dim=(-1, -2)), x.abs().amax(dim=(-1, -2)), pair, eff_rank]


def pair_stats(a, b):
    """cos_next and rel_update of consecutive streams a -> b (..., T, d)."""
    a, b = a.double(), b.double()
    cos = ((a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))).mean(-1)
    rel = ((b - a).norm(dim=-1) / a.norm(dim=-1)).mean(-1)
    return [cos, rel]


def gram_norm(a, b):
    """||a^T b||_F for a (..., T, n), b (..., T, m) through T x T Gram matrices."""
    s = ((a @ a.transpose(-1, -2)).double() * (b @ b.transpose(-1, -2)).double()).sum(dim=(-1, -2))
    return s.clamp(min=0).sqrt()


def draw(g, *shape, fan_in):
    return torch.randn(*shape, generator=g, dtype=torch.float32) / fan_in**0.5


def run_same(a, act):
    d, T, L, h = a.width, a.tokens, a.depth, int(round(a.ratio * a.width))
    stats = []
    for s in range(a.samples):
        g = torch.Generator().manual_seed(1000 + s)
        ws = [(draw(g, d, h, fan_in=d).requires_grad_(), draw(g, h, d, fan_in=h).requires_grad_()) for _ in range(L)]
        x = draw(g, T, d, fan_in=1).requires_grad_()
        streams, branches = [x], []
        for w1, w2 in ws:
            f = act(F.layer_norm(x, (d,), eps=1e-5) @ w1) @ w2
            branches.append(f)
            x = x + f
            x.retain_grad()
            streams.append(x)
        y = F.layer_norm(x, (d,), eps=1e-5)
        (y * draw(g, T, d, fan_in=1)).sum().backward()
        with torch.no_grad():
            for i, z in enumerate(streams):
                stats += stream_stats(z) + [z.grad.double().pow(2).mean()]
                if i > 0:
                    stats += pair_stats(streams[i - 1], z) + [branches[i - 1].double().pow(2).mean()]
            stats += [w.grad.double().norm() for pair in ws for w in pair]
    return stats


def run_lean(a, act):
    d, T, L, S, h = a.width, a.tokens, a.depth, a.samples, int(round(a.ratio * a.width))
    g = torch.Generator().manual_seed(1000)
    ws = [(draw(g, S, d, h, fan_in=d), draw(g, S, h, d, fan_in=h)) for _ in range(L)]
    x = draw(g, S, T, d, fan_in=1).requires_grad_()
    streams, branches, keep = [x], [], []
    for w1, w2 in ws:
        u = F.layer_norm(x, (d,), eps=1e-5)
        pre = torch.bmm(u, w1)
        post = act(pre)
        f = torch.bmm(post, w2)
        for t in (u, pre, f):
            t.retain_grad()
        keep.append((u, pre, post, f))
        branches.append(f)
        x = x + f
        x.retain_grad()
        streams.append(x)
    y = F.layer_norm(x, (d,), eps=1e-5)
    (y * draw(g, S, T, d, fan_in=1)).sum().backward()
    stats = []
    with torch.no_grad():
        for i, z in enumerate(streams):
            stats += stream_stats(z) + [z.grad.double().pow(2).mean(dim=(-1, -2))]
            if i > 0:
                stats += pair_stats(streams[i - 1], z) + [branches[i - 1].double().pow(2).mean(dim=(-1, -2))]
        for u, pre, post, f in keep:
            stats += [gram_norm(u, pre.grad), gram_norm(post, f.grad)]
    return stats


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["same", "lean"], default="same")
    p.add_argument("--depth", type=int, default=64)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--samples", type=int, default=4)
    p.add_argument("--ratio", type=float, default=4.0)
    p.add_argument("--act", default="gelu")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--repeat", type=int, default=2)
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    act = {"gelu": F.gelu, "relu": torch.relu}[a.act]
    run = run_same if a.mode == "same" else run_lean
    best = float("inf")
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        run(a, act)
        best = min(best, time.perf_counter() - t0)
    print(f"torch_seconds {best:.4f}")
    print(f"torch_version {torch.__version__} mode {a.mode} threads {torch.get_num_threads()}")


if __name__ == "__main__":
    main()
