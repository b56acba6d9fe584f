"""PyTorch residual blocks for the bridge's tests: three written to match normsim's built-in placements
(docs/conventions.md: Pre-LN and Post-LN MLP, Pre-LN transformer) with the simulator's init (fanin: every
matrix N(0, 1/fan_in), no biases; norms with gain 1, bias 0, eps 1e-5), blocks copied from official code (DyT,
Derf, gated attention, Mixtral's and OLMoE's routed MLP), and one that exists only here: x + N(F(x)) with
QK-norm attention."""
import math

import torch
import torch.nn.functional as F
from torch import nn

EPS = 1e-5


def linear(fan_in, fan_out, bias_std=None):
    """nn.Linear with normsim's fanin init; bias_std None: no bias, else a bias N(0, bias_std^2) (0: zeros, as
    nanoGPT's GPT._init_weights and HF GPT-2 draw it), normsim's bias = true with init_bias = bias_std. Built
    as torch.nn.utils.skip_init builds a module whose parameters are overwritten (on the meta device, then
    to_empty: no draws): the constructor's kaiming_uniform_, which these lines replace, would be drawn for
    nothing, once per sample (the bridge calls the factory for every sample; docs/python.md, "Speed").
    Written out: skip_init's inspect.signature check per call cost a third of the drawing time."""
    layer = nn.Linear(fan_in, fan_out, bias=bias_std is not None, device="meta").to_empty(device="cpu")
    nn.init.normal_(layer.weight, std=1 / math.sqrt(fan_in))
    if bias_std is not None:
        nn.init.normal_(layer.bias, std=bias_std) if bias_std > 0 else nn.init.zeros_(layer.bias)
    return layer


class Mlp(nn.Module):
    """F(u) = relu(u W1) W2, hidden width 4d (mlp_ratio 4)."""

    def __init__(self, d, bias_std=None):
        super().__init__()
        self.w1, self.w2 = linear(d, 4 * d, bias_std), linear(4 * d, d, bias_std)

    def forward(self, u):
        return self.w2(torch.relu(self.w1(u)))


class Attention(nn.Module):
    """Multi-head self-attention, heads of size d/H, softmax(Q K^T / sqrt(d/H)); qk_norm: a LayerNorm over
    each head's query and key (QK-norm)."""

    def __init__(self, d, heads, qk_norm=False, bias_std=None):
        super().__init__()
        self.heads = heads
        self.wq, self.wk, self.wv, self.wo = (linear(d, d, bias_std) for _ in range(4))
        self.q_norm = nn.LayerNorm(d // heads, eps=EPS) if qk_norm else None
        self.k_norm = nn.LayerNorm(d // heads, eps=EPS) if qk_norm else None

    def forward(self, u):
        B, T, d = u.shape
        split = lambda t: t.view(B, T, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.wq(u)), split(self.wk(u)), split(self.wv(u))
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // self.heads), dim=-1)
        return self.wo((a @ v).transpose(1, 2).reshape(B, T, d))


class GatedAttention(nn.Module):
    """Gated attention as qiuzh20/gated_attention writes it (modeling_qwen3.py, Qwen3Attention: q_proj widened
    at lines 271-274 to give each head its query and its gate, split per head at lines 304-313, and
    `attn_output * torch.sigmoid(gate_score)` before o_proj at lines 355-360), without RoPE and QK-norm
    (normsim has no positions; use_qk_norm off) and with one key/value head per query head: gate
    "elementwise" (head_dim gates per head) or "headwise" (one). q_proj's columns, the query's and the gate's
    alike, are N(0, 1/d) (the official init draws q_proj as one matrix, std initializer_range; normsim's
    fan-in rule here)."""

    def __init__(self, d, heads, gate):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.gate_width = self.dh if gate == "elementwise" else 1
        self.q_proj = linear(d, heads * (self.dh + self.gate_width))
        self.wk, self.wv, self.wo = linear(d, d), linear(d, d), linear(d, d)

    def forward(self, u):
        B, T, d = u.shape
        q, gate_score = torch.split(self.q_proj(u).view(B, T, self.heads, -1), [self.dh, self.gate_width], dim=-1)
        split = lambda t: t.view(B, T, self.heads, self.dh).transpose(1, 2)  # noqa: E731
        q, k, v = q.transpose(1, 2), split(self.wk(u)), split(self.wv(u))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dh), dim=-1)
        o = (a @ v).transpose(1, 2) * torch.sigmoid(gate_score)
        return self.wo(o.reshape(B, T, d))


class Olmo2RMSNorm(nn.Module):
    """transformers' Olmo2RMSNorm (modeling_olmo2.py): weight * x / sqrt(mean(x^2) + eps), weight ones."""

    def __init__(self, width, eps=EPS):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(width)), eps

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class Olmo2Attention(nn.Module):
    """transformers' Olmo2Attention (modeling_olmo2.py): q_norm and k_norm are Olmo2RMSNorm over the whole
    projection, num_attention_heads * head_dim = d, applied to q_proj(x) and k_proj(x) before the view into
    heads (as allenai/OLMo olmo/model.py L603-605 before L609); softmax(Q K^T / sqrt(head_dim)) V, o_proj.
    Without RoPE (normsim has no positions), one key/value head per query head, no biases; the projections
    are named after normsim's matrices (q_proj wq, k_proj wk, v_proj wv, o_proj wo) so the bridge pairs
    their gradients."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.wq, self.wk, self.wv, self.wo = linear(d, d), linear(d, d), linear(d, d), linear(d, d)
        self.q_norm, self.k_norm = Olmo2RMSNorm(d), Olmo2RMSNorm(d)

    def forward(self, u):
        B, T, d = u.shape
        split = lambda t: t.view(B, T, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q_norm(self.wq(u))), split(self.k_norm(self.wk(u))), split(self.wv(u))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // self.heads), dim=-1)
        return self.wo((a @ v).transpose(1, 2).reshape(B, T, d))


class Olmo2Mlp(nn.Module):
    """transformers' Olmo2MLP: down_proj(silu(gate_proj(x)) * up_proj(x)), hidden 4d; named wgate, w1, w2 as
    normsim's SwiGLU (docs/conventions.md)."""

    def __init__(self, d):
        super().__init__()
        self.wgate, self.w1, self.w2 = linear(d, 4 * d), linear(d, 4 * d), linear(4 * d, d)

    def forward(self, u):
        return self.w2(torch.nn.functional.silu(self.wgate(u)) * self.w1(u))


class Olmo2Sublayer(nn.Module):
    """One half of transformers' Olmo2DecoderLayer: residual + post_*_layernorm(branch(residual)), x + N(F(x))."""

    def __init__(self, d, branch):
        super().__init__()
        self.norm, self.branch = Olmo2RMSNorm(d), branch

    def forward(self, x):
        return x + self.norm(self.branch(x))


class PreLN(nn.Module):
    """x + F(N(x))"""

    def __init__(self, d, branch):
        super().__init__()
        self.norm, self.branch = nn.LayerNorm(d, eps=EPS), branch

    def forward(self, x):
        return x + self.branch(self.norm(x))


class DynamicTanh(nn.Module):
    """DyT as its official code writes it (jiachenzhu/DyT dynamic_tanh.py L6-23, channels_last): a scalar
    alpha (alpha_init_value 0.5), per-channel weight ones and bias zeros, weight * tanh(alpha x) + bias."""

    def __init__(self, d, alpha_init_value=0.5):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.weight, self.bias = nn.Parameter(torch.ones(d)), nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return torch.tanh(self.alpha * x) * self.weight + self.bias


class DynamicErf(nn.Module):
    """Derf as its official code writes it (zlab-princeton/Derf ViT/dynamic_erf.py L6-26): scalar alpha and
    shift (inits 0.5 and 0.0), per-channel weight ones and bias zeros, erf(alpha x + shift) * weight + bias."""

    def __init__(self, d, alpha_init_value=0.5, shift_init_value=0.0):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init_value)
        self.shift = nn.Parameter(torch.ones(1) * shift_init_value)
        self.weight, self.bias = nn.Parameter(torch.ones(d)), nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return torch.erf(self.alpha * x + self.shift) * self.weight + self.bias


class PreNormed(nn.Module):
    """x + F(norm(x)) with any norm module (DyT, Derf): Pre-LN with the LayerNorm replaced, as both codes'
    convert_ln_to_dyt / convert_ln_to_derf do."""

    def __init__(self, norm, branch):
        super().__init__()
        self.norm, self.branch = norm, branch

    def forward(self, x):
        return x + self.branch(self.norm(x))


class PostLN(nn.Module):
    """N(x + F(x))"""

    def __init__(self, d, branch):
        super().__init__()
        self.norm, self.branch = nn.LayerNorm(d, eps=EPS), branch

    def forward(self, x):
        return self.norm(x + self.branch(x))


class OutputNorm(nn.Module):
    """x + N(F(x)): the branch's output normalized before it joins the stream."""

    def __init__(self, d, branch):
        super().__init__()
        self.norm, self.branch = nn.LayerNorm(d, eps=EPS), branch

    def forward(self, x):
        return x + self.norm(self.branch(x))


def pre_mlp(d, bias_std=None):
    return lambda k: PreLN(d, Mlp(d, bias_std))


def post_mlp(d):
    return lambda k: PostLN(d, Mlp(d))


def pre_transformer(d, heads, bias_std=None):
    """Sublayer k: attention for even k, MLP for odd k (normsim's sublayer = "transformer"); bias_std: every
    nn.Linear with a bias (linear())."""
    return lambda k: PreLN(d, Attention(d, heads, bias_std=bias_std) if k % 2 == 0 else Mlp(d, bias_std))


def pre_dyt_transformer(d, heads, attention_alpha, mlp_alpha):
    """Pre-LN transformer with DyT (the LLaMA recipe's per-sublayer alphas: attention, FFN)."""
    return lambda k: PreNormed(DynamicTanh(d, attention_alpha if k % 2 == 0 else mlp_alpha),
                               Attention(d, heads) if k % 2 == 0 else Mlp(d))


def pre_derf_mlp(d, alpha, shift):
    return lambda k: PreNormed(DynamicErf(d, alpha, shift), Mlp(d))


def olmo2_transformer(d, heads):
    """OLMo-2's decoder layers as sublayers: attention (QK-norm over the projection) for even k, SwiGLU MLP for
    odd k, each x + RMSNorm(F(x))."""
    return lambda k: Olmo2Sublayer(d, Olmo2Attention(d, heads) if k % 2 == 0 else Olmo2Mlp(d))


def qknorm_output_norm(d, heads):
    return lambda k: OutputNorm(d, Attention(d, heads, qk_norm=True) if k % 2 == 0 else Mlp(d))


def pre_gated_transformer(d, heads, gate):
    """Pre-LN transformer whose attention is the official gated attention (GatedAttention)."""
    return lambda k: PreLN(d, GatedAttention(d, heads, gate) if k % 2 == 0 else Mlp(d))


# Mixtral's and OLMoE's routed MLP as huggingface/transformers writes it (commit 00d4b3d,
# src/transformers/models/mixtral/modeling_mixtral.py; OLMoE: commit 00dcc6d,
# src/transformers/models/olmoe/modeling_olmoe.py, OlmoeSparseMoeBlock), with normsim's fanin init in place of
# the official N(0, initializer_range) (_init_weights) so that the simulator's default runs the same block.


class MixtralBlockSparseTop2MLP(nn.Module):
    """An expert (modeling_mixtral.py L61-76): w2(silu(w1 x) * w3 x), hidden_act "silu". normsim's swiglu
    writes it (silu(u Wgate) * (u W1)) W2: Mixtral's w1 is normsim's wgate, w3 is W1 (docs/conventions.md)."""

    def __init__(self, hidden_dim, ffn_dim):
        super().__init__()
        self.w1, self.w3 = linear(hidden_dim, ffn_dim), linear(hidden_dim, ffn_dim)
        self.w2 = linear(ffn_dim, hidden_dim)

    def forward(self, hidden_states):
        return self.w2(F.silu(self.w1(hidden_states)) * self.w3(hidden_states))


class SparseMoeBlock(nn.Module):
    """MixtralSparseMoeBlock.forward (modeling_mixtral.py L105-142): router `gate` (L98), softmax over all
    experts in float32 (L114), top_k (L115), the renormalization (L116; OLMoE guards it with `if
    self.norm_topk_prob:`, False in OLMoE-1B-7B), each selected expert run on its tokens and index_add_-ed with
    its weight (L126-140; every expert visited, as OLMoE's loop does, where Mixtral's skips those no token
    selected: the same sum). norm_topk_prob True: normsim's moe_gate "renormalized"; False: "softmax". Left out:
    the router jitter (training only, L108-109), and the router_logits returned beside the output (they feed
    the auxiliary load-balancing loss, a training matter), so that the block's output is F(u) alone."""

    def __init__(self, hidden_dim, ffn_dim, num_experts, top_k, norm_topk_prob=True):
        super().__init__()
        self.num_experts, self.top_k, self.norm_topk_prob = num_experts, top_k, norm_topk_prob
        self.gate = linear(hidden_dim, num_experts)
        self.experts = nn.ModuleList([MixtralBlockSparseTop2MLP(hidden_dim, ffn_dim) for _ in range(num_experts)])

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        if self.norm_topk_prob:
            routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final_hidden_states = torch.zeros((batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype,
                                          device=hidden_states.device)
        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            idx, top_x = torch.where(expert_mask[expert_idx])
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = self.experts[expert_idx](current_state) * routing_weights[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        return final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)


class MixtralRMSNorm(nn.Module):
    """modeling_mixtral.py L146-160: weight * x / sqrt(mean(x^2) + eps), computed in float32 (float64 here:
    the upcast is the identity for the bridge's float64 runs)."""

    def __init__(self, hidden_size, eps=EPS):
        super().__init__()
        self.weight, self.variance_epsilon = nn.Parameter(torch.ones(hidden_size)), eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))


def pre_rms_moe(d, num_experts, top_k, norm_topk_prob, mlp_ratio=4):
    """MixtralDecoderLayer's MLP half, x + MoE(RMSNorm(x)) (post_attention_layernorm, then
    block_sparse_moe), as normsim's placement "pre", norm "rmsnorm", activation "swiglu", moe_experts."""
    return lambda k: PreNormed(MixtralRMSNorm(d),
                               SparseMoeBlock(d, mlp_ratio * d, num_experts, top_k, norm_topk_prob))


def unit_linear(fan_in, fan_out, along_input):
    """nn.Linear drawn Gaussian, then normalized as NVIDIA/ngpt train.py L394-408 does at init (normalize_matrices:
    query, key, value and c_fc along dim 1, the n_embd inputs; att_c_proj and mlp_c_proj along dim 0, the n_embd
    outputs), every such vector of length 1: normsim's init = "unit" with gain 1. Built without
    the constructor's draws, as linear() is."""
    layer = nn.Linear(fan_in, fan_out, bias=False, device="meta").to_empty(device="cpu")
    with torch.no_grad():
        w = torch.randn(fan_out, fan_in, dtype=layer.weight.dtype)
        layer.weight.copy_(w / w.norm(dim=1 if along_input else 0, keepdim=True))
    return layer


def sphere(x):
    """ngpt model.py Block.justnorm (x / ||x||), times sqrt(d): normsim's streams have mean square 1 (norm
    sqrt(d)) where nGPT's have norm 1, and every nGPT branch reads its stream through a norm or a scale-invariant
    path except the MLP, whose suv = sqrt(n_embd) (model.py, Block.forward: `suv * uv`) is this same factor;
    so the stack below is nGPT's with every stream times sqrt(d), and its MLP drops suv."""
    return x / x.norm(dim=-1, keepdim=True) * math.sqrt(x.shape[-1])


class NgptAttention(nn.Module):
    """ngpt model.py Block.forward's attention half, use_nGPT = 1: q, k = sqk * justnorm(q), justnorm(k) per head
    (sqk 1 at init), softmax scale sqrt(head_dim) on the unit-norm heads (= q.k / sqrt(d_h) at heads of norm
    sqrt(d_h), normsim's qk_norm), causal; without RoPE (normsim has no positions) and in float64, not bf16."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.wq, self.wk, self.wv = (unit_linear(d, d, True) for _ in range(3))
        self.wo = unit_linear(d, d, False)

    def forward(self, h):
        B, T, d = h.shape
        dh = d // self.heads
        split = lambda t: t.view(B, T, self.heads, dh).transpose(1, 2)  # noqa: E731
        unit = lambda t: t / t.norm(dim=-1, keepdim=True)  # noqa: E731
        q, k, v = unit(split(self.wq(h))), unit(split(self.wk(h))), split(self.wv(h))
        logits = (q @ k.transpose(-1, -2)) * math.sqrt(dh)
        mask = torch.ones(T, T, dtype=torch.bool, device=h.device).tril()
        a = torch.softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)
        return self.wo((a @ v).transpose(1, 2).reshape(B, T, d))


class NgptMlp(nn.Module):
    """ngpt model.py Block.forward's MLP half: uv = suv * c_fc(h), u, v = chunk(uv), x = u * silu(v), mlp_c_proj;
    c_fc 2 x 4d wide, named w1 (u) and wgate (v) as normsim's SwiGLU; suv's sqrt(n_embd) is in the stream's scale
    (sphere())."""

    def __init__(self, d):
        super().__init__()
        self.w1, self.wgate = unit_linear(d, 4 * d, True), unit_linear(d, 4 * d, True)
        self.w2 = unit_linear(4 * d, d, False)

    def forward(self, h):
        return self.w2(self.w1(h) * F.silu(self.wgate(h)))


class NgptSublayer(nn.Module):
    """ngpt model.py Block.forward, one half: h <- justnorm(A + lr (justnorm(h_branch) - A)), A = justnorm(h),
    lr = |alpha| = 0.05 at init (attn_alpha, mlp_alpha init 0.05)."""

    def __init__(self, branch, lr=0.05):
        super().__init__()
        self.branch, self.lr = branch, lr

    def forward(self, h):
        a = sphere(h)
        return sphere(a + self.lr * (sphere(self.branch(h)) - a))


def ngpt_transformer(d, heads):
    """nGPT's layers as sublayers: attention for even k, MLP for odd k (experiments/placements/ngpt.toml)."""
    return lambda k: NgptSublayer(NgptAttention(d, heads) if k % 2 == 0 else NgptMlp(d))
