"""normsim.torch: PyTorch blocks written to match built-in placements agree with the simulator within 4
standard errors + 1% at every layer of every shared metric; a block that exists only in PyTorch goes through
`normsim plot` and its report."""
import json
import os
import subprocess
import unittest

from common import PROGRAM, Scratch, require_or_skip

require_or_skip("numpy", "pandas", "torch")
import numpy as np  # noqa: E402
import torch  # noqa: E402

import normsim  # noqa: E402
import torch_blocks as tb  # noqa: E402

D, T, K, SAMPLES, SEED = 32, 8, 6, 32, 1


def agreement(bridge, sim):
    """Rows (metric, l, k) of both summaries with |difference| > 4 se + 1% (se of the difference of two
    independent means: sqrt(se_a^2 + se_b^2)), and how many rows were compared."""
    a = bridge.summary.set_index(["metric", "l", "k"])[["mean", "se"]]
    b = sim.summary.set_index(["metric", "l", "k"])[["mean", "se"]]
    j = a.join(b, lsuffix="_torch", rsuffix="_sim", how="inner")
    allowed = 4 * np.sqrt(j.se_torch ** 2 + j.se_sim ** 2) + 0.01 * j.mean_sim.abs()
    return j[(j.mean_torch - j.mean_sim).abs() > allowed], j


class MatchesTheSimulator(unittest.TestCase):
    def compare(self, blocks, config, final_norm):
        bridge = normsim.torch.measure(blocks, x0=(T, D), depth=K, samples=SAMPLES, seed=SEED,
                                       final_norm=final_norm, progress=False)
        sim = normsim.run({**config, "width": D, "tokens": T, "depth": K, "samples": SAMPLES, "seed": SEED,
                           "precision": "float64"}, progress=False)
        bad, compared = agreement(bridge, sim)
        self.assertTrue(bad.empty, f"disagree beyond 4 se + 1%:\n{bad}")
        shared = set(compared.index.get_level_values("metric"))
        expected = {"act_sq", "grad_sq", "cos_next", "token_cos", "eff_rank", "branch_sq", "rel_update",
                    "act_mean_abs", "act_max_abs", "gradw_w1", "gradw_w2"}
        self.assertTrue(expected <= shared, f"metrics not compared: {expected - shared}")
        return compared

    def test_pre_ln_mlp(self):
        compared = self.compare(tb.pre_mlp(D), {"placement": "pre"}, torch.nn.LayerNorm(D, eps=tb.EPS))
        self.assertEqual(len(compared[compared.index.get_level_values("metric") == "act_sq"]), K + 1)

    def test_post_ln_mlp(self):
        self.compare(tb.post_mlp(D), {"placement": "post"}, None)  # Post-LN ends in a norm: no final norm

    def test_pre_ln_transformer(self):
        compared = self.compare(tb.pre_transformer(D, 4),
                                {"placement": "pre", "sublayer": "transformer", "heads": 4},
                                torch.nn.LayerNorm(D, eps=tb.EPS))
        metrics = set(compared.index.get_level_values("metric"))
        self.assertTrue({"gradw_wq", "gradw_wk", "gradw_wv", "gradw_wo"} <= metrics)


class Forms(unittest.TestCase):
    def test_same_seed_same_numbers_and_fresh_inits_per_sample(self):
        def measure(blocks, **kw):
            return normsim.torch.measure(blocks, x0=(T, D), samples=3, seed=5, progress=False, **kw)
        a, b = measure(tb.pre_mlp(D), depth=3), measure(tb.pre_mlp(D), depth=3)
        np.testing.assert_array_equal(a.per_sample["grad_sq"], b.per_sample["grad_sq"])
        self.assertEqual(len(set(a.per_sample["gradw_w1"][0, :, 0])), 3)  # each sample its own weights
        modules = [tb.PreLN(D, tb.Mlp(D)) for _ in range(3)]  # a list: reset_parameters() per sample
        c = measure(modules)
        self.assertEqual(c.per_sample["act_sq"].shape, (1, 3, 4))
        self.assertEqual(len(set(c.per_sample["gradw_w1"][0, :, 0])), 3)
        fixed = torch.randn(T, D, dtype=torch.float64)  # a tensor: the same input for every sample
        d = normsim.torch.measure(tb.pre_mlp(D), x0=fixed, depth=3, samples=3, seed=5, progress=False)
        self.assertEqual(len(set(d.per_sample["act_sq"][0, :, 0])), 1)


class OnlyInPyTorch(unittest.TestCase):
    def test_qk_norm_block_plots_and_reports(self):
        r = normsim.torch.measure({"qknorm-out": tb.qknorm_output_norm(D, 4), "pre": tb.pre_transformer(D, 4)},
                                  x0=(T, D), depth=K, samples=8, seed=SEED, progress=False)
        self.assertEqual(list(r.config.placement), ["qknorm-out", "pre"])
        self.assertIn("gradw_q_norm", set(r.summary.metric))  # every named parameter
        self.assertEqual(r.per_sample["act_sq"].shape, (2, 8, K + 1))
        with Scratch() as d:
            out = os.path.join(d, "out")
            r.save(out)
            back = normsim.read(out)
            np.testing.assert_array_equal(back.per_sample["act_sq"], r.per_sample["act_sq"])
            done = subprocess.run([PROGRAM, "plot", out, "--format", "png"], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            figures = os.listdir(os.path.join(out, "figures"))
            self.assertIn("profile_act_sq.png", figures)
            self.assertIn("profile_grad_sq.png", figures)
            with open(os.path.join(out, "report.html")) as f:
                self.assertIn("profile_act_sq", f.read())
            with open(os.path.join(out, "run.json")) as f:
                self.assertIn("gradw_q_norm", json.load(f)["metrics"])

    def test_nonfinite_layer(self):
        class Blowup(torch.nn.Module):
            def forward(self, x):
                return x * 1e200

        r = normsim.torch.measure(lambda k: Blowup(), x0=(T, D), depth=4, samples=2, progress=False)
        self.assertEqual(list(r.nonfinite["pass"]), ["forward", "forward"])
        self.assertEqual(list(r.nonfinite["layer"]), [2, 2])  # x_2 = 1e400 x_0 overflows
        self.assertEqual(sorted(r.summary[r.summary.metric == "act_sq"].l), [0])  # x_1's square overflows


if __name__ == "__main__":
    unittest.main()
