"""normsim.coord: the same fits as `normsim coord`, and a small muP / SP width check whose verdicts are
muP's flat curves and SP's growth (microsoft/mup README l.180-185), in a few seconds."""
import os
import subprocess
import textwrap
import unittest

from common import PROGRAM, Scratch, require_or_skip

require_or_skip("numpy", "pandas")
import pandas as pd  # noqa: E402

import normsim  # noqa: E402

# Pre-LN MLP, Adam on a fixed batch, 2 steps, widths 64..256 (base 64): the setting of the predicted rows
# (theory/scaling_exponents.hpp). update_lr 0.01 makes SP's update outgrow the init at these widths
# (lr x width = 0.64..2.56), which its predicted asymptote needs.
CONFIG = textwrap.dedent("""\
    parametrization = ["sp", "mup"]
    depth = 4
    tokens = 8
    samples = 4
    seed = 3
    steps = 2
    update = "adam"
    update_lr = 0.01
    base_width = 64
    metrics = ["act_mean_abs", "output_change"]
    """)
WIDTHS = [64, 128, 256]


def mean_rows(fits, setting, metric):
    rows = fits[(fits.setting == setting) & (fits.metric == metric) & (fits.layers == "mean")]
    return rows.set_index("step")


class Coord(unittest.TestCase):
    def test_same_as_cli_and_verdicts(self):
        with Scratch() as d:
            config = os.path.join(d, "coord.toml")
            with open(config, "w") as f:
                f.write(CONFIG)
            done = subprocess.run([PROGRAM, "coord", config, "--sweep", "width=64,128,256", "--out",
                                   os.path.join(d, "cli"), "--quiet", "--no-plots"], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            fits = normsim.coord(config, {"width": WIDTHS}, out=os.path.join(d, "py"))
            cli = pd.read_csv(os.path.join(d, "cli", "coord", "fits.csv"), dtype=str, keep_default_na=False)
            py = pd.read_csv(os.path.join(d, "py", "coord", "fits.csv"), dtype=str, keep_default_na=False)
            pd.testing.assert_frame_equal(cli, py)  # the same config and seed: the same file, byte for byte
            self.assertEqual(len(fits), len(cli))
            self.assertTrue((fits.exponent.astype(str) != "").all())
            mup = mean_rows(fits, "parametrization=mup", "output_change")
            sp = mean_rows(fits, "parametrization=sp", "output_change")
            # The verdicts are check's equivalence rule against the band (half way between muP's 0 and SP's 2):
            # muP's interval inside [-1, 1], SP's inside [1, inf), at both steps.
            for step in (1, 2):
                self.assertEqual(mup.loc[step, "verdict"], "supported", mup.loc[step].to_dict())
                self.assertEqual(sp.loc[step, "verdict"], "supported", sp.loc[step].to_dict())
                self.assertEqual(mup.loc[step, "predicted"], 0)
                self.assertEqual(sp.loc[step, "predicted"], 2)

    def test_depth_branch_multiplier(self):
        # rel_update at k = 0 is m_L^-alpha |F_0|/|x_0|: depth^-1/2 (depth_mup) at step 0, depth^-1
        # (completep) at every step; the interval is over 3 samples, the bands +-1/4 (step 0) and +-1/2.
        fits = normsim.coord({"parametrization": ["depth_mup", "completep"], "width": 32, "tokens": 4,
                              "samples": 3, "steps": 1, "update": "adam", "update_lr": 0.01, "base_width": 32,
                              "metrics": ["rel_update"]}, {"depth": [4, 8, 16]})
        first = fits[(fits.layers == "0") & (fits.metric == "rel_update")].set_index(["setting", "step"])
        self.assertAlmostEqual(first.loc[("parametrization=depth_mup", 0), "exponent"], -0.5, places=6)
        for step in (0, 1):
            row = first.loc[("parametrization=completep", step)]
            self.assertEqual(row["verdict"], "supported", row.to_dict())
            self.assertEqual(row["predicted"], -1)

    def test_bad_sweep(self):
        for sweep in ({"tokens": [4, 8]}, {"width": [64]}, {"width": [64, 128], "depth": [4, 8]}):
            with self.assertRaises(ValueError):
                normsim.coord({"depth": 4}, sweep)


if __name__ == "__main__":
    unittest.main()
