"""Set-ups the PyTorch bridge can detect (issue 30): refused where the mistake is certain, warned about where
a correct block could look the same."""
import warnings

from ._deps import require


def _torch():
    return require("torch", "normsim.torch")


def refuse_sequence_first(modules):
    """nn.MultiheadAttention (and the nn.Transformer layers built on it) default to batch_first=False: given
    the bridge's (1, T, d) they would see T sequences of one token each and never mix tokens."""
    torch = _torch()
    for k, block in enumerate(modules):
        for name, sub in block.named_modules():
            if isinstance(sub, torch.nn.MultiheadAttention) and not sub.batch_first:
                where = f"block {k}" + (f", submodule '{name}'" if name else "")
                raise ValueError(f"normsim.torch: {where} is nn.MultiheadAttention with batch_first=False: blocks "
                                 "receive (1, T, d), which it would read as T sequences of one token (no mixing "
                                 "between tokens). Construct it (or the nn.Transformer*Layer) with "
                                 "batch_first=True")


def attention_like(block):
    """(name, class name) of the block's first submodule that should mix tokens: nn.MultiheadAttention, an
    nn.Transformer*Layer, or a class whose name contains "Attention" or "Attn"; None if there is none."""
    torch = _torch()
    known = (torch.nn.MultiheadAttention, torch.nn.TransformerEncoderLayer, torch.nn.TransformerDecoderLayer)
    for name, sub in block.named_modules():
        cls = type(sub).__name__
        if isinstance(sub, known) or "attention" in cls.lower() or "attn" in cls.lower():
            return name or "(the block itself)", cls
    return None


def _mixes_tokens(out, x, generator):
    """Whether the block's output at a token depends on the input at another token. Two vector-Jacobian
    products, one from the first and one from the last output token (a causal block mixes into the last
    token only, an anti-causal one into the first only): an input token other than that one with a nonzero
    gradient mixes. A block that mixes nothing gives exact zeros there (its graph does not connect the
    tokens), so the test is != 0, with no tolerance to choose. The cotangent is random, not all ones: a
    LayerNorm's output sums to a constant, so the all-ones direction has zero gradient through it. `out` is
    the block's output on `x` (_checked_output's forward)."""
    torch = _torch()
    if not out.requires_grad:
        return None  # no graph from the input: nothing to probe
    for t in (0, x.shape[-2] - 1):
        cotangent = torch.zeros_like(out)
        cotangent[..., t, :] = torch.randn(out.shape[-1], generator=generator, dtype=torch.float64).to(out)
        (grad,) = torch.autograd.grad(out, x, cotangent, retain_graph=True, allow_unused=True)
        if grad is not None and bool((torch.cat([grad[..., :t, :], grad[..., t + 1:, :]], -2) != 0).any()):
            return True
    return False


def probe(modules, T, d, dtype, device):
    """(token mixing per block, Gram check per block) on the first sample's blocks, each probed as it is (train
    mode) on one random (1, T, d) input, with the global RNG and the buffers (running statistics) restored
    afterwards so that the samples' draws and values are the same as without the probe. Token mixing: whether a
    block's output at a token depends on the other tokens (None where T < 2 or the output has no graph back to the
    input, a constant or x.detach()); a block with an attention-like submodule that mixes no tokens is warned about
    (attention over the wrong axis, most often): a warning and not a refusal, because a correct block can look the
    same (a squeeze-and-excitation "ChannelAttention" mixes channels, not tokens; an attention masked to the
    diagonal or with a window of one token mixes nothing by design). Gram check: normsim._bridge_grams.check_block's
    (accepted, refused) nn.Linear weights."""
    from . import _bridge_grams
    torch = _torch()
    generator = torch.Generator().manual_seed(30)
    x = torch.randn(1, T, d, generator=generator, dtype=torch.float64).to(device=device, dtype=dtype)
    mixing, grams = [], []
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        for k, block in enumerate(modules):
            saved = [(b, b.detach().clone()) for b in block.buffers()]
            try:
                x_in = x.detach().requires_grad_(T >= 2)
                with torch.set_grad_enabled(T >= 2):  # a graph only for the token-mixing probe
                    out = _checked_output(k, block, x_in)
                mixing.append(_mixes_tokens(out, x_in, generator) if T >= 2 else None)
                del out  # its graph, before the Gram check builds its own
                grams.append(_bridge_grams.check_block(block, x, generator))
            finally:
                with torch.no_grad():
                    for buffer, value in saved:
                        buffer.copy_(value)
            _warn_unmixed(k, block, mixing[-1])
    return mixing, grams


def _checked_output(k, block, x):
    """Block k's output on the probe's input x (1, T, d), its first call (the token-mixing probe differentiates
    it). A shape its layers do not take (most often x0's width, or a token count fixed in a mask, against the
    blocks'), an output that is no tensor (nn.LSTM's tuple) or one of another shape than the stream's is refused
    naming the block and the fix, which torch's own error (mat1 and mat2 shapes..., deep in the passes) does
    not say. Other errors (out of memory) pass unchanged."""
    torch = _torch()
    name = f"normsim.torch: block {k} ({type(block).__name__})"
    try:
        out = block(x)
    except RuntimeError as e:
        text = str(e)
        if "out of memory" in text or not any(word in text for word in ("shape", "size")):
            raise
        raise ValueError(f"{name} cannot take an input of shape (1, T, d) = {tuple(x.shape)}, from x0 of shape "
                         f"(T, d) = {tuple(x.shape[1:])}: {e}. Give x0 the shape (T, d) the blocks are built for "
                         f"(their width d, and T where they fix the token count), or build them for "
                         f"{tuple(x.shape[1:])}") from e
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"{name} returned a {type(out).__name__}, not a tensor: a block returns the next stream "
                        f"x_(k+1), a tensor of its input's shape (1, T, d). Wrap a module that returns more (nn.LSTM "
                        "returns (output, (h, c))) in a block returning the tensor, e.g. forward(self, x): return "
                        "x + self.lstm(x)[0]")
    if out.shape != x.shape:
        raise ValueError(f"{name} maps the stream of shape {tuple(x.shape)} to one of shape {tuple(out.shape)}: a "
                         "residual block returns the next stream x_(k+1) in its input's shape (1, T, d)")
    return out


def _warn_unmixed(k, block, mixes):
    attention = attention_like(block) if mixes is False else None
    if attention is None:
        return
    name, cls = attention
    warnings.warn(f"normsim.torch: block {k}'s output at a token does not depend on the other tokens, yet its "
                  f"submodule '{name}' ({cls}) looks like attention, which the simulator's attention mixes "
                  "tokens with: attention over the wrong axis? Blocks receive (1, T, d) (batch, tokens, "
                  "width); attend over dim -2, the T tokens (scores q @ k.transpose(-2, -1) of shape (..., T, "
                  "T), softmax over the last dim). run_info['configs'][c]['token_mixing'] has every block's "
                  "probe", UserWarning, stacklevel=4)
