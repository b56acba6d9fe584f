"""A Pre-LN MLP residual block written in PyTorch, x + W2 relu(W1 LN(x)), with normsim's init (fanin: every
matrix N(0, 1/fan_in), no biases; LayerNorm gain 1, bias 0, eps 1e-5), for the claim
torch_preln_act_linear.toml: `normsim check` measures it with normsim.torch (docs/claims.md)."""
import math

import torch
from torch import nn


def linear(fan_in, fan_out):
    """N(0, 1/fan_in). Built as torch.nn.utils.skip_init builds a module whose parameters are overwritten (on
    the meta device, then to_empty): nn.Linear's own kaiming_uniform_ would be drawn for every sample only to
    be overwritten here."""
    layer = nn.Linear(fan_in, fan_out, bias=False, device="meta").to_empty(device="cpu")
    nn.init.normal_(layer.weight, std=1 / math.sqrt(fan_in))
    return layer


class PreLN(nn.Module):
    def __init__(self, d, hidden, eps):
        super().__init__()
        self.norm = nn.LayerNorm(d, eps=eps)
        self.w1, self.w2 = linear(d, hidden), linear(hidden, d)

    def forward(self, x):
        return x + self.w2(torch.relu(self.w1(self.norm(x))))


def blocks(config):
    """Block k of the claim's config (its width, mlp_ratio and norm_eps)."""
    d = config["width"]
    return lambda k: PreLN(d, round(config["mlp_ratio"] * d), config["norm_eps"])


def final_norm(config):
    """Pre-LN's last block ends without a norm, so the stack adds one: y = N(x_K), as the simulator's
    final_norm = "auto" does for Pre-LN."""
    return nn.LayerNorm(config["width"], eps=config["norm_eps"])
