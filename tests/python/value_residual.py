"""Blocks that read earlier state, for the bridge's tests: ResFormer's value residual (Zhou et al., arXiv
2410.17897) and the embedding skip of modded-nanogpt and nanochat, written from their official code.

normsim.torch carries one tensor per layer, x_k, and calls x_{k+1} = blocks[k](x_k). The state these blocks
read (V_1, the values of the first attention; x_0, the stack's input) is not in x_k: the blocks of one sample's
stack share a `Carry`, which the first attention (or the first block) fills during the forward and the later
ones read. autograd follows the stored tensor, so dLoss/dV_1 reaches the first layer as in the models. A
tensor stored outside the modules cannot be stacked per sample under vmap, so these stacks run with
measure(..., batch=False) (sample by sample, each sample its own stack and Carry): a factory () -> list of
modules builds one stack per sample."""
import math

import torch
from torch import nn

from torch_blocks import EPS, Attention, Mlp, PreLN


class Carry:
    """What one sample's stack carries beside x_k: V_1 (ResFormer) or x_0 (the embedding skip)."""

    def __init__(self):
        self.v1 = None
        self.x0 = None


class ValueResidualAttention(Attention):
    """Zcchill/Value-Residual-Learning @95652f6 src/modeling/modeling_llama_resformer.py LlamaAttention.forward,
    l.377-381: value_states = v_proj(h); layer 0 appends them to formal_layer_values, every later layer uses
    0.5 * formal_layer_values[0] + 0.5 * value_states, before the view into heads. `lam` generalises the 0.5 as
    modded-nanogpt e59ae87f train_gpt2.py l.174-176 does ((1 - lam) v + lam v1, lam 0.5 at init). Without RoPE
    (normsim has no positions) and with torch_blocks.Attention's fanin init; causal as LLaMA's."""

    def __init__(self, d, heads, carry, source, lam=0.5, causal=True):
        super().__init__(d, heads)
        self.carry, self.source, self.lam, self.causal = carry, source, lam, causal

    def forward(self, u):
        B, T, d = u.shape
        split = lambda t: t.view(B, T, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        v = self.wv(u)
        if self.source:  # layer_idx == 0 (l.377): every forward stores its own V_1
            self.carry.v1 = v
        else:
            v = (1 - self.lam) * v + self.lam * self.carry.v1
        q, k, v = split(self.wq(u)), split(self.wk(u)), split(v)
        logits = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)
        if self.causal:
            logits = logits.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        return self.wo((torch.softmax(logits, dim=-1) @ v).transpose(1, 2).reshape(B, T, d))


def resformer(d, heads, depth, sublayer="attention", lam=0.5):
    """() -> one sample's stack: Pre-LN sublayers x + F(N(x)) whose attentions mix V_1 in (normsim's
    `x + Fv(N(x), lam)`); sublayer "transformer" puts an MLP at every odd k."""

    def stack():
        carry = Carry()
        return [PreLN(d, Mlp(d) if sublayer == "transformer" and k % 2 else
                      ValueResidualAttention(d, heads, carry, k == 0, lam)) for k in range(depth)]

    return stack


def nanochat_lambdas(i, layers):
    """nanochat @92d63d4 nanochat/gpt.py l.238, 241: resid_lambdas[i] = 1.15 - 0.10 i/(L-1),
    x0_lambdas[i] = 0.20 - 0.15 i/(L-1) (their init; the comment at l.179-180 still says 1.0 and 0.0)."""
    return 1.15 - 0.10 * i / (layers - 1), 0.20 - 0.15 * i / (layers - 1)


class EmbeddingSkipLayer(nn.Module):
    """One transformer layer i of nanochat (gpt.py l.495, 500: x = resid_lambdas[i] * x + x0_lambdas[i] * x0 before
    block i; the block is x + attn(norm(x)), then x + mlp(norm(x))), as the two sublayers normsim runs: the
    attention sublayer applies the skip, the MLP one is Pre-LN. The first sublayer stores its input as x0.
    The stored tensors are the current forward's (the first sublayer stores them every time).
    nanochat's x0 is norm(wte(idx)) and its c_proj are zero at init (l.230, 232); here x0 is the bridge's
    input (N(0, 1) tokens, mean square 1 as after a norm) and the matrices have the fanin init, as in the
    simulator's config; modded-nanogpt's skip (5db4da38 train_gpt.py l.211-214, init [1, 0]) is lam = 1, mu = 0."""

    def __init__(self, d, heads, carry, lam, mu, attention, first):
        super().__init__()
        self.carry, self.lam, self.mu, self.attention, self.first = carry, lam, mu, attention, first
        self.norm = nn.LayerNorm(d, eps=EPS)
        self.branch = Attention(d, heads) if attention else Mlp(d)

    def forward(self, x):
        if self.attention:
            if self.first:  # gpt.py l.473: x0 is the stack's input, taken anew in every forward
                self.carry.x0 = x
            x = self.lam * x + self.mu * self.carry.x0
        return x + self.branch(self.norm(x))


def nanochat(d, heads, depth):
    """() -> one sample's stack of depth/2 nanochat layers (attention then MLP sublayers)."""

    def stack():
        carry, layers = Carry(), depth // 2
        return [EmbeddingSkipLayer(d, heads, carry, *nanochat_lambdas(k // 2, layers), k % 2 == 0, k == 0)
                for k in range(depth)]

    return stack


# The simulator's block of the same layer: a pair (attention sublayer, MLP sublayer), b the layer's index,
# L the layers; lam * x + mu * emb is one node read twice (docs/design/multistream.md 3.2).
NANOCHAT_BLOCK = ("(1.15 - 0.1*b/(L-1))*x + (0.2 - 0.15*b/(L-1))*emb + "
                  "F(N((1.15 - 0.1*b/(L-1))*x + (0.2 - 0.15*b/(L-1))*emb)); x + F(N(x))")
