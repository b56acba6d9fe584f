"""gradw of an nn.Linear weight without forming dW, as the simulator takes it (frobenius_of_AtB,
sim/cpu/frobenius.hpp:73-81): hooks record the layer's input a and its output, the backward asks for the
output's gradient g, and ||dW||_F comes from the Gram matrices of a and g (normsim._metrics.LinearGradient).
That equals dLoss/dW only where the layer's call is the weight's one use. A weight also read directly
(`F.linear(u, layer.weight)` beside `layer(v)`), a layer whose output is changed in place before its gradient
is asked for, or one whose recorded input is changed afterwards would give a wrong value silently, so every
configuration's weights are checked first (check_block, on the first sample's blocks, next to the token-mixing
probe): autograd's dW against the Gram value on one random input and cotangent. A weight that disagrees, or
that its block does not call exactly once, has its dW formed by autograd in every sample, and run_info says
why (run_info["configs"][c]["gradw_formed"])."""
from ._deps import require


def _torch():
    return require("torch", "normsim.torch")


class LinearUse:
    """An nn.Linear weight whose gradient autograd does not form: the layer's input `a` and its output (in the
    graph, so that the backward gives dLoss/d(output)), both (S, ..., features) with one call per sample."""

    def __init__(self, a, output):
        self.a, self.output = a, output


class NotCalledOnce(Exception):
    """An nn.Linear taken by its Gram matrices ran twice, or not at all, in one call of its block, or on an
    input that needs no gradient (its output would then have none): the block runs again forming dW."""


def candidates(block):
    """parameter name -> plain nn.Linear (its own forward) whose weight needs a gradient."""
    torch = _torch()
    return {f"{n}.weight" if n else "weight": m for n, m in block.named_modules()
            if isinstance(m, torch.nn.Linear) and type(m).forward is torch.nn.Linear.forward
            and m.weight.requires_grad}


def recording(linears, calls, strict):
    """Forward hooks appending (input, output) of each layer's call to calls[name]; `strict` (under vmap): a
    second call raises NotCalledOnce."""
    def hook_for(name):
        def record(_mod, inputs, output):
            if strict and calls.get(name):
                raise NotCalledOnce(name)
            calls.setdefault(name, []).append((inputs[0], output))
        return record
    return [m.register_forward_hook(hook_for(n)) for n, m in linears.items()]


def tolerance(a, dtype):
    """Relative tolerance between the Gram value and autograd's ||dW||: dW's entries are sums over the N rows
    of a in `dtype`, off by at most gamma_N = N u times the sum of the terms' magnitudes (Higham, Accuracy and
    Stability, 2nd ed., eq. 3.5), about sqrt(N) times the entry for random signs; the Grams are in float64.
    Ten times N sqrt(N) u: 4e-5 in float32 with N = 16 tokens. A missed use of the weight moves the norm by
    its own share, generically O(1) on the check's random input."""
    torch = _torch()
    n_rows = a.numel() // a.shape[-1]
    return 10 * n_rows * n_rows ** 0.5 * torch.finfo(dtype).eps / 2


def check_block(block, x, generator):
    """(accepted parameter names, {name: why refused}) for block's Gram candidates, from one forward of `block`
    on x and one backward of a random cotangent, dW formed by autograd beside the hooks' record."""
    from . import _metrics
    torch = _torch()
    linears = candidates(block)
    if not linears:
        return set(), {}
    calls = {}
    hooks = recording(linears, calls, strict=False)
    try:
        out = block(x)
    finally:
        for hook in hooks:
            hook.remove()
    refused = {n: f"its nn.Linear ran {len(calls.get(n, []))} times in one call of the block"
               for n in linears if len(calls.get(n, [])) != 1}
    ok = [n for n in linears if n not in refused]
    if not ok:
        return set(), refused
    if not isinstance(out, torch.Tensor) or not out.requires_grad:
        return set(), {**refused, **{n: "the block's output has no gradient to check it on" for n in ok}}
    cotangent = torch.randn(out.shape, generator=generator, dtype=torch.float64).to(out)
    inputs = [linears[n].weight for n in ok] + [calls[n][0][1] for n in ok]
    grads = torch.autograd.grad(out, inputs, cotangent, allow_unused=True)
    accepted = set()
    for i, n in enumerate(ok):
        dw, g, a = grads[i], grads[len(ok) + i], calls[n][0][0]
        formed = 0.0 if dw is None else float(dw.double().norm())
        by_grams = 0.0 if g is None else float(_metrics.LinearGradient(a.detach()[None], g[None]).norms()[0])
        if abs(by_grams - formed) <= tolerance(a, out.dtype) * max(formed, by_grams):
            accepted.add(n)
        else:
            refused[n] = (f"autograd's ||dW|| {formed:.6g} against {by_grams:.6g} from the layer's input and "
                          "output gradient: the weight has another use (read directly, or the layer's input or "
                          "output changed in place)")
    return accepted, refused
