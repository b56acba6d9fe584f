"""normsim.torch: PyTorch blocks written to match built-in placements agree with the simulator within 4
standard errors + 1% at every layer of every shared metric; a block that exists only in PyTorch goes through
`normsim plot` and its report."""
import gc
import json
import os
import subprocess
import unittest

from common import PROGRAM, Scratch, require_or_skip

require_or_skip("numpy", "pandas", "torch")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

import normsim  # noqa: E402
import hyper_connections as hc  # noqa: E402
import value_residual as vr  # noqa: E402
import torch_blocks as tb  # noqa: E402

D, T, K, SAMPLES, SEED = 32, 8, 6, 32, 1


def agreement(bridge, sim, without=frozenset()):
    """Rows (metric, l, k) of both summaries with |difference| > 4 se + 1% (se of the difference of two
    independent means: sqrt(se_a^2 + se_b^2)), and how many rows were compared; metrics `without` are not."""
    a = bridge.summary[~bridge.summary.metric.isin(without)].set_index(["metric", "l", "k"])[["mean", "se"]]
    b = sim.summary.set_index(["metric", "l", "k"])[["mean", "se"]]
    j = a.join(b, lsuffix="_torch", rsuffix="_sim", how="inner")
    allowed = 4 * np.sqrt(j.se_torch ** 2 + j.se_sim ** 2) + 0.01 * j.mean_sim.abs()
    return j[(j.mean_torch - j.mean_sim).abs() > allowed], j


CORR = 0.5


def correlated_tokens(generator):
    """x_0[t] = sqrt(rho) c + sqrt(1 - rho) z[t], c and z N(0, 1): the simulator's input_corr (sim/inputs.hpp)."""
    c, z = torch.randn(1, D, generator=generator, dtype=torch.float64), torch.randn(T, D, generator=generator,
                                                                                     dtype=torch.float64)
    return CORR ** 0.5 * c + (1 - CORR) ** 0.5 * z


STREAM_AND_MLP = {"act_sq", "grad_sq", "cos_next", "token_cos", "eff_rank", "branch_sq", "rel_update",
                  "act_mean_abs", "act_max_abs", "gradw_w1", "gradw_w2"}


def lanes_grad_sq_agreement(bridge, sim):
    """The bridge's grad_sq over n lanes side by side (the mean square of every lane's gradient) against the
    mean over lanes of the simulator's per-lane grad_sq rows (lane "0".."n-1"; docs/metrics.md, "Lanes"):
    the layers l beyond 4 se + 1%, and the layers compared. The lanes of one sample are correlated, so the se of
    their mean is bounded by the mean of their se (the triangle inequality for standard deviations), used here."""
    rows = sim.summary[(sim.summary.metric == "grad_sq") & ~sim.summary.lane.isin(["", "mean"])]
    lanes = rows.groupby("l")[["mean", "se"]].mean()  # a stream metric: k is empty
    a = bridge.summary[bridge.summary.metric == "grad_sq"].set_index("l")[["mean", "se"]]
    j = a.join(lanes, lsuffix="_torch", rsuffix="_sim", how="inner")
    allowed = 4 * np.sqrt(j.se_torch ** 2 + j.se_sim ** 2) + 0.01 * j.mean_sim.abs()
    return j[(j.mean_torch - j.mean_sim).abs() > allowed], j


class MatchesTheSimulator(unittest.TestCase):
    def measure_both(self, blocks, config, final_norm, x0=(T, D), **options):
        """The PyTorch blocks through normsim.torch and the simulator's config, at the same size and seed."""
        options.setdefault("dtype", torch.float64)
        depth = None if options.get("batch") is False else K  # a factory () -> list (value_residual.py)
        bridge = normsim.torch.measure(blocks, x0=x0, depth=depth, samples=SAMPLES, seed=SEED,
                                       final_norm=final_norm, progress=False, **options)
        sim = normsim.run({**config, "width": D, "tokens": T, "depth": K, "samples": SAMPLES, "seed": SEED,
                           "precision": "float64"}, progress=False)
        return bridge, sim

    def compare(self, blocks, config, final_norm, expected=STREAM_AND_MLP, x0=(T, D), without=frozenset(),
                **options):
        """Every metric of `expected` but those `without` agrees; `options` go to measure()."""
        return self.agrees(*self.measure_both(blocks, config, final_norm, x0, **options), expected, without)

    def agrees(self, bridge, sim, expected=STREAM_AND_MLP, without=frozenset()):
        bad, compared = agreement(bridge, sim, without)
        self.assertTrue(bad.empty, f"disagree beyond 4 se + 1%:\n{bad}")
        shared = set(compared.index.get_level_values("metric"))
        expected = expected - without
        self.assertTrue(expected <= shared, f"metrics not compared: {expected - shared}")
        return compared

    def test_pre_ln_mlp(self):
        compared = self.compare(tb.pre_mlp(D), {"placement": "pre"}, torch.nn.LayerNorm(D, eps=tb.EPS))
        self.assertEqual(len(compared[compared.index.get_level_values("metric") == "act_sq"]), K + 1)

    def test_post_ln_mlp(self):
        self.compare(tb.post_mlp(D), {"placement": "post"}, None)  # Post-LN ends in a norm: no final norm

    def test_dyt_transformer_and_derf_mlp(self):
        """DyT and Derf blocks from their official code (torch_blocks.py) against norm = "dyt" / "derf" with
        per-sublayer alphas, a shift and a final norm of its own: the same 4 se + 1% agreement."""
        self.compare(tb.pre_dyt_transformer(D, 4, 0.8, 0.2),
                     {"placement": "pre", "sublayer": "transformer", "heads": 4, "norm": "dyt",
                      "norm_alpha": "attention ? 0.8 : 0.2", "final_norm_alpha": 0.3},
                     tb.DynamicTanh(D, 0.3))
        self.compare(tb.pre_derf_mlp(D, 0.7, 0.2),
                     {"placement": "pre", "norm": "derf", "norm_alpha": "0.7", "norm_shift": "0.2",
                      "final_norm_alpha": 0.7, "final_norm_shift": 0.2},
                     tb.DynamicErf(D, 0.7, 0.2))

    def test_gated_attention_transformer(self):
        """Gated attention from its official code (torch_blocks.GatedAttention) against attention_gate =
        "elementwise" / "headwise": the same 4 se + 1% agreement; W_K, W_V, W_O's gradients compared too (the
        official q_proj holds W_Q and W_g in one matrix, so gradw_q_proj has no simulator twin). The comparison
        sees the gate (against attention_gate = "none", 29 of 75 rows elementwise and 33 headwise disagree), not
        its variant: elementwise and headwise have the same expectations (docs/theory_notes.md)."""
        for gate in ("elementwise", "headwise"):
            with self.subTest(gate=gate):
                compared = self.compare(tb.pre_gated_transformer(D, 4, gate),
                                        {"placement": "pre", "sublayer": "transformer", "heads": 4,
                                         "attention_gate": gate},
                                        torch.nn.LayerNorm(D, eps=tb.EPS))
                metrics = set(compared.index.get_level_values("metric"))
                self.assertTrue({"gradw_wk", "gradw_wv", "gradw_wo"} <= metrics)

    def test_mixtral_and_olmoe_routed_mlp(self):
        """The routed MLP from Mixtral's and OLMoE's official code (torch_blocks.SparseMoeBlock, in Mixtral's
        x + MoE(RMSNorm(x))) against moe_experts = 4 with moe_gate "renormalized" (Mixtral, norm_topk_prob) and
        "softmax" (OLMoE), k = 1 and 2: the same 4 se + 1% agreement on every stream metric. The inputs'
        tokens are correlated (input_corr 0.5), so that routing shows in token_cos: against the dense SwiGLU MLP
        (moe_experts 0) 7, 27, 39 and 37 of the 60 rows disagree (renormalized k = 1, 2; softmax k = 1, 2),
        against the routed MLP none (worst 2.3 se).
        The experts' weight gradients are not compared: the simulator's gradw_w1 is the norm over all experts'
        matrices together, the bridge's one per expert (gradw_experts_0_w1, ...), and the router is `gate`."""
        streams = STREAM_AND_MLP - {"gradw_w1", "gradw_w2"}
        for gate, norm_topk_prob in (("renormalized", True), ("softmax", False)):
            for k in (1, 2):
                with self.subTest(gate=gate, k=k):
                    self.compare(tb.pre_rms_moe(D, 4, k, norm_topk_prob),
                                 {"placement": "pre", "norm": "rmsnorm", "activation": "swiglu", "moe_experts": 4,
                                  "moe_top_k": k, "moe_gate": gate, "input_corr": CORR},
                                 tb.MixtralRMSNorm(D), streams, correlated_tokens)

    def test_ngpt_unit_norm_transformer(self):
        """nGPT's layer from NVIDIA/ngpt model.py (torch_blocks.ngpt_transformer: justnorm'd streams and heads,
        lr 0.05, SwiGLU with suv, unit-norm weights of train.py's normalize_matrices, causal, no RoPE) against
        experiments/placements/ngpt.toml's block with init = "unit": the same 4 se + 1% agreement (0 of 81 rows
        beyond it; against init = "fanin", 6 of 81 are, the weights' gradients among them). normsim's N is an
        RMSNorm (eps 1e-5) where justnorm has none: at streams of mean square 1 they differ by eps/2."""
        self.compare(tb.ngpt_transformer(D, 4),
                     {"placement": "custom", "block": "N(N(x) + 0.05 * (N(F(x)) - N(x)))", "sublayer": "transformer",
                      "heads": 4, "norm": "rmsnorm", "activation": "swiglu", "qk_norm": True, "causal": True,
                      "init": "unit"},
                     None)

    def test_olmo2_transformer_with_qk_norm_over_the_projection(self):
        """OLMo-2's layer from transformers' modeling_olmo2.py (torch_blocks.olmo2_transformer: q_norm, k_norm
        over the whole projection, SwiGLU, x + RMSNorm(F(x)), a final RMSNorm) against placement = "olmo2"
        with qk_norm_scope = "projection": the same 4 se + 1% agreement, the attention's gradients too. The
        comparison sees the QK-norm (against qk_norm = false, 14 of 81 rows disagree), not its scope: against
        qk_norm_scope = "head" none do (at d = 32, 4 heads, these metrics have the same expectations; the scopes
        differ sample by sample, tests/sim/test_forward_hand.cpp)."""
        compared = self.compare(tb.olmo2_transformer(D, 4),
                                {"placement": "olmo2", "sublayer": "transformer", "heads": 4, "norm": "rmsnorm",
                                 "activation": "swiglu", "qk_norm": True, "qk_norm_scope": "projection"},
                                tb.Olmo2RMSNorm(D))
        metrics = set(compared.index.get_level_values("metric"))
        self.assertTrue({"gradw_wq", "gradw_wk", "gradw_wv", "gradw_wo", "gradw_wgate"} <= metrics)

    def test_hyper_connections_lanes(self):
        """lucidrains' HC (n = 2, 4) and mHC (n = 4) at their inits (hyper_connections.py) against the same
        blocks of lanes in the simulator (experiments/placements/hc.toml): the same 4 se + 1% agreement on
        every shared metric. The bridge's stream is the n lanes side by side, so its grad_sq is the mean of
        the lanes' own gradients' mean squares, while the simulator's lanes'-mean row is that of the lanes'
        summed gradient: grad_sq is compared with the mean of the simulator's per-lane rows instead
        (lanes_grad_sq_agreement; measured: every layer within 1.12 se, while the lanes'-mean row is 2.4 to 17
        times the bridge's, so the comparison sees which gradient it reads). The weights' gradients, which the
        readout of the lanes' sum reaches through every lane, are compared as any metric."""
        for n, manifold in ((2, False), (4, False), (4, True)):
            with self.subTest(n=n, manifold=manifold):
                bridge, sim = self.measure_both(hc.transformer(D, 4, n, manifold),
                                                {"placement": "custom", "block": hc.block_text(n, manifold),
                                                 "sublayer": "transformer", "heads": 4},
                                                hc.LanesSumNorm(D, n), x0=hc.expanded_input(T, D, n))
                compared = self.agrees(bridge, sim, without=frozenset({"grad_sq"}))
                self.assertIn("gradw_wq", set(compared.index.get_level_values("metric")))
                bad, lanes = lanes_grad_sq_agreement(bridge, sim)
                self.assertTrue(bad.empty, f"grad_sq disagrees beyond 4 se + 1%:\n{bad}")
                self.assertEqual(len(lanes), K + 1)  # every layer's gradient, x_0's included

    def test_resformer_value_residual(self):
        """ResFormer's attention from the official code (value_residual.py: modeling_llama_resformer.py
        l.377-381, V_1 of layer 0 mixed 0.5/0.5 into every later layer, causal, no RoPE) against
        `x + Fv(N(x), 0.5)`: the same 4 se + 1% agreement, W_V's gradient (which V_1's edges reach) too. V_1
        is fed by a Carry shared by one sample's blocks (the bridge carries only x_k), so the stack runs
        sample by sample (batch=False). Measured (attention, 84 rows): 0 beyond the band; against the plain
        block x + F(N(x)), 55 of 84 are (the comparison sees the value residual)."""
        for sublayer in ("attention", "transformer"):
            with self.subTest(sublayer=sublayer):
                compared = self.compare(vr.resformer(D, 4, K, sublayer),
                                        {"placement": "custom", "block": "x + Fv(N(x), 0.5)", "sublayer": sublayer,
                                         "heads": 4, "causal": True},
                                        torch.nn.LayerNorm(D, eps=tb.EPS), batch=False,
                                        expected={"act_sq", "grad_sq", "token_cos", "branch_sq", "gradw_wv"})
                self.assertIn("gradw_wv", set(compared.index.get_level_values("metric")))

    def test_nanochat_embedding_skip(self):
        """nanochat's x <- resid_lambdas[i] x + x0_lambdas[i] x0 before each layer, at its init (value_residual.py:
        gpt.py l.238, 241, 495, 500) against the pair block value_residual.NANOCHAT_BLOCK reading emb: the same
        4 se + 1% agreement. x_0 is fed by a Carry (batch=False), as V_1 above."""
        self.compare(vr.nanochat(D, 4, K),
                     {"placement": "custom", "block": vr.NANOCHAT_BLOCK, "sublayer": "transformer", "heads": 4},
                     torch.nn.LayerNorm(D, eps=tb.EPS), batch=False,
                     expected={"act_sq", "grad_sq", "token_cos", "branch_sq", "gradw_w1"})

    def test_pre_ln_transformer(self):
        compared = self.compare(tb.pre_transformer(D, 4),
                                {"placement": "pre", "sublayer": "transformer", "heads": 4},
                                torch.nn.LayerNorm(D, eps=tb.EPS))
        metrics = set(compared.index.get_level_values("metric"))
        self.assertTrue({"gradw_wq", "gradw_wk", "gradw_wv", "gradw_wo"} <= metrics)


    def test_biases_on_every_linear(self):
        """nn.Linear(bias=True) in every matrix of a Pre-LN MLP stack and transformer, biases N(0, 0.5^2)
        (torch_blocks.linear) against bias = true, init_bias = 0.5: the same 4 se + 1% agreement; the
        biases' gradients (gradw_w1_bias, ...) have no simulator twin and are not compared. Measured: worst
        2.2 se (MLP) and 2.5 se (transformer); against bias = false, 56 of 72 and 62 of 78 rows disagree."""
        config = {"placement": "pre", "bias": True, "init_bias": 0.5}
        self.compare(tb.pre_mlp(D, 0.5), config, torch.nn.LayerNorm(D, eps=tb.EPS))
        self.compare(tb.pre_transformer(D, 4, 0.5), {**config, "sublayer": "transformer", "heads": 4},
                     torch.nn.LayerNorm(D, eps=tb.EPS))


class Forms(unittest.TestCase):
    def test_same_seed_same_numbers_and_fresh_inits_per_sample(self):
        def measure(blocks, **kw):
            return normsim.torch.measure(blocks, x0=(T, D), samples=3, seed=5, progress=False, final_norm=None, **kw)
        a, b = measure(tb.pre_mlp(D), depth=3), measure(tb.pre_mlp(D), depth=3)
        np.testing.assert_array_equal(a.array("grad_sq"), b.array("grad_sq"))
        self.assertEqual(len(set(a.array("gradw_w1")[0, :, 0])), 3)  # each sample its own weights
        modules = [tb.PreLN(D, tb.Mlp(D)) for _ in range(3)]  # a list: reset_parameters() per sample
        c = measure(modules)
        self.assertEqual(c.array("act_sq").shape, (1, 3, 4))
        self.assertEqual(len(set(c.array("gradw_w1")[0, :, 0])), 3)
        fixed = torch.randn(T, D, dtype=torch.float64)  # a tensor: the same input for every sample
        d = normsim.torch.measure(tb.pre_mlp(D), x0=fixed, depth=3, samples=3, seed=5, progress=False,
                                  final_norm=None)
        self.assertEqual(len(set(d.array("act_sq")[0, :, 0])), 1)


class Devices(unittest.TestCase):
    """device=: draws are made on the CPU, so a device changes the rounding of the arithmetic only."""

    def test_cpu_device_is_the_default_and_a_missing_cuda_is_refused_with_the_fix(self):
        kw = dict(x0=(T, D), depth=3, samples=2, seed=4, progress=False, final_norm=None)
        a = normsim.torch.measure(tb.pre_mlp(D), **kw)
        b = normsim.torch.measure(tb.pre_mlp(D), device="cpu", **kw)
        pd.testing.assert_frame_equal(a.summary, b.summary, check_exact=True)
        self.assertEqual(b.run_info["device"], "cpu")
        with self.assertRaisesRegex(ValueError, "not a torch device"):
            normsim.torch.measure(tb.pre_mlp(D), device="tpu-ish", **kw)
        if not torch.cuda.is_available():
            with self.assertRaisesRegex(ValueError, "sees no CUDA device"):
                normsim.torch.measure(tb.pre_mlp(D), device="cuda", **kw)

    @unittest.skipUnless(torch.cuda.is_available(), "no CUDA device for torch")
    def test_cuda_gives_the_cpus_samples_to_rounding(self):
        # float64 on both: the same weights and inputs, sums in other orders. Relative differences of a
        # few 1e-16 per operation, through depth 3: far below 1e-9 (and far above it if a draw differed).
        kw = dict(x0=(T, D), depth=3, samples=2, seed=4, progress=False, final_norm=None, dtype=torch.float64)
        a = normsim.torch.measure(tb.pre_mlp(D), **kw)
        b = normsim.torch.measure(tb.pre_mlp(D), device="cuda", **kw)
        np.testing.assert_allclose(b.array("grad_sq"), a.array("grad_sq"), rtol=1e-9)
        self.assertIn("cuda", b.run_info["device"])


class Residual(torch.nn.Sequential):
    """One block written as an nn.Sequential subclass: x + its layers (not a stack of them)."""

    def forward(self, x):
        return x + super().forward(x)


class Misuse(unittest.TestCase):
    """Issue 30 item 3: set-ups the bridge can detect are refused or warned about, with the fix."""
    kw = dict(x0=(T, D), samples=1, seed=0, progress=False, final_norm=None)

    def test_sequence_first_attention_is_refused(self):
        mha = lambda k: tb.PreLN(D, SelfAttention(torch.nn.MultiheadAttention(D, 4)))  # noqa: E731
        with self.assertRaisesRegex(ValueError, "batch_first=False.*batch_first=True"):
            normsim.torch.measure(mha, depth=2, **self.kw)
        layer = lambda k: torch.nn.TransformerEncoderLayer(D, 4, dropout=0.0)  # noqa: E731
        with self.assertRaisesRegex(ValueError, "submodule 'self_attn'"):
            normsim.torch.measure(layer, depth=2, **self.kw)
        ok = lambda k: torch.nn.TransformerEncoderLayer(D, 4, dropout=0.0, batch_first=True)  # noqa: E731
        normsim.torch.measure(ok, depth=2, **self.kw)

    def test_depth_that_a_list_would_ignore_and_bad_shapes_are_named(self):
        with self.assertRaisesRegex(ValueError, "depth=5 with a list of 3 modules"):
            normsim.torch.measure([tb.PreLN(D, tb.Mlp(D)) for _ in range(3)], depth=5, **self.kw)
        with self.assertRaisesRegex(ValueError, r"x0=\(8,\): a shape \(T, d\)"):
            normsim.torch.measure(tb.pre_mlp(D), depth=2, **{**self.kw, "x0": (8,)})

    def test_dtype_as_torch_dtype_or_name(self):
        a = normsim.torch.measure(tb.pre_mlp(D), depth=2, dtype=torch.float32, **self.kw)
        b = normsim.torch.measure(tb.pre_mlp(D), depth=2, dtype="float32", **self.kw)
        pd.testing.assert_frame_equal(a.summary, b.summary, check_exact=True)
        with self.assertRaisesRegex(ValueError, "torch.float64 or torch.float32"):
            normsim.torch.measure(tb.pre_mlp(D), depth=2, dtype=torch.int32, **self.kw)

    def test_misuse_names_the_mistake_and_the_fix(self):
        """Mistakes that ended in raw Python or torch errors deep in the bridge (a lambda's "takes 0 positional
        arguments", torch's "mat1 and mat2 shapes cannot be multiplied", "stack expects a non-empty
        TensorList", an IndexError, "'function' object has no attribute 'modules'") name the argument or the
        block, and the fix."""
        block = lambda k: tb.PreLN(D, tb.Mlp(D))  # noqa: E731
        widths = lambda k: tb.PreLN(D if k < 2 else 2 * D, tb.Mlp(D if k < 2 else 2 * D))  # noqa: E731
        lstm = lambda k: torch.nn.LSTM(D, D, batch_first=True)  # noqa: E731
        cases = {
            "() -> list given depth": (TypeError, r"factory \(\) -> list of modules \(it takes no argument\), "
                                       r"given depth=3.*drop depth=", dict(blocks=lambda: [block(0)], depth=3)),
            "k -> module without depth": (TypeError, r"factory k -> module .*pass depth=K", dict(blocks=block)),
            "x0 wider than the blocks": (ValueError, r"block 0 \(PreLN\) cannot take an input of shape \(1, T, d\) "
                                         r"= \(1, 8, 33\), from x0 of shape \(T, d\) = \(8, 33\): .*size.*"
                                         r"Give x0 the shape \(T, d\) the blocks are built for",
                                         dict(blocks=block, depth=3, x0=(T, D + 1))),
            "x0 narrower than a linear": (ValueError, r"block 0 \(Linear\) cannot take an input .* = \(8, 31\): "
                                          r"mat1 and mat2 shapes",
                                          dict(blocks=lambda k: torch.nn.Linear(D, D), depth=2, x0=(T, D - 1))),
            "a block of another width": (ValueError, r"block 2 \(PreLN\) cannot take",
                                         dict(blocks=widths, depth=3)),
            "a block returning a tuple": (TypeError, r"block 0 \(LSTM\) returned a tuple, not a tensor.*"
                                          r"self.lstm\(x\)\[0\]", dict(blocks=lstm, depth=2)),
            "depth 0": (ValueError, r"depth=0: the number of blocks K.*an int >= 1", dict(blocks=block, depth=0)),
            "samples 0": (ValueError, r"samples=0: .*an int >= 1", dict(blocks=block, depth=2, samples=0)),
            "a function as a block": (TypeError, r"block 0 is a function, not an nn.Module; wrap a function f",
                                      dict(blocks=lambda k: (lambda x: 2 * x), depth=2)),
            "a function in a list": (TypeError, r"block 1 is a function, not an nn.Module",
                                     dict(blocks=[block(0), lambda x: x])),
            "one module as the blocks": (TypeError, r"blocks is a torch_blocks.PreLN; it must be a factory",
                                         dict(blocks=block(0), depth=2)),
            "an empty list": (ValueError, r"holds no block", dict(blocks=[])),
            "one nn.Sequential subclass from a () factory": (TypeError, r"the factory's list is a .*Residual, not a "
                                                              r"list of modules",
                                                              dict(blocks=lambda: Residual(torch.nn.Linear(D, D)))),
            "a dict from a () factory": (TypeError, r"the factory's list is a dict.*measure\(blocks=\{name",
                                         dict(blocks=lambda: {"a": block(0)})),
            "a block changing the stream's shape": (ValueError, r"block 0 \(Linear\) maps the stream of shape "
                                                    r"\(1, 8, 32\) to one of shape \(1, 8, 64\)",
                                                    dict(blocks=lambda k: torch.nn.Linear(D, 2 * D), depth=1)),
        }
        for what, (error, message, kw) in cases.items():
            with self.subTest(what), self.assertRaisesRegex(error, message):
                normsim.torch.measure(**{**self.kw, **kw})

    def test_a_factory_may_return_a_container_of_blocks(self):
        # () -> nn.Sequential or a generator: its blocks, as list() gives them (what the bridge did before it
        # checked the blocks), the same numbers as the list itself.
        def stack():
            torch.manual_seed(5)
            return [tb.PreLN(D, tb.Mlp(D)) for _ in range(2)]
        listed = normsim.torch.measure(lambda: stack(), **self.kw)
        for wrap in (lambda: torch.nn.Sequential(*stack()), lambda: (b for b in stack())):
            measured = normsim.torch.measure(wrap, **self.kw)
            for m in ("act_sq", "grad_sq"):
                self.assertTrue((measured.per_sample[m].values == listed.per_sample[m].values).all(), m)
        # blocks given as an nn.Sequential (not from a factory) are its blocks, as the same list is.
        sequential = torch.nn.Sequential(*stack())
        as_list = normsim.torch.measure(list(sequential), **self.kw)
        as_sequential = normsim.torch.measure(sequential, **self.kw)
        self.assertTrue((as_list.per_sample["act_sq"].values == as_sequential.per_sample["act_sq"].values).all())

    def test_a_missing_final_norm_is_warned_about_and_none_is_not(self):
        # The warning says what normsim.run's 'auto' does for both kinds of stack, since it cannot tell them
        # apart: a pre-norm-like one ends in a norm, a post-norm one (already ending in one) does not.
        with self.assertWarnsRegex(UserWarning, r"pre-norm-like stack .* final_norm=nn.LayerNorm\(d\).*post-norm "
                                                r"stack .* final_norm=None is what normsim.run does"):
            normsim.torch.measure(tb.pre_mlp(D), x0=(T, D), depth=2, samples=1, progress=False)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            normsim.torch.measure(tb.pre_mlp(D), depth=2, **self.kw)


class SavedAndRead(unittest.TestCase):
    """A bridge Result saved and read back (normsim.read, then save again): text holding a comma or a quote is
    quoted as the C++ writer quotes it (io::csv_field), every double reads back as the same double and is
    spelled as io::format_number spells it, and theory is the same empty frame, with its columns, measured and
    read."""
    kw = dict(x0=(T, D), depth=2, samples=2, seed=0, progress=False, final_norm=None)

    def test_quoted_text_and_exact_doubles_round_trip(self):
        names = ["x + Fv(N(x), 0.5)", 'a "quoted" block']
        r = normsim.torch.measure({n: tb.pre_mlp(D) for n in names}, **self.kw)
        special = [-0.0, 1e20, 5e-324, np.nan, np.inf, -np.inf, 0.1, 1e-4]
        r.summary.loc[: len(special) - 1, "mean"] = special
        with Scratch() as d:
            r.save(os.path.join(d, "a"))
            with open(os.path.join(d, "a", "summary.csv")) as f:
                text = f.read()
            self.assertIn('"x + Fv(N(x), 0.5)"', text)
            self.assertIn('"a ""quoted"" block"', text)
            rows = [line.rsplit(",", 3)[1] for line in text.splitlines()[1:len(special) + 1]]
            self.assertEqual(rows, ["-0", "1e+20", "5e-324", "nan", "inf", "-inf", "0.1", "1e-04"])  # C++'s
            back = normsim.read(os.path.join(d, "a"))
            self.assertEqual(list(back.configs.placement), names)
            pd.testing.assert_frame_equal(back.summary, r.summary, check_exact=True)
            self.assertTrue(np.signbit(back.summary["mean"][0]))  # -0.0 stays -0.0 (== cannot tell)
            back.save(os.path.join(d, "b"))
            for name in ("summary.csv", "layers.csv", "nonfinite.csv"):
                with open(os.path.join(d, "a", name)) as a, open(os.path.join(d, "b", name)) as b:
                    self.assertEqual(a.read(), b.read(), name)

    def test_theory_is_the_same_empty_frame_measured_and_read(self):
        r = normsim.torch.measure({"pre": tb.pre_mlp(D), "post": tb.post_mlp(D)}, **self.kw)
        with Scratch() as d:
            r.save(os.path.join(d, "a"))
            self.assertFalse(os.path.exists(os.path.join(d, "a", "theory.csv")))
            back = normsim.read(os.path.join(d, "a"))
        self.assertEqual(list(r.theory.columns), ["config", "placement", "metric", "l", "k", "value"])
        pd.testing.assert_frame_equal(back.theory, r.theory)
        for result in (r, back):  # README.md's merge runs on both
            s = result.summary.merge(result.theory.rename(columns={"value": "mean_field"}), how="left")
            self.assertTrue(s.mean_field.isna().all())
            self.assertEqual(len(s), len(result.summary))


class Batching(unittest.TestCase):
    """Issue 30 item 4: samples run together (vmap over their stacked parameters) give the values of samples
    run one by one, whatever the grouping; a block vmap cannot run falls back to the per-sample loop."""
    kw = dict(x0=(T, D), depth=K, seed=3, progress=False, dtype=torch.float64)  # rounding 1.1e-16 below

    def assert_same_values(self, batched, alone, rtol):
        self.assertEqual(list(batched.per_sample), list(alone.per_sample))
        for metric, values in alone.per_sample.items():
            np.testing.assert_array_equal(np.isnan(batched.per_sample[metric]), np.isnan(values), metric)
            np.testing.assert_allclose(batched.per_sample[metric], values, rtol=rtol, atol=0, err_msg=metric)

    def test_batched_equals_sample_by_sample(self):
        # float64, the same draws: only the order of the sums differs (batched matrix products, reductions
        # over (S, T, d) instead of (T, d), a gradient's norm over 4096 squares summed in another order),
        # each rounding 1.1e-16 relative. Measured: at most 4e-15 on these stacks (depth 6, LayerNorm keeps
        # every scale near 1; 2e-14 at width 128, depth 24); 1e-12 leaves 250x, and a draw or a sample that
        # differed would be off by O(1).
        stacks = {"pre-LN MLP": (tb.pre_mlp(D), torch.nn.LayerNorm(D, eps=tb.EPS)),
                  "pre-LN transformer": (tb.pre_transformer(D, 4), torch.nn.LayerNorm(D, eps=tb.EPS))}
        for name, (blocks, final_norm) in stacks.items():
            with self.subTest(name):
                batched = normsim.torch.measure(blocks, samples=6, final_norm=final_norm, **self.kw)
                alone = normsim.torch.measure(blocks, samples=6, final_norm=final_norm, batch=False, **self.kw)
                config = batched.run_info["configs"][0]
                self.assertEqual((config["batch"], config["per_sample_blocks"]), (6, {}))  # all under vmap
                self.assertEqual(alone.run_info["configs"][0]["batch"], 1)
                self.assert_same_values(batched, alone, rtol=1e-12)

    def test_grouping_does_not_change_a_sample(self):
        """samples=4 are the first 4 of samples=8, and batches of 3 give what one batch of 8 gives: each
        sample's numbers come from its own draws and operations only (exact, no tolerance)."""
        kw = dict(self.kw, final_norm=None)
        eight = normsim.torch.measure(tb.pre_transformer(D, 4), samples=8, **kw)
        four = normsim.torch.measure(tb.pre_transformer(D, 4), samples=4, **kw)
        threes = normsim.torch.measure(tb.pre_transformer(D, 4), samples=8, batch=3, **kw)
        self.assertEqual(threes.run_info["configs"][0]["batch"], 3)
        for metric, values in eight.per_sample.items():
            np.testing.assert_array_equal(four.per_sample[metric], values[:, :4], metric)
            np.testing.assert_array_equal(threes.per_sample[metric], values, metric)

    def test_a_block_vmap_cannot_run_falls_back_with_the_same_draws(self):
        """Dropout draws random numbers, which vmap refuses: such a block runs sample by sample, each sample
        drawing from its own RNG state as it did alone (so exactly the values of batch=False), and run_info
        says which blocks and why. A block with Python control flow on values falls back likewise."""
        blocks = {"dropout": lambda k: tb.PreLN(D, torch.nn.Sequential(tb.Mlp(D), torch.nn.Dropout(0.5))),
                  "branching": lambda k: Branching(D)}
        batched = normsim.torch.measure(blocks, samples=4, final_norm=None, **self.kw)
        alone = normsim.torch.measure(blocks, samples=4, final_norm=None, batch=False, **self.kw)
        for config in batched.run_info["configs"]:
            self.assertEqual(sorted(config["per_sample_blocks"]), [str(k) for k in range(K)])
            self.assertIn("vmap", config["per_sample_blocks"]["0"])
        for metric in alone.per_sample:
            np.testing.assert_array_equal(batched.array(metric), alone.array(metric), metric)
        self.assertEqual(len(set(alone.array("act_sq")[0, :, K])), 4)  # dropout differs per sample

    def test_tied_weights_and_a_list_of_modules(self):
        """Blocks sharing parameters run sample by sample (gradw is the whole parameter's gradient, every use
        summed); a list of modules, re-initialised per sample, is copied per sample within a batch."""
        tied = lambda: (lambda block: [block] * 3)(tb.PreLN(D, tb.Mlp(D)))  # noqa: E731
        kw = dict(x0=(T, D), samples=3, seed=1, progress=False, final_norm=None, dtype=torch.float64)
        batched, alone = (normsim.torch.measure(tied, batch=b, **kw) for b in (None, False))
        self.assertEqual(sorted(batched.run_info["configs"][0]["per_sample_blocks"]), ["0", "1", "2"])
        self.assert_same_values(batched, alone, rtol=1e-12)  # as test_batched_equals_sample_by_sample
        w1 = batched.per_sample["gradw_w1"][0]
        np.testing.assert_array_equal(w1[:, 0], w1[:, 2])  # one parameter, one gradient
        # a list each: measure moves the listed modules to float64 in place, and a reset then draws in float64
        batched, alone = (normsim.torch.measure([tb.PreLN(D, tb.Mlp(D)) for _ in range(3)], batch=b, **kw)
                          for b in (None, False))
        self.assertEqual(batched.run_info["configs"][0]["per_sample_blocks"], {})
        self.assert_same_values(batched, alone, rtol=1e-12)

    def test_bad_batch_is_refused(self):
        with self.assertRaisesRegex(ValueError, "batch=0: None .* a positive int, or False"):
            normsim.torch.measure(tb.pre_mlp(D), batch=0, samples=1, final_norm=None, **self.kw)


class SpeedWithoutSideEffects(unittest.TestCase):
    """What the bridge skips for speed (docs/benchmarks.md, "PyTorch bridge", fourth and fifth steps) changes
    nothing a caller sees: the cycle collector is off while a batch is built and run, and back as it was
    afterwards; Module.to is skipped only where it would change nothing; a block's parameters swapped into its
    own tables run as torch's functional_call runs them."""
    kw = dict(x0=(T, D), depth=2, samples=2, seed=0, progress=False, final_norm=None)

    def test_the_collector_is_paused_during_a_batch_and_restored(self):
        for enabled in (True, False):
            seen = []
            factory = lambda k: (seen.append(gc.isenabled()), tb.PreLN(D, tb.Mlp(D)))[1]  # noqa: E731
            (gc.enable if enabled else gc.disable)()
            try:
                normsim.torch.measure(factory, **self.kw)
                self.assertEqual(gc.isenabled(), enabled)
            finally:
                gc.enable()
            self.assertEqual(seen, [False] * 4)

    def test_module_to_runs_where_it_changes_something(self):
        """float32 blocks measured in float64 are converted; a block whose class overrides _apply has it called
        although its tensors have the dtype already."""
        class Counting(tb.PreLN):
            applied = 0

            def _apply(self, fn):
                Counting.applied += 1
                return super()._apply(fn)

        blocks = []
        factory = lambda k: (lambda b: (blocks.append(b), b)[1])(tb.PreLN(D, tb.Mlp(D)))  # noqa: E731
        normsim.torch.measure(factory, dtype=torch.float64, **self.kw)
        self.assertEqual({p.dtype for b in blocks for p in b.parameters()}, {torch.float64})
        normsim.torch.measure(lambda k: Counting(D, tb.Mlp(D)), dtype=torch.float32, **self.kw)
        self.assertEqual(Counting.applied, 4)  # 2 samples x depth 2


    def test_swapped_call_equals_functional_call(self):
        """Under vmap, a block run with its parameters and buffers swapped into its own tables gives torch's
        functional_call's output and gradients bit for bit (a BatchNorm's running statistics, updated in place,
        included), and the block's own tensors are back in place afterwards."""
        from normsim import _bridge_passes
        try:
            from torch.func import functional_call, vmap
        except ImportError:
            from functorch import vmap
            from torch.nn.utils.stateless import functional_call

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bn, self.branch = torch.nn.BatchNorm1d(T), tb.Mlp(D)

            def forward(self, x):
                return x + self.branch(self.bn(x))

        blocks = [Block() for _ in range(3)]
        own = {n: t for n, t in (*blocks[0].named_parameters(), *blocks[0].named_buffers())}
        params = dict(blocks[0].named_parameters())

        def run(call):
            state = {n: torch.stack([dict((*b.named_parameters(), *b.named_buffers()))[n].detach() for b in blocks])
                     for n in own}
            for n, t in state.items():
                t.requires_grad_(n in params)
            x = torch.randn(3, 1, T, D, generator=torch.Generator().manual_seed(4)).requires_grad_(True)
            out = vmap(lambda st, xs: call(blocks[0], st, xs))(state, x)
            leaves = [x] + [t for t in state.values() if t.requires_grad]
            return [out, *torch.autograd.grad(out.pow(2).sum(), leaves), *state.values()]

        def swapped(block, state, xs):
            with _bridge_passes._swapped(block, state):
                return block(xs)

        for a, b in zip(run(lambda m, st, xs: functional_call(m, st, (xs,))), run(swapped)):
            self.assertTrue(torch.equal(a, b))
        self.assertTrue(all(t is own[n] for n, t in (*blocks[0].named_parameters(), *blocks[0].named_buffers())))


class GradwByGrams(unittest.TestCase):
    """An nn.Linear weight's gradw is taken from the Gram matrices of the layer's input and output gradient
    (normsim._metrics.LinearGradient), autograd never forming dW; the dW route is what the bridge does with no
    layer taken so (normsim._bridge_grams.candidates patched to none). The two differ by rounding only: in
    float64 dW's entries round at 1.1e-16 relative over sums of T = 8 terms, the Grams' inner product at
    1.1e-16 over 8 + 8 + 64 terms, so a norm moves by ~1e-15 (1e-12 leaves 1000x); in float32 dW's entries
    round at 6e-8 over their 8 terms (the Grams are in float64), so ~5e-7 at worst (1e-5 leaves 20x). A wrong
    identity, token or sample would be off by O(1). Measured: at most 5.6e-16 (float64) and 1.0e-8 (float32).
    Every other metric is exactly the same: the forward and the stream's backward run the same operations.
    Where a weight has a use the hooks miss, the one-sample check refuses the Grams: without it, the blocks
    below (DirectUse, InPlace) were off by 62 % and 81 % (measured with check_block patched to accept all)."""
    kw = dict(x0=(T, D), depth=K, seed=2, samples=4, progress=False)

    def measured(self, blocks, dtype, by_grams):
        from unittest import mock
        from normsim import _bridge_grams
        if by_grams:
            return normsim.torch.measure(blocks, dtype=dtype, final_norm=None, **self.kw)
        with mock.patch.object(_bridge_grams, "candidates", lambda block: {}):
            return normsim.torch.measure(blocks, dtype=dtype, final_norm=None, **self.kw)

    def assert_routes_agree(self, blocks, dtype, rtol):
        grams, dw = self.measured(blocks, dtype, True), self.measured(blocks, dtype, False)
        self.assertEqual(list(grams.per_sample), list(dw.per_sample))
        for metric, values in dw.per_sample.items():
            if metric.startswith("gradw_") and not metric.endswith("_bias"):
                np.testing.assert_allclose(grams.per_sample[metric], values, rtol=rtol, atol=0, err_msg=metric)
            else:
                np.testing.assert_array_equal(grams.per_sample[metric], values, metric)
        return grams

    def test_gradw_by_grams_equals_dw(self):
        stacks = {"pre-LN MLP": tb.pre_mlp(D), "pre-LN transformer, biases": tb.pre_transformer(D, 4, 0.5)}
        for dtype, rtol in ((torch.float32, 1e-5), (torch.float64, 1e-12)):
            for name, blocks in stacks.items():
                with self.subTest(name, dtype=dtype):
                    self.assert_routes_agree(blocks, dtype, rtol)

    def assert_formed(self, blocks, why):
        """Every block's weight `w` failed the one-sample check (run_info says `why`), so its dW is formed by
        autograd: the same numbers as the dW route exactly, every block still under vmap."""
        r = self.assert_routes_agree(blocks, torch.float64, 0)
        config = r.run_info["configs"][0]
        self.assertEqual(config["per_sample_blocks"], {})
        self.assertEqual(sorted(config["gradw_formed"]), [str(k) for k in range(K)])
        self.assertIn(why, config["gradw_formed"]["0"]["w.weight"])
        self.assertIn("gradw_w", r.per_sample)

    def test_a_linear_used_twice_forms_dw(self):
        """A layer called twice in its block has dW summed over both calls."""
        self.assert_formed(lambda k: Twice(D), "ran 2 times")

    def test_a_weight_read_directly_forms_dw(self):
        """x + relu(x W^T) + F.linear(x, W): the hooks see the layer's call only, and the Grams of its input
        and output gradient would leave out the direct use's share of dW. The check sees autograd's dW differ."""
        self.assert_formed(lambda k: DirectUse(D), "another use")

    def test_an_output_changed_in_place_forms_dw(self):
        """h = x W^T; h.relu_(): the gradient asked for is the relu's output's, not the layer's."""
        self.assert_formed(lambda k: InPlace(D), "another use")

    def test_checked_blocks_take_grams(self):
        """The test stacks pass the check: nothing formed, nothing said."""
        r = normsim.torch.measure(tb.pre_mlp(D), final_norm=None, **self.kw)
        self.assertEqual(r.run_info["configs"][0]["gradw_formed"], {})


class DirectUse(torch.nn.Module):
    """x + relu(W x) + W x, the second through F.linear with the layer's weight."""

    def __init__(self, d):
        super().__init__()
        self.w = tb.linear(d, d)

    def forward(self, x):
        return x + torch.relu(self.w(x)) + torch.nn.functional.linear(x, self.w.weight)


class InPlace(torch.nn.Module):
    """x + relu(W x), the relu applied in place on the layer's output."""

    def __init__(self, d):
        super().__init__()
        self.w = tb.linear(d, d)

    def forward(self, x):
        return x + self.w(x).relu_()


class Twice(torch.nn.Module):
    """x + W relu(W x): one nn.Linear called twice."""

    def __init__(self, d):
        super().__init__()
        self.w = tb.linear(d, d)

    def forward(self, x):
        return x + self.w(torch.relu(self.w(x)))


class Branching(torch.nn.Module):
    """x + relu(x W) or x - relu(x W) by the sign of a value: Python control flow, which vmap cannot batch."""

    def __init__(self, d):
        super().__init__()
        self.w = tb.linear(d, d)

    def forward(self, x):
        return x + torch.relu(self.w(x)) if float(x.sum()) > 0 else x - torch.relu(self.w(x))


class TokenMixingProbe(unittest.TestCase):
    """Issue 30 item 3: a block with an attention-like submodule whose output at a token does not depend on
    the other tokens is warned about (attention over the wrong axis); every block's probe is in run_info."""
    kw = dict(x0=(T, D), depth=2, samples=2, seed=0, progress=False, final_norm=None)

    def test_attention_over_the_wrong_axis_is_caught(self):
        with self.assertWarnsRegex(UserWarning, r"block 0's output at a token does not depend on the other "
                                                r"tokens.*'branch' \(WrongAxisAttention\).*dim -2"):
            r = normsim.torch.measure(lambda k: tb.PreLN(D, WrongAxisAttention(D)), **self.kw)
        self.assertEqual(r.run_info["configs"][0]["token_mixing"], [False, False])

    def test_a_stack_without_a_gradient_is_refused(self):
        # Blocks returning a constant: torch's own "element 0 of tensors does not require grad" deep in the
        # passes, before; the bridge names the cause.
        class Constant(torch.nn.Module):
            def forward(self, x):
                return torch.ones_like(x)
        kw = {k: v for k, v in self.kw.items() if k != "depth"}
        with self.assertRaisesRegex(ValueError, r"depends neither on its input x0 nor on any parameter"):
            normsim.torch.measure([Constant(), Constant()], **kw)

    def test_no_probe_with_one_token(self):
        # One token: nothing to mix, and the probe's forward builds no graph (null per block).
        one = normsim.torch.measure(lambda k: tb.PreLN(D, tb.Mlp(D)), **{**self.kw, "x0": (1, D)})
        self.assertEqual(one.run_info["configs"][0]["token_mixing"], [None, None])

    def test_correct_attention_and_an_mlp_are_not_warned_about(self):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            attention = normsim.torch.measure(tb.pre_transformer(D, 4), **self.kw)
            mlp = normsim.torch.measure(tb.pre_mlp(D), **self.kw)  # mixes nothing, legitimately
            # ends in a LayerNorm, whose output sums to a constant: the probe's direction must be random
            post = normsim.torch.measure(lambda k: torch.nn.TransformerEncoderLayer(
                D, 4, dim_feedforward=2 * D, dropout=0.0, batch_first=True), **self.kw)
        self.assertEqual(attention.run_info["configs"][0]["token_mixing"], [True, False])
        self.assertEqual(mlp.run_info["configs"][0]["token_mixing"], [False, False])
        self.assertEqual(post.run_info["configs"][0]["token_mixing"], [True, True])

    def test_causal_attention_mixes(self):
        """A causal block mixes into the last token only: the probe looks from the first and the last."""
        r = normsim.torch.measure(lambda k: tb.PreLN(D, CausalAttention(D)), **self.kw)
        self.assertEqual(r.run_info["configs"][0]["token_mixing"], [True, True])


class WrongAxisAttention(torch.nn.Module):
    """Single-head attention written for (T, B, d) inputs but given the bridge's (1, T, d): it attends over
    the batch axis (one "token"), so every token attends to itself only."""

    def __init__(self, d):
        super().__init__()
        self.wq, self.wk, self.wv = tb.linear(d, d), tb.linear(d, d), tb.linear(d, d)

    def forward(self, u):
        q, k, v = (w(u).transpose(0, 1) for w in (self.wq, self.wk, self.wv))  # (T, 1, d): "batch" T
        a = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)  # (T, 1, 1)
        return (a @ v).transpose(0, 1)


class CausalAttention(torch.nn.Module):
    """Single-head causal self-attention: token t attends to tokens 0..t."""

    def __init__(self, d):
        super().__init__()
        self.wq, self.wk, self.wv = tb.linear(d, d), tb.linear(d, d), tb.linear(d, d)

    def forward(self, u):
        q, k, v = self.wq(u), self.wk(u), self.wv(u)
        scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
        future = torch.ones(u.shape[-2], u.shape[-2], dtype=torch.bool, device=u.device).triu(1)
        return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v


class SelfAttention(torch.nn.Module):
    """An nn.MultiheadAttention as a branch: query, key and value all x."""

    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


class ComposedForm(unittest.TestCase):
    """blocks = (parts, compose): the modules of one block and the function composing them."""

    def test_factory_of_parts_equals_the_same_block_as_a_module(self):
        # Mlp is built before the (parameter-free at init) LayerNorm in both: the same draws, the same numbers.
        parts = lambda k: {"norm": torch.nn.LayerNorm(D, eps=tb.EPS), "branch": tb.Mlp(D)}  # noqa: E731
        pre_ln = lambda m, x: x + m["branch"](m["norm"](x))  # noqa: E731
        kw = dict(x0=(T, D), depth=4, samples=3, seed=2, progress=False, final_norm=None)
        a = normsim.torch.measure((parts, pre_ln), **kw)
        b = normsim.torch.measure(tb.pre_mlp(D), **kw)
        pd.testing.assert_frame_equal(a.summary, b.summary, check_exact=True)
        self.assertIn("branch_sq", set(a.summary.metric))  # the part named branch is F_k
        self.assertIn("gradw_w1", set(a.summary.metric))

    def test_list_of_parts_is_a_template_copied_per_block_and_reinitialised_per_sample(self):
        parts = [torch.nn.LayerNorm(D, eps=tb.EPS), tb.Mlp(D)]
        r = normsim.torch.measure((parts, lambda m, x: x + m[1](m[0](x))), x0=(T, D), depth=3, samples=2,
                                  seed=0, progress=False)
        w1 = r.array("gradw_1_w1")  # part 1's parameter w1
        self.assertEqual(w1.shape, (1, 2, 3))
        self.assertEqual(len(set(w1[0, 0])), 3)  # three blocks, three weight draws: not tied
        self.assertNotEqual(w1[0, 0, 0], w1[0, 1, 0])  # each sample its own weights
        with self.assertRaisesRegex(TypeError, "depth=K"):
            normsim.torch.measure((parts, lambda m, x: x), x0=(T, D), progress=False)


class OnlyInPyTorch(unittest.TestCase):
    def test_qk_norm_block_plots_and_reports(self):
        r = normsim.torch.measure({"qknorm-out": tb.qknorm_output_norm(D, 4), "pre": tb.pre_transformer(D, 4)},
                                  x0=(T, D), depth=K, samples=8, seed=SEED, progress=False, final_norm=None)
        self.assertEqual(list(r.config.placement), ["qknorm-out", "pre"])
        self.assertIn("gradw_q_norm", set(r.summary.metric))  # every named parameter
        self.assertEqual(r.array("act_sq").shape, (2, 8, K + 1))
        with Scratch() as d:
            out = os.path.join(d, "out")
            r.save(out)
            back = normsim.read(out)
            np.testing.assert_array_equal(back.array("act_sq"), r.array("act_sq"))
            done = subprocess.run([PROGRAM, "plot", out, "--format", "png"], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            figures = os.listdir(os.path.join(out, "figures"))
            self.assertIn("profile_act_sq.png", figures)
            self.assertIn("profile_grad_sq.png", figures)
            with open(os.path.join(out, "report.html")) as f:
                report = f.read()
            self.assertIn("profile_act_sq", report)
            # Issue 30 item 6: captions say only what is drawn; a bridge result has no theory.csv, so no grey
            # mean-field curve (a simulator run's report.html has this sentence under each profile)
            self.assertNotIn("the mean-field theory (theory.csv), where it has a prediction", report)
            with open(os.path.join(out, "run.json")) as f:
                self.assertIn("gradw_q_norm", json.load(f)["metrics"])

    def test_nonfinite_layer_and_statistics(self):
        """As the simulator (issue 16): a stream that overflows and a statistic that overflows from a finite
        stream are both rows of nonfinite (config, sample, pass, layer, metric), each sample warns, and no
        NaN or Inf reaches a table, a file or a figure; the report lists them."""
        class Blowup(torch.nn.Module):
            def forward(self, x):
                return x * 1e200

        with self.assertWarnsRegex(RuntimeWarning, "NaN or Inf"):
            r = normsim.torch.measure(lambda k: Blowup(), x0=(T, D), depth=4, samples=2, progress=False,
                                      dtype=torch.float64)  # 1e200 is finite in float64 only
        rows = list(r.nonfinite.itertuples(index=False, name=None))
        streams = [row for row in rows if row[4] == ""]
        self.assertEqual(streams, [(0, 0, "forward", 2, ""), (0, 1, "forward", 2, "")])  # x_2 = 1e400 x_0
        for sample in (0, 1):  # x_1 = 1e200 x_0 is finite, its mean square 1e400 is not
            self.assertIn((0, sample, "forward", 1, "act_sq"), rows)
            self.assertEqual(rows.index((0, sample, "forward", 2, "")),
                             max(i for i, row in enumerate(rows) if row[1] == sample))  # stream row last
        self.assertEqual(sorted(r.summary[r.summary.metric == "act_sq"].l), [0])
        self.assertTrue(np.isfinite(r.summary["mean"]).all() and np.isfinite(r.layers["value"]).all())
        with Scratch() as d:
            out = os.path.join(d, "out")
            r.save(out)
            with open(os.path.join(out, "nonfinite.csv")) as f:
                text = f.read()
            self.assertTrue(text.startswith("config,sample,pass,layer,metric\n"))
            self.assertIn("0,1,forward,1,act_sq\n", text)
            self.assertIn("0,1,forward,2,\n", text)
            done = subprocess.run([PROGRAM, "plot", out, "--format", "png"], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(os.path.join(out, "report.md")) as f:
                report = f.read()
            self.assertIn("## Non-finite values", report)
            self.assertIn("act_sq", report[report.index("## Non-finite values"):])


if __name__ == "__main__":
    unittest.main()
