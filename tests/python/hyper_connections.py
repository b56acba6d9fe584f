"""Hyper-connections (Zhu et al., arXiv 2409.19606) and mHC (Xie et al., arXiv 2512.24880) as
lucidrains/hyper-connections @4775103 computes them, written here for the bridge's tests (the package is not a
dependency). normsim.torch carries one tensor per layer, so the n lanes travel side by side in it, (..., T, n d);
at these inits the lanes stay equal, and every metric of that tensor but grad_sq is the lanes' mean's, which is
what the simulator reports (docs/placements.md, "Hyper-connections and mHC"); its grad_sq is the mean of the
lanes' own gradients' mean squares, the mean of the simulator's per-lane grad_sq rows (docs/metrics.md, "Lanes")."""
import math

import torch
from torch import nn
from torch.nn import functional as F

from torch_blocks import EPS, Attention, Mlp


def sinkhorn_knopps(log_alpha, iters=20):
    """manifold_constrained_hyper_connections.py l.49-61: column max subtracted, exp, then iters column and row
    L1 normalizations."""
    alpha = (log_alpha - log_alpha.amax(dim=-2, keepdim=True).detach()).exp()
    for _ in range(iters):
        alpha = F.normalize(alpha, p=1, dim=-2)
        alpha = F.normalize(alpha, p=1, dim=-1)
    return alpha


class HyperConnection(nn.Module):
    """One sublayer with its hyper-connection around a Pre-LN branch, branch(norm(h)). Parameters and init as
    hyper_connections.py l.215 (r = k mod n), l.229-235 (static alpha [e_r | I_n], dynamic alpha weights 0,
    scale 0.01), l.242-247 (static beta 1, dynamic beta weights 0, scale 0.01) and its RMSNorm (l.86-93, gain
    zeros used as gamma + 1), which feeds only the dynamic terms. hc: alpha, beta as l.290-313 (tanh);
    mhc: manifold_constrained_hyper_connections.py l.361-381 and 397-408: no tanh, H_pre = sigmoid, H_res =
    Sinkhorn, H_post = 2 sigmoid. Lanes mix as l.315 / l.410: lane t gets sum_s alpha[s, t] x_s, column 0
    the branch input; out_s = mixed_s + beta_s F (l.357, 370)."""

    def __init__(self, d, n, k, branch, manifold=False):
        super().__init__()
        self.n, self.d, self.manifold = n, d, manifold
        static_alpha = torch.zeros(n, n + 1)
        static_alpha[k % n, 0] = 1.0
        static_alpha[:, 1:] = torch.eye(n)
        self.static_alpha = nn.Parameter(static_alpha)
        self.dynamic_alpha_fn = nn.Parameter(torch.zeros(d, n + 1))
        self.dynamic_alpha_scale = nn.Parameter(torch.ones(()) * 1e-2)
        self.static_beta = nn.Parameter(torch.ones(n))
        self.dynamic_beta_fn = nn.Parameter(torch.zeros(d))
        self.dynamic_beta_scale = nn.Parameter(torch.ones(()) * 1e-2)
        self.gamma = nn.Parameter(torch.zeros(d))
        self.norm, self.branch = nn.LayerNorm(d, eps=EPS), branch

    def mixing(self, lanes):
        """(alpha (..., n, n + 1), beta (..., n)) per token from the lanes (..., n, d)."""
        normed = F.normalize(lanes, dim=-1) * math.sqrt(self.d) * (self.gamma + 1)
        alpha_w, beta_w = normed @ self.dynamic_alpha_fn, normed @ self.dynamic_beta_fn
        if not self.manifold:
            alpha = torch.tanh(alpha_w) * self.dynamic_alpha_scale + self.static_alpha
            return alpha, torch.tanh(beta_w) * self.dynamic_beta_scale + self.static_beta
        alpha = alpha_w * self.dynamic_alpha_scale + self.static_alpha
        alpha = torch.cat((alpha[..., :1].sigmoid(), sinkhorn_knopps(alpha[..., 1:])), dim=-1)
        return alpha, 2 * (beta_w * self.dynamic_beta_scale + self.static_beta).sigmoid()

    def forward(self, x):
        lanes = x.unflatten(-1, (self.n, self.d))
        alpha, beta = self.mixing(lanes)
        mixed = torch.einsum("...su,...sd->...ud", alpha, lanes)
        out = mixed[..., 1:, :] + beta.unsqueeze(-1) * self.branch(self.norm(mixed[..., 0, :])).unsqueeze(-2)
        return out.flatten(-2)


class LanesSumNorm(nn.Module):
    """The readout: the lanes' sum (get_expand_reduce_stream_functions, hyper_connections.py l.61), then the
    model's final LayerNorm."""

    def __init__(self, d, n):
        super().__init__()
        self.n, self.norm = n, nn.LayerNorm(d, eps=EPS)

    def forward(self, x):
        return self.norm(x.unflatten(-1, (self.n, -1)).sum(-2))


def expanded_input(tokens, d, n):
    """x_0 as n copies of one N(0, 1) draw (the expansion's repeat, hyper_connections.py l.59)."""
    return lambda generator: torch.randn(tokens, d, generator=generator, dtype=torch.float64).repeat(1, n)


def transformer(d, heads, n, manifold=False):
    """Sublayer k: attention for even k, MLP for odd k, each inside its (m)HC."""
    return lambda k: HyperConnection(d, n, k, Attention(d, heads) if k % 2 == 0 else Mlp(d), manifold)


def block_text(n, manifold=False):
    """The simulator's block of the same hyper-connection (experiments/placements/hc.toml writes it out):
    static mixing I_n (mHC: Sinkhorn(exp(I_n))), branch input lane r = k mod n (mHC: H_pre = sigmoid of e_r),
    branch weights 1 (mHC: 2 sigmoid(1))."""
    eye = "[" + ",".join("[" + ",".join("1" if i == j else "0" for j in range(n)) + "]" for i in range(n)) + "]"
    r = f"k - {n}*floor(k/{n})"

    def lane(i):
        if not manifold:
            return f"x[{i}]"
        return "[" + ",".join("sigmoid(1)" if j == i else "sigmoid(0)" for j in range(n)) + "] @ x"

    mix, beta = (f"sinkhorn({eye}, 20)", "2*sigmoid(1)") if manifold else (eye, "1")
    pick = "".join(f"{r} < {i + 1} ? {lane(i)} : " for i in range(n - 1)) + lane(n - 1)
    return f"{mix} @ x + [{','.join([beta] * n)}] * F(N({pick}))"
