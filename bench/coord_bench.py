"""Issue 28 item 6's coordinate-check sweep (a benchmark, not a test): `normsim coord bench/coord_sweep.toml`
(muP, Pre-LN MLP ratio 4, float32, 10 Adam steps on a fixed batch of 64 tokens, 1 sample) over width x depth
grids, each grid one `normsim coord` process timed whole under /usr/bin/time -v (wall, user and system
seconds, minor page faults, peak RSS), the old program and the new one in turn on each grid, in one run:

    flock /tmp/normsim-heavy.lock /usr/bin/python3 bench/coord_bench.py --old build-base/normsim \\
        --grid 128,256,512,1024:4,8,16,32,64 --grid 2048,4096:4

Beside each grid, its floors:
- memory: its largest config's weights and Adam's two moments in float32, 3 x 4 bytes x 2 r d^2 L (normsim
  keeps D = W - W_0 in W's place and redraws W_0: sim/cpu/optimizer.hpp), and the peak RSS over that floor;
- arithmetic: the products' FLOPs (per sublayer, each of the steps + 1 forwards 2 x 2 T d H, each of the
  steps backwards 4 x 2 T d H: the input's gradient and the weights') over --gemm-rate, the machine's float32
  GEMM rate in GFLOP/s (bench/cpu_w1_bench.cpp measures it; no floor without it).
Then the seconds of each config as the new program's run.json gives them, and with --issue the floors of
the issue's whole grid (widths 128-4096 x depths 4-64). The load average is printed before and after, as
the machine is shared.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "coord_sweep.toml")
ISSUE_WIDTHS, ISSUE_DEPTHS = [128, 256, 512, 1024, 2048, 4096], [4, 8, 16, 32, 64]
MLP_RATIO, TOKENS, STEPS = 4, 64, 10  # coord_sweep.toml's
ADAM_BYTES_PER_WEIGHT = 3 * 4  # float32 D (W's place), m and v
TIME_FIELDS = {"user": r"User time \(seconds\): ([\d.]+)", "system": r"System time \(seconds\): ([\d.]+)",
               "faults": r"Minor \(reclaiming a frame\) page faults: (\d+)",
               "rss_kb": r"Maximum resident set size \(kbytes\): (\d+)",
               "wall": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)"}


def integers(text):
    return [int(v) for v in text.split(",")]


def grid(text):
    widths, depths = text.split(":")
    return integers(widths), integers(depths)


def floor_bytes(width, depth):
    return ADAM_BYTES_PER_WEIGHT * 2 * MLP_RATIO * width * width * depth


def gemm_flops(width, depth):
    hidden = MLP_RATIO * width
    per_pass = 2 * TOKENS * width * hidden  # one product
    return depth * per_pass * (2 * (STEPS + 1) + 4 * STEPS)


def wall_seconds(text):
    seconds = 0.0
    for part in text.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def measure(program, widths, depths, threads):
    """/usr/bin/time -v's fields of one `normsim coord` over widths x depths, and run.json's seconds per
    (width, depth)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "coord_sweep")
        command = ["/usr/bin/time", "-v", program, "coord", CONFIG, "--sweep",
                   "width=" + ",".join(map(str, widths)), "--set", "depth=[" + ",".join(map(str, depths)) + "]",
                   "--threads", str(threads), "--out", out, "-q", "--no-plots"]
        done = subprocess.run(command, check=True, stderr=subprocess.PIPE, text=True)
        with open(os.path.join(out, "run.json")) as f:
            run = json.load(f)
    fields = {name: re.search(pattern, done.stderr).group(1) for name, pattern in TIME_FIELDS.items()}
    fields["wall"] = wall_seconds(fields["wall"])
    seconds = {(c["values"]["width"], c["values"]["depth"]): s
               for c, s in zip(run["configs"], run["timings"]["configs_seconds"])}
    return {k: float(v) for k, v in fields.items()}, seconds


def report_grid(widths, depths, results, gemm_rate):
    floor = max(floor_bytes(w, d) for w in widths for d in depths)
    flops = sum(gemm_flops(w, d) for w in widths for d in depths)
    arithmetic = f", arithmetic floor {flops / gemm_rate / 1e9:.1f} s" if gemm_rate else ""
    print(f"\nwidths {widths} x depths {depths}: {flops / 1e12:.2f} TFLOP of products{arithmetic}, "
          f"memory floor {floor / 1e9:.2f} GB (largest config)")
    print("program  wall s  user s  system s  minor faults  peak RSS GB  RSS/floor")
    for name, (t, _) in results.items():
        rss = t["rss_kb"] * 1024
        print(f"{name:7s} {t['wall']:7.1f} {t['user']:7.1f} {t['system']:9.1f} {t['faults']:13.0f} "
              f"{rss / 1e9:12.2f} {rss / floor:10.2f}")
    if "old" in results and "new" in results:
        print(f"old/new wall {results['old'][0]['wall'] / results['new'][0]['wall']:.2f}x, peak RSS "
              f"{results['old'][0]['rss_kb'] / results['new'][0]['rss_kb']:.2f}x")


def report_configs(seconds, gemm_rate):
    print("\nwidth depth  seconds (new)  floor GB  arithmetic floor s")
    for (width, depth), s in sorted(seconds.items()):
        floor = f"{gemm_flops(width, depth) / gemm_rate / 1e9:18.2f}" if gemm_rate else ""
        print(f"{width:5d} {depth:5d} {s:14.2f} {floor_bytes(width, depth) / 1e9:9.2f}  {floor}")


def report_issue(gemm_rate):
    flops = sum(gemm_flops(w, d) for w in ISSUE_WIDTHS for d in ISSUE_DEPTHS)
    arithmetic = f", {flops / gemm_rate / 1e9 / 60:.1f} min at {gemm_rate} GFLOP/s" if gemm_rate else ""
    print(f"\nthe issue's grid (widths {ISSUE_WIDTHS} x depths {ISSUE_DEPTHS}): {flops / 1e12:.1f} TFLOP of "
          f"products per sample{arithmetic}; memory floors over 24 GiB:")
    for w in ISSUE_WIDTHS:
        over = [d for d in ISSUE_DEPTHS if floor_bytes(w, d) > 24 * 2**30]
        if over:
            print(f"  width {w} at depths {over} ({floor_bytes(w, over[0]) / 1e9:.1f} GB at depth {over[0]})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", type=grid, action="append", metavar="WIDTHS:DEPTHS",
                    help="a measured grid, its own normsim coord process (default 128,256,512,1024:4,8,16,32,64)")
    ap.add_argument("--threads", type=int, default=0, help="normsim's --threads (0: every core)")
    ap.add_argument("--program", default=os.path.join(HERE, "..", "build", "normsim"))
    ap.add_argument("--old", help="a second program (the base commit's), run before --program on each grid")
    ap.add_argument("--gemm-rate", type=float, help="the machine's float32 GEMM rate, GFLOP/s")
    ap.add_argument("--issue", action="store_true", help="print the floors of the issue's whole grid")
    args = ap.parse_args()
    programs = ([("old", args.old)] if args.old else []) + [("new", args.program)]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    seconds = {}
    for widths, depths in args.grid or [(ISSUE_WIDTHS[:4], ISSUE_DEPTHS)]:
        results = {name: measure(program, widths, depths, args.threads) for name, program in programs}
        seconds.update(results["new"][1])
        report_grid(widths, depths, results, args.gemm_rate)
        sys.stdout.flush()
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    report_configs(seconds, args.gemm_rate)
    if args.issue:
        report_issue(args.gemm_rate)


if __name__ == "__main__":
    sys.exit(main())
