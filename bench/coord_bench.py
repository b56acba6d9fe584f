"""Issue 28 item 6's coordinate-check sweep (a benchmark, not a test): `normsim coord bench/coord_sweep.toml`
(muP, Pre-LN MLP ratio 4, 10 Adam steps at 64 tokens, 1 sample) over a width x depth grid, timed as a user
runs it: one `normsim coord` process for the measured grid, its wall time and run.json's seconds per config.

    flock /tmp/normsim-heavy.lock /usr/bin/python3 bench/coord_bench.py --widths 128,256,512,1024 \\
        --depths 4,8,16,32,64

Configurations of the issue's grid (widths 128-4096 x depths 4-64) left out of the measured one are
extrapolated, each from the measured config of its width at the deepest measured depth, linearly in depth (a
sweep's cost is per sublayer; the table's measured rows show how well that holds), and failing that from the
widest measured config of its depth by width^p, p the exponent between the two widest measured widths at that
depth. Beside each config: Adam's state, D = W - W_0, m and v per weight (sim/optimizer.hpp), 3 x 4 bytes x
2 r d^2 L per sample in flight, which decides what fits in memory. The load average is printed before and
after, as the machine is shared.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "coord_sweep.toml")
ISSUE_WIDTHS, ISSUE_DEPTHS = [128, 256, 512, 1024, 2048, 4096], [4, 8, 16, 32, 64]
MLP_RATIO, ADAM_BYTES_PER_WEIGHT = 4, 3 * 4  # coord_sweep.toml's MLP, float32 D, m and v


def integers(text):
    return [int(v) for v in text.split(",")]


def adam_state_gb(width, depth):
    return ADAM_BYTES_PER_WEIGHT * 2 * MLP_RATIO * width * width * depth / 1e9


def measure(program, widths, depths, threads):
    """Wall seconds of one `normsim coord` over widths x depths and {(width, depth): seconds} from run.json."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "coord_sweep")
        command = [program, "coord", CONFIG, "--sweep", "width=" + ",".join(map(str, widths)), "--set",
                   "depth=[" + ",".join(map(str, depths)) + "]", "--threads", str(threads), "--out", out, "-q",
                   "--no-plots"]
        start = time.perf_counter()
        subprocess.run(command, check=True)
        wall = time.perf_counter() - start
        with open(os.path.join(out, "run.json")) as f:
            run = json.load(f)
    seconds = {(c["values"]["width"], c["values"]["depth"]): s
               for c, s in zip(run["configs"], run["timings"]["configs_seconds"])}
    return wall, seconds, run["peak_rss_bytes"]


def extrapolate(measured, width, depth):
    """(seconds, how) for a config outside the measured grid (see the module's docstring)."""
    same_width = sorted(d for w, d in measured if w == width)
    if same_width:
        d = same_width[-1]
        return measured[width, d] * depth / d, f"depth-linear from depth {d}"
    same_depth = sorted(w for w, d in measured if d == depth and w < width)
    if len(same_depth) < 2:
        return float("nan"), "no measured config to scale"
    w1, w2 = same_depth[-2:]
    p = math.log(measured[w2, depth] / measured[w1, depth]) / math.log(w2 / w1)
    return measured[w2, depth] * (width / w2) ** p, f"width^{p:.2f} from width {w2}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--widths", type=integers, default=[128, 256, 512, 1024])
    ap.add_argument("--depths", type=integers, default=ISSUE_DEPTHS)
    ap.add_argument("--extra", action="append", default=[], metavar="WIDTHS:DEPTHS",
                    help="a further measured grid, its own normsim coord process (e.g. 2048,4096:4)")
    ap.add_argument("--threads", type=int, default=0, help="normsim's --threads (0: every core)")
    ap.add_argument("--program", default=os.path.join(HERE, "..", "build", "normsim"))
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    grids = [(args.widths, args.depths)] + [tuple(map(integers, e.split(":"))) for e in args.extra]
    measured, walls = {}, []
    for widths, depths in grids:
        wall, seconds, rss = measure(args.program, widths, depths, args.threads)
        measured.update(seconds)
        walls.append(wall)
        print(f"normsim coord widths {widths} x depths {depths}: wall {wall:.1f} s, configs "
              f"{sum(seconds.values()):.1f} s, peak RSS {rss / 1e9:.2f} GB", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\nwidth depth   seconds  Adam state GB  how")
    total = {"measured": 0.0, "extrapolated": 0.0}
    for width in ISSUE_WIDTHS:
        for depth in ISSUE_DEPTHS:
            if (width, depth) in measured:
                seconds, how, kind = measured[width, depth], "measured", "measured"
            else:
                (seconds, how), kind = extrapolate(measured, width, depth), "extrapolated"
            total[kind] += seconds
            print(f"{width:5d} {depth:5d} {seconds:9.2f}  {adam_state_gb(width, depth):13.2f}  {how}")
    print(f"\nmeasured configs {total['measured']:.1f} s (wall {sum(walls):.1f} s), extrapolated configs "
          f"{total['extrapolated']:.0f} s: the issue's grid {sum(total.values()) / 60:.1f} min per sample")


if __name__ == "__main__":
    sys.exit(main())
