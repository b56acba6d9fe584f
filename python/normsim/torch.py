"""The PyTorch bridge: measures residual blocks written in PyTorch with normsim's metrics (docs/python.md).

    r = normsim.torch.measure(lambda k: MyBlock(64), x0=(16, 64), depth=12, samples=32, seed=0)
    r.summary        # the same columns and metric names as normsim.run's
    r.save("out/myblock"); normsim.plot("out/myblock")

For every sample, fresh blocks are built (the factory is called again under a seed derived from (seed,
sample)), a fresh input and readout drawn, the stack run forward and backward with hooks, and every metric of
docs/metrics.md measured with the simulator's definitions (normsim._metrics). Stream x_0 is the input, x_{k+1}
= blocks[k](x_k); y = final_norm(x_K) (or x_K) feeds the loss. branch_sq is measured on a block's submodule
named `branch` (its output is F_k); gradw_<name> is the Frobenius norm of dLoss/d(parameter) for every named
parameter of block k (".weight" and a leading "branch." dropped, dots as underscores: `w1 = nn.Linear(...)` in
the block or its branch gives gradw_w1, as the simulator names W1).
"""
import time

from . import _frames, _progress
from ._deps import require
from ._result import Result


def _torch():
    return require("torch", "normsim.torch")


def _stack_builder(blocks, depth):
    """A function () -> list of modules building fresh blocks under the current torch seed."""
    torch = _torch()
    if isinstance(blocks, (list, tuple, torch.nn.ModuleList)):
        modules = list(blocks)

        def rebuilt():
            for m in modules:
                for sub in m.modules():
                    if hasattr(sub, "reset_parameters"):
                        sub.reset_parameters()
            return modules
        return rebuilt
    if not callable(blocks):
        raise TypeError("blocks must be a factory (k -> module, with depth=K, or () -> list of modules) or a "
                        "list of modules")
    if depth is not None:
        return lambda: [blocks(k) for k in range(depth)]
    return lambda: list(blocks())


def _input_of(x0, generator, dtype):
    torch = _torch()
    if isinstance(x0, tuple):
        return torch.randn(*x0, generator=generator, dtype=torch.float64).to(dtype)
    if callable(x0):
        return x0(generator).to(dtype)
    return x0.to(dtype)


def _parameter_metric(name):
    """gradw_<name>: ".weight" dropped, the block's `branch.` prefix dropped, dots as underscores."""
    if name.startswith("branch."):
        name = name[len("branch."):]
    if name.endswith(".weight"):
        name = name[: -len(".weight")]
    return "gradw_" + name.replace(".", "_")


def run_sample(build, x0, loss, final_norm, dtype, seed, sample):
    """One sample: fresh blocks and inputs, forward and backward. Returns {"values": metric -> list over its
    index (NaN where undefined), "nonfinite": (pass, layer) or None, "shape": (T, d)}."""
    from . import _metrics
    torch = _torch()
    torch.manual_seed(seed * 1_000_003 + sample)
    generator = torch.Generator().manual_seed(seed * 1_000_033 + sample + 17)
    modules = [m.to(dtype) for m in build()]
    branch_out = [None] * len(modules)
    hooks = []
    for k, m in enumerate(modules):
        if hasattr(m, "branch"):
            hooks.append(m.branch.register_forward_hook(
                lambda _mod, _inp, out, k=k: branch_out.__setitem__(k, out.detach())))
    x = _input_of(x0, generator, dtype).unsqueeze(0).requires_grad_(True)
    stream = [x]
    try:
        for m in modules:
            x = m(x)
            x.retain_grad()
            stream.append(x)
    finally:
        for h in hooks:
            h.remove()
    y = final_norm(x) if final_norm is not None else x
    shape = tuple(stream[0].shape[1:])
    values, bad = _metrics.forward_metrics([s.detach()[0] for s in stream], y.detach(), branch_out)
    if bad is not None:
        return {"values": values, "nonfinite": ("forward", bad), "shape": shape}
    draw = torch.randn(y.shape, generator=generator, dtype=torch.float64).to(dtype)
    objective = (draw * y).sum() if loss == "readout" else 0.5 * ((y - draw) ** 2).sum()
    objective.backward()
    grads = {k: [(_parameter_metric(n), p.grad) for n, p in m.named_parameters() if p.requires_grad]
             for k, m in enumerate(modules)}
    bad = _metrics.backward_metrics(values, [None if s.grad is None else s.grad[0] for s in stream], grads)
    return {"values": values, "nonfinite": ("backward", bad) if bad is not None else None, "shape": shape}


def measure(blocks, x0, *, depth=None, loss="readout", samples=8, seed=0, dtype="float64", final_norm=None,
            name="torch", progress=None):
    """Measures PyTorch residual blocks over `samples` fresh initialisations; returns a normsim Result.

    blocks      a factory k -> nn.Module (with depth=K), a factory () -> list of modules, or a list of modules
                (re-initialised with reset_parameters() per sample); or a dict name -> any of these, one
                configuration per name (the name is the `placement` column)
    x0          the input x_0 (T x d): a shape tuple (N(0,1) entries drawn per sample), a tensor (the same for
                every sample) or a callable taking a torch.Generator
    loss        "readout" (sum g*y, g ~ N(0,1) per sample) or "mse" (1/2 |y - target|^2, target ~ N(0,1))
    final_norm  a module or callable applied to x_K to give y (None: y = x_K)
    dtype       "float64" or "float32"
    Blocks receive tensors of shape (1, T, d)."""
    torch = _torch()
    if loss not in ("readout", "mse"):
        raise ValueError(f"loss '{loss}': expected readout or mse")
    if dtype not in ("float64", "float32"):
        raise ValueError(f"dtype '{dtype}': expected float64 or float32")
    named = blocks if isinstance(blocks, dict) else {name: blocks}
    torch_dtype = getattr(torch, dtype)
    if isinstance(final_norm, torch.nn.Module):
        final_norm = final_norm.to(torch_dtype)
    bar = _progress.Bar("normsim.torch", _progress.wanted(progress))
    started, t0 = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), time.monotonic()
    records = []
    try:
        for c, (config_name, config_blocks) in enumerate(named.items()):
            build = _stack_builder(config_blocks, depth)
            records.append([run_sample(build, x0, loss, final_norm, torch_dtype, seed, s)
                            for s in _counted(range(samples), bar, c, len(named), samples)])
    finally:
        bar.close()
    from . import _bridge_result
    return _bridge_result.build(list(named), records, loss, samples, seed, dtype,
                                {"started": started, "wall_seconds": time.monotonic() - t0,
                                 "backend": f"torch {torch.__version__}", "threads": torch.get_num_threads()})


def _counted(items, bar, config, configs, samples):
    for i in items:
        yield i
        bar(config * samples + i + 1, configs * samples)
