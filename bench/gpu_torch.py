#!/usr/bin/env python3
"""PyTorch on the CUDA device doing the work of normsim's GPU benchmark (bench/gpu_bench.cpp), for the
ratio it reports: per-sample Gaussian weights (fan-in scaled), a Pre-LN stack forward, the backward of a
Gaussian readout, and the same statistics (per-layer act_sq, grad_sq, branch_sq, weight-gradient
Frobenius norms). Weights are drawn per sublayer from a seeded generator and drawn again in the backward
(like normsim's recompute); the backward reruns each sublayer under autograd (one extra forward per
sublayer, which normsim does not do; the FLOP count used for the ratio is the same nominal count).
Prints `torch_seconds <s>` (best of --repeat). normsim_gpu_bench passes the workload (bench/workloads.hpp,
the one definition): python3 bench/gpu_torch.py --sublayer transformer --activation relu --width 4096
--depth 96 --tokens 512 --samples 8 --ratio 4 --heads 4
"""
import argparse
import time

import torch

ACTIVATIONS = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu,
               "tanh": torch.tanh, "linear": lambda x: x}


def weights(kind, k, S, d, H, dev):
    g = torch.Generator(device=dev).manual_seed(1000 + k)
    if kind == "mlp":
        return [torch.randn(S, d, H, generator=g, device=dev) / d ** 0.5,
                torch.randn(S, H, d, generator=g, device=dev) / H ** 0.5]
    return [torch.randn(S, d, d, generator=g, device=dev) / d ** 0.5 for _ in range(4)]


def branch(kind, u, ws, heads, act):
    if kind == "mlp":
        return ACTIVATIONS[act](u @ ws[0]) @ ws[1]
    S, T, d = u.shape
    q, k, v = [(u @ w).view(S, T, heads, d // heads).transpose(1, 2) for w in ws[:3]]
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=False)
    return o.transpose(1, 2).reshape(S, T, d) @ ws[3]


def run(w, dev):
    S, T, d, K = w["samples"], w["tokens"], w["width"], w["depth"]
    H = round(w["ratio"] * d)
    sub = w["sublayer"]
    kinds = ["attn" if sub == "attention" or (sub == "transformer" and k % 2 == 0) else "mlp" for k in range(K)]
    stats = {"act_sq": [], "branch_sq": [], "grad_sq": [], "gradw": []}
    x = torch.randn(S, T, d, device=dev)
    streams = [x]
    with torch.no_grad():
        for k in range(K):
            f = branch(kinds[k], torch.nn.functional.layer_norm(x, (d,)), weights(kinds[k], k, S, d, H, dev),
                       w["heads"], w["activation"])
            stats["branch_sq"].append(f.square().mean((1, 2)))
            x = x + f
            streams.append(x)
        stats["act_sq"] = [s.square().mean((1, 2)) for s in streams]
    gy = torch.randn(S, T, d, device=dev)
    xl = streams[-1].clone().requires_grad_()
    with torch.enable_grad():
        y = torch.nn.functional.layer_norm(xl, (d,))
        (g,) = torch.autograd.grad(y, xl, gy)
    for k in reversed(range(K)):
        stats["grad_sq"].append(g.square().mean((1, 2)))
        xk = streams[k].requires_grad_()
        ws = [t.requires_grad_() for t in weights(kinds[k], k, S, d, H, dev)]
        out = xk + branch(kinds[k], torch.nn.functional.layer_norm(xk, (d,)), ws, w["heads"], w["activation"])
        grads = torch.autograd.grad(out, [xk] + ws, g)
        g = grads[0]
        stats["gradw"].append([t.square().sum((1, 2)).sqrt() for t in grads[1:]])
        streams[k + 1] = None
    stats["grad_sq"].append(g.square().mean((1, 2)))
    torch.cuda.synchronize()
    return stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sublayer", choices=["mlp", "attention", "transformer"], required=True)
    ap.add_argument("--activation", choices=list(ACTIVATIONS), required=True)
    for key in ("width", "depth", "tokens", "samples", "heads"):
        ap.add_argument("--" + key, type=int, required=True)
    ap.add_argument("--ratio", type=float, required=True)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 products, as normsim's float32
    w = vars(a)
    run(w, dev)  # warm-up
    best = float("inf")
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        run(w, dev)
        best = min(best, time.perf_counter() - t0)
    print(f"device {torch.cuda.get_device_name()}")
    print(f"torch_seconds {best:.6f}")


if __name__ == "__main__":
    main()
