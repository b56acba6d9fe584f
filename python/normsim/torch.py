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


def _reset(module):
    """Fresh parameters under the current torch seed: reset_parameters() of every submodule that has one."""
    for sub in module.modules():
        if hasattr(sub, "reset_parameters"):
            sub.reset_parameters()
    return module


def composed(parts, compose):
    """A residual block from parts and a function composing them: compose(parts, x) -> the next stream.
    `parts` is a list or a dict of modules; the block's submodules carry their names ("0", "1", ... or the
    dict's keys), so a part named `branch` gives branch_sq and a part `w1` gradw_w1."""
    torch = _torch()

    class Composed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            named = parts.items() if isinstance(parts, dict) else enumerate(parts)
            for name, module in named:
                self.add_module(str(name), module)
            self.view = dict(self.named_children()) if isinstance(parts, dict) else list(self.children())

        def forward(self, x):
            return compose(self.view, x)

    return Composed()


def _is_composed(blocks):
    """(parts, compose): parts a list or dict of modules or a factory of them, compose a plain function."""
    torch = _torch()
    return (isinstance(blocks, tuple) and len(blocks) == 2 and callable(blocks[1])
            and not isinstance(blocks[1], torch.nn.Module))


def _composed_builder(parts, compose, depth):
    """Blocks from (parts, compose): a factory k -> parts is called per block; list or dict parts are a
    template, copied for every block and re-initialised (reset_parameters()) per sample."""
    import copy
    if depth is None:
        raise TypeError("blocks given as (parts, compose) need depth=K")
    if callable(parts):
        return lambda: [composed(parts(k), compose) for k in range(depth)]
    return lambda: [_reset(composed(copy.deepcopy(parts), compose)) for _ in range(depth)]


def _stack_builder(blocks, depth):
    """A function () -> list of modules building fresh blocks under the current torch seed."""
    torch = _torch()
    if _is_composed(blocks):
        return _composed_builder(*blocks, depth)
    if isinstance(blocks, (list, tuple, torch.nn.ModuleList)):
        modules = list(blocks)
        if depth is not None and depth != len(modules):
            raise ValueError(f"depth={depth} with a list of {len(modules)} modules: the list is the stack; drop "
                             "depth=, or pass a factory k -> module with depth=K")
        return lambda: [_reset(m) for m in modules]
    if not callable(blocks):
        raise TypeError("blocks must be a factory (k -> module, with depth=K, or () -> list of modules), a "
                        "list of modules, or (parts, compose) with depth=K")
    if depth is not None:
        return lambda: [blocks(k) for k in range(depth)]
    return lambda: list(blocks())


def _refuse_sequence_first(modules):
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


def _check_x0(x0):
    torch = _torch()
    if isinstance(x0, tuple):
        if len(x0) != 2 or not all(isinstance(n, int) and n > 0 for n in x0):
            raise ValueError(f"x0={x0!r}: a shape (T, d) of two positive integers (tokens, width)")
    elif isinstance(x0, torch.Tensor):
        if x0.dim() != 2:
            raise ValueError(f"x0: a tensor of shape (T, d), got shape {tuple(x0.shape)}")
    elif not callable(x0):
        raise TypeError("x0 must be a shape (T, d), a tensor (T x d) or a callable taking a torch.Generator")


def _input_of(x0, generator, dtype, device):
    torch = _torch()
    if isinstance(x0, tuple):
        return torch.randn(*x0, generator=generator, dtype=torch.float64).to(device=device, dtype=dtype)
    if callable(x0):
        return x0(generator).to(device=device, dtype=dtype)
    return x0.to(device=device, dtype=dtype)


def _parameter_metric(name):
    """gradw_<name>: ".weight" dropped, the block's `branch.` prefix dropped, dots as underscores."""
    if name.startswith("branch."):
        name = name[len("branch."):]
    if name.endswith(".weight"):
        name = name[: -len(".weight")]
    return "gradw_" + name.replace(".", "_")


def run_sample(build, x0, loss, final_norm, dtype, seed, sample, device="cpu"):
    """One sample: fresh blocks and inputs, forward and backward. Returns {"values": metric -> list over its
    index (NaN where undefined), "nonfinite": (pass, layer) where a stream first held a NaN or Inf, or None,
    "statistics": [(pass, layer, metric)] that came out NaN or Inf from a finite stream, "shape": (T, d)}.
    Weights, inputs and readouts are drawn on the CPU (the same numbers whatever the device), then moved."""
    from . import _metrics
    torch = _torch()
    torch.manual_seed(seed * 1_000_003 + sample)
    generator = torch.Generator().manual_seed(seed * 1_000_033 + sample + 17)
    modules = [m.to(device=device, dtype=dtype) for m in build()]
    _refuse_sequence_first(modules)
    branch_out = [None] * len(modules)
    hooks = []
    for k, m in enumerate(modules):
        if hasattr(m, "branch"):
            hooks.append(m.branch.register_forward_hook(
                lambda _mod, _inp, out, k=k: branch_out.__setitem__(k, out.detach())))
    x = _input_of(x0, generator, dtype, device).unsqueeze(0).requires_grad_(True)
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
    store = _metrics.Store(len(modules))
    bad = _metrics.forward_metrics(store, [s.detach()[0] for s in stream], y.detach(), branch_out)
    record = {"values": store.values, "statistics": store.nonfinite, "shape": shape,
              "nonfinite": ("forward", bad) if bad is not None else None}
    if bad is not None:
        return record
    draw = torch.randn(y.shape, generator=generator, dtype=torch.float64).to(device=device, dtype=dtype)
    objective = (draw * y).sum() if loss == "readout" else 0.5 * ((y - draw) ** 2).sum()
    objective.backward()
    grads = {k: [(_parameter_metric(n), p.grad) for n, p in m.named_parameters() if p.requires_grad]
             for k, m in enumerate(modules)}
    bad = _metrics.backward_metrics(store, [None if s.grad is None else s.grad[0] for s in stream], grads)
    record["nonfinite"] = ("backward", bad) if bad is not None else None
    return record


def _warn_nonfinite(config, sample, record):
    """The simulator's warnings (sim/sweep.cpp, nonfinite_warnings) as Python warnings."""
    import warnings
    who = f"normsim.torch: config {config} sample {sample}"
    if record["statistics"]:
        pass_, layer, metric = record["statistics"][0]
        warnings.warn(f"{who}: {len(record['statistics'])} statistic(s) came out NaN or Inf from a finite "
                      f"stream, first {metric} at layer {layer}; left out of the tables (see nonfinite)",
                      RuntimeWarning, stacklevel=3)
    if record["nonfinite"]:
        pass_, layer = record["nonfinite"]
        warnings.warn(f"{who}: NaN or Inf in the {pass_} pass at layer {layer}; non-finite values are left "
                      f"out of the tables (see nonfinite)", RuntimeWarning, stacklevel=3)


_UNSET = object()


def measure(blocks, x0, *, depth=None, loss="readout", samples=8, seed=0, dtype="float64", final_norm=_UNSET,
            name="torch", progress=None, device="cpu"):
    """Measures PyTorch residual blocks over `samples` fresh initialisations; returns a normsim Result.

    blocks      a factory k -> nn.Module (with depth=K), a factory () -> list of modules, or a list of modules
                (re-initialised with reset_parameters() per sample); or (parts, compose) with depth=K: parts
                a list or dict of modules (copied for every block, re-initialised per sample) or a factory
                k -> such a list or dict, compose(parts, x) -> x_next the block's function of them (see
                composed()); or a dict name -> any of these, one configuration per name (the name is the
                `placement` column)
    x0          the input x_0 (T x d): a shape tuple (N(0,1) entries drawn per sample), a tensor (the same for
                every sample) or a callable taking a torch.Generator
    loss        "readout" (sum g*y, g ~ N(0,1) per sample) or "mse" (1/2 |y - target|^2, target ~ N(0,1))
    final_norm  a module or callable applied to x_K to give y, or None (y = x_K). Not given: None, with a
                warning, since normsim.run ends Pre-LN-like stacks in a norm by default (final_norm = "auto")
                and the same stack's gradients then differ by an order of magnitude
    dtype       torch.float64 or torch.float32 (or "float64", "float32")
    device      where the passes run: "cpu" (default), "cuda", "cuda:1" or a torch.device; every draw is
                made on the CPU first, so a device changes only the arithmetic's rounding, not the samples
    Blocks receive tensors of shape (1, T, d)."""
    torch = _torch()
    if loss not in ("readout", "mse"):
        raise ValueError(f"loss '{loss}': expected readout or mse")
    dtype = {torch.float64: "float64", torch.float32: "float32"}.get(dtype, dtype)  # torch.float64 too
    if dtype not in ("float64", "float32"):
        raise ValueError(f"dtype {dtype!r}: expected torch.float64 or torch.float32 (or their names)")
    named = blocks if isinstance(blocks, dict) else {name: blocks}
    _check_x0(x0)
    if final_norm is _UNSET:
        import warnings
        warnings.warn("normsim.torch.measure: no final_norm given, so y = x_K; normsim.run's final_norm = "
                      "'auto' ends pre, mix, sandwich and the other pre-norm placements in a norm. Pass "
                      "final_norm=nn.LayerNorm(d) to measure what normsim.run measures, or final_norm=None to "
                      "keep y = x_K without this warning", UserWarning, stacklevel=2)
        final_norm = None
    torch_dtype = getattr(torch, dtype)
    device = _device_of(device)
    if isinstance(final_norm, torch.nn.Module):
        final_norm = final_norm.to(device=device, dtype=torch_dtype)
    bar = _progress.Bar("normsim.torch", _progress.wanted(progress))
    started, t0 = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), time.monotonic()
    records = []
    try:
        for c, (config_name, config_blocks) in enumerate(named.items()):
            build = _stack_builder(config_blocks, depth)
            records.append([run_sample(build, x0, loss, final_norm, torch_dtype, seed, s, device)
                            for s in _counted(range(samples), bar, c, len(named), samples)])
            for s, record in enumerate(records[-1]):
                _warn_nonfinite(c, s, record)
    finally:
        bar.close()
    from . import _bridge_result
    return _bridge_result.build(list(named), records, loss, samples, seed, dtype,
                                {"started": started, "wall_seconds": time.monotonic() - t0,
                                 "backend": f"torch {torch.__version__}", "device": _device_name(device),
                                 "threads": torch.get_num_threads()})


def _device_of(device):
    """A torch.device for `device`, refused with the fix where this torch cannot use it."""
    torch = _torch()
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"device {device!r}: not a torch device ('cpu', 'cuda', 'cuda:1'): {e}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: this torch ({torch.__version__}) sees no CUDA device; "
                         "use device='cpu' or a CUDA build of PyTorch on a machine with a GPU")
    return dev


def _device_name(device):
    torch = _torch()
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)})"
    return str(device)


def _counted(items, bar, config, configs, samples):
    for i in items:
        yield i
        bar(config * samples + i + 1, configs * samples)
