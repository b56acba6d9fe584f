"""The PyTorch bridge against the simulator on issue 30's stack (a benchmark, not a test): Pre-LN ReLU MLP
blocks, depth 24, width 128, 16 tokens, 16 samples, final LayerNorm, measured by normsim.torch.measure
(tests/python/torch_blocks.py's PreLN(d, Mlp(d))) and by normsim.run with the same config, in one process.

    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp \\
    flock /tmp/normsim-heavy.lock /usr/bin/python3 bench/bridge_bench.py --threads 1

Each is run once to warm up, then --repeats times in turn (bridge, simulator, bridge, ...), so that a slow
moment of the machine falls on both; the medians, their ratio and the median of each part of the bridge
(run_info["timings"]: building the samples' blocks and inputs, the token-mixing probe, forward and
backward passes, metrics, result frames) are printed. The simulator runs its default precision (float32)
unless --sim-precision says otherwise; the bridge its --dtype (default float32, as measure's). --floor adds
PyTorch alone doing the factory's draws and one forward and backward per sample by hand, in the same loop:
the time no bridge that runs the user's factory and torch's arithmetic can go below.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))  # torch_blocks

import torch  # noqa: E402

import normsim  # noqa: E402
import torch_blocks as tb  # noqa: E402

D, T, K, SAMPLES = 128, 16, 24, 16
PARTS = ("build_seconds", "probe_seconds", "passes_seconds", "metrics_seconds", "result_seconds")


def bridge(dtype, batch):
    return normsim.torch.measure(lambda k: tb.PreLN(D, tb.Mlp(D)), x0=(T, D), depth=K, samples=SAMPLES, seed=0,
                                 dtype=dtype, final_norm=torch.nn.LayerNorm(D, eps=tb.EPS), progress=False,
                                 batch=batch)


def floor():
    """PyTorch doing only what the bridge cannot skip, written by hand: per sample, the same seeds and the same
    factory (its constructors and `normal_` draws), the input, then one forward through the 24 blocks and the
    final norm and one torch.autograd.grad for the stream and every parameter (no metrics, probe or frames).
    Returns (draws-and-building seconds, passes seconds)."""
    build_s = passes_s = 0.0
    for s in range(SAMPLES):
        t = time.perf_counter()
        torch.manual_seed(s)
        generator = torch.Generator().manual_seed(s + 17)
        blocks = [tb.PreLN(D, tb.Mlp(D)) for _ in range(K)]
        norm = torch.nn.LayerNorm(D, eps=tb.EPS)
        x = torch.randn((1, T, D), generator=generator).requires_grad_()
        readout = torch.randn((1, T, D), generator=generator)
        t2 = time.perf_counter()
        h = x
        for block in blocks:
            h = block(h)
        params = [p for b in blocks for p in b.parameters()]
        torch.autograd.grad((readout * norm(h)).sum(), [x, *params])
        build_s, passes_s = build_s + t2 - t, passes_s + time.perf_counter() - t2
    return build_s, passes_s


def simulator(threads, precision):
    config = {"placement": "pre", "sublayer": "mlp", "width": D, "depth": K, "tokens": T, "samples": SAMPLES,
              "activation": "relu"}
    if precision:
        config["precision"] = precision
    return normsim.run(config, threads=threads, progress=False)


def timed(f):
    t = time.perf_counter()
    result = f()
    return time.perf_counter() - t, result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads and normsim.run's threads")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--dtype", default="float32", choices=("float64", "float32"))
    ap.add_argument("--batch", default="auto", choices=("auto", "off"),
                    help="measure's batch: auto (None: vmap over the samples) or off (False: sample by sample)")
    ap.add_argument("--sim-precision", default=None, choices=("float64", "float32"))
    ap.add_argument("--floor", action="store_true",
                    help="also time PyTorch alone doing the factory's draws and one forward and backward per "
                         "sample by hand (float32, sample by sample): the bridge's floor on this machine")
    args = ap.parse_args()
    if args.repeats < 5:
        ap.error("--repeats: at least 5")
    torch.set_num_threads(args.threads)
    batch = None if args.batch == "auto" else False
    run_bridge = lambda: bridge(args.dtype, batch)  # noqa: E731
    run_sim = lambda: simulator(args.threads, args.sim_precision)  # noqa: E731
    run_bridge(), run_sim()  # warm-up: imports, allocator, OpenMP pools
    bridge_s, sim_s, parts, floor_s = [], [], {p: [] for p in PARTS}, []
    for _ in range(args.repeats):
        seconds, result = timed(run_bridge)
        bridge_s.append(seconds)
        for p in PARTS:
            parts[p].append(result.run_info["timings"][p])
        sim_s.append(timed(run_sim)[0])
        if args.floor:
            floor_s.append(floor())
    b, s = statistics.median(bridge_s), statistics.median(sim_s)
    blas = os.environ.get("LD_LIBRARY_PATH", "") or "(default libblas.so.3)"
    print(f"torch {torch.__version__}, {args.threads} thread(s), LD_LIBRARY_PATH={blas}, bridge dtype "
          f"{args.dtype} batch {args.batch}, simulator precision {args.sim_precision or 'float32 (default)'}")
    print(f"bridge    median {b:.3f} s  (of {args.repeats}: {', '.join(f'{x:.3f}' for x in sorted(bridge_s))})")
    print(f"simulator median {s:.3f} s  (of {args.repeats}: {', '.join(f'{x:.3f}' for x in sorted(sim_s))})")
    print(f"ratio bridge / simulator: {b / s:.2f}x")
    for p in PARTS:
        print(f"  bridge {p[:-len('_seconds')]:8s} {statistics.median(parts[p]):.3f} s")
    rest = b - sum(statistics.median(v) for v in parts.values())
    print(f"  bridge other    {rest:.3f} s (argument checks, warnings, medians of parts need not add up)")
    if floor_s:
        build = statistics.median(f[0] for f in floor_s)
        passes = statistics.median(f[1] for f in floor_s)
        total = statistics.median(f[0] + f[1] for f in floor_s)
        print(f"PyTorch alone by hand: median {total:.3f} s = {total / s:.2f}x the simulator "
              f"(factory and draws {build:.3f} s = {build / s:.2f}x, forward and backward {passes:.3f} s)")


if __name__ == "__main__":
    main()
