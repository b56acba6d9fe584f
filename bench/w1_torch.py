#!/usr/bin/env python3
"""PyTorch doing the same work as normsim's benchmark workload: draw every weight (Gaussian, fan-in
scaled), run a Pre-LN MLP stack forward, backprop a Gaussian readout, and compute the same per-layer
statistics (stream second moment, gradient second moment, weight-gradient Frobenius norms).
Prints one line: `torch_seconds <s>` (best of --repeat runs). Usage:
  python3 bench/w1_torch.py --depth 64 --width 512 --tokens 64 --samples 4 --ratio 4 --act gelu --threads 2
"""
import argparse
import time

import torch


def run(a):
    d, T, L, S = a.width, a.tokens, a.depth, a.samples
    h = int(round(a.ratio * d))
    act = {"gelu": torch.nn.functional.gelu, "relu": torch.relu}[a.act]
    dev = torch.device(a.device)
    dtype = torch.float32
    stats = []
    for s in range(S):
        g = torch.Generator(device=dev).manual_seed(1000 + s)
        ws = []
        for _ in range(L):
            w1 = (torch.randn(d, h, generator=g, device=dev, dtype=dtype) / d ** 0.5).requires_grad_()
            w2 = (torch.randn(h, d, generator=g, device=dev, dtype=dtype) / h ** 0.5).requires_grad_()
            ws.append((w1, w2))
        x = torch.randn(T, d, generator=g, device=dev, dtype=dtype).requires_grad_()
        streams = [x]
        for w1, w2 in ws:
            u = torch.nn.functional.layer_norm(x, (d,), eps=1e-5)
            x = x + act(u @ w1) @ w2
            x.retain_grad()
            streams.append(x)
        y = torch.nn.functional.layer_norm(x, (d,), eps=1e-5)
        gout = torch.randn(T, d, generator=g, device=dev, dtype=dtype)
        (y * gout).sum().backward()
        with torch.no_grad():
            stats.append([float((z * z).mean()) for z in streams])
            stats.append([float((z.grad * z.grad).mean()) for z in streams])
            stats.append([float(w.grad.norm()) for pair in ws for w in pair])
    if dev.type == "cuda":
        torch.cuda.synchronize()
    return stats


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--depth", type=int, default=64)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--samples", type=int, default=4)
    p.add_argument("--ratio", type=float, default=4.0)
    p.add_argument("--act", default="gelu")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--repeat", type=int, default=2)
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    best = float("inf")
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        run(a)
        best = min(best, time.perf_counter() - t0)
    print(f"torch_seconds {best:.4f}")
    print(f"torch_version {torch.__version__} threads {torch.get_num_threads()}")


if __name__ == "__main__":
    main()
