"""Compares two `normsim check` runs (verdicts.json of each, e.g. the CPU backend's and the GPU's): per claim
the verdicts and the measured values, their difference in standard errors of the difference
(sqrt(se_a^2 + se_b^2)). Prints every claim whose verdict differs or whose values are more than 3 standard
errors apart, then one summary line. Exit 1 when a verdict differs, 0 otherwise.

Usage: python3 scripts/compare_verdicts.py A/verdicts.json B/verdicts.json
Standard library only (it runs on bare GPU machines)."""
import json
import math
import statistics
import sys


def load(path):
    with open(path) as f:
        return {v["id"]: v for v in json.load(f)}


def number(v):
    return float("nan") if v is None else float(v)


def main(a_path, b_path):
    a, b = load(a_path), load(b_path)
    shared = [i for i in a if i in b]
    z_all, verdicts_differ, far = [], [], []
    for i in shared:
        x, y = a[i], b[i]
        ma, mb = number(x.get("measured")), number(y.get("measured"))
        se = math.hypot(number(x.get("se")), number(y.get("se")))
        z = abs(ma - mb) / se if se > 0 else (0.0 if ma == mb else math.inf)
        if math.isfinite(ma) and math.isfinite(mb) and not math.isnan(z):
            z_all.append(z)
        who = f"{i} [{x.get('backend', '?')} / {y.get('backend', '?')}]"
        line = f"{who}: {x['verdict']} / {y['verdict']}, measured {ma:.6g} / {mb:.6g} ({z:.3g} standard errors)"
        if x["verdict"] != y["verdict"]:
            verdicts_differ.append(line)
        elif z > 3:
            far.append(line)
    for line in verdicts_differ:
        print("verdict differs: " + line)
    for line in far:
        print("more than 3 standard errors apart: " + line)
    devices = sorted({v.get("device", "?") for v in b.values()})
    print(f"devices of the second run: {'; '.join(devices)}")
    median = statistics.median(z_all) if z_all else math.nan
    print(f"{len(shared)} claims in both: {len(shared) - len(verdicts_differ)} verdicts the same; measured values "
          f"differ by a median of {median:.3g} standard errors, {len(far) + len(verdicts_differ)} by more than 3 "
          f"or in verdict (only in one run: {len(a) - len(shared)} / {len(b) - len(shared)})")
    return 1 if verdicts_differ else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
