"""The PyTorch bridge: measures residual blocks written in PyTorch with normsim's metrics (docs/python.md).

    r = normsim.torch.measure(lambda k: MyBlock(64), x0=(16, 64), depth=12, samples=32, seed=0)
    r.summary        # the same columns and metric names as normsim.run's
    r.save("out/myblock"); normsim.plot("out/myblock")

For every sample, fresh blocks are built (the factory is called again under a seed derived from (seed,
sample)), a fresh input and readout drawn, the stack run forward and backward, and every metric of
docs/metrics.md measured with the simulator's definitions (normsim._metrics). Samples are built one by one
and run in batches (normsim._bridge_passes: each block under vmap over the samples' stacked parameters, or
sample by sample where vmap cannot run it); the first sample's blocks are probed for token mixing
(normsim._bridge_checks). Stream x_0 is the input, x_{k+1}
= blocks[k](x_k); y = final_norm(x_K) (or x_K) feeds the loss. branch_sq is measured on a block's submodule
named `branch` (its output is F_k); gradw_<name> is the Frobenius norm of dLoss/d(parameter) for every named
parameter of block k (".weight" and a leading "branch." dropped, dots as underscores: `w1 = nn.Linear(...)` in
the block or its branch gives gradw_w1, as the simulator names W1).
"""
import contextlib
import numbers
import types
import time

from . import _progress
from ._deps import require


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


def _reusing(build):
    """Marks a builder that returns the same module objects for every sample (re-initialised): a batch copies
    each sample's blocks once they are built and moved (normsim._bridge_passes.Sample), since the next
    sample's reset would change them; moving first keeps the draws of sample-by-sample runs, where the next
    reset ran on the blocks the last sample had moved to the device and dtype."""
    build.reuses_modules = True
    return build


def _stack_builder(blocks, depth):
    """A function () -> list of modules building fresh blocks under the current torch seed."""
    torch = _torch()
    if _is_composed(blocks):
        return _composed_builder(*blocks, depth)
    if isinstance(blocks, (list, tuple)) or type(blocks) in (torch.nn.ModuleList, torch.nn.Sequential):
        modules = _modules(blocks, "the list of blocks")
        if depth is not None and depth != len(modules):
            raise ValueError(f"depth={depth} with a list of {len(modules)} modules: the list is the stack; drop "
                             "depth=, or pass a factory k -> module with depth=K")
        return _reusing(lambda: [_reset(m) for m in modules])
    if isinstance(blocks, torch.nn.Module) or not callable(blocks):
        raise TypeError(f"blocks is {_kind(blocks)}; it must be a factory (k -> module, with depth=K, or () -> "
                        "list of modules), a list of modules, or (parts, compose) with depth=K")
    _refuse_arity(blocks, depth)
    if depth is not None:
        return lambda: _modules([blocks(k) for k in range(depth)], "the factory's blocks")
    return lambda: _modules(blocks(), "the factory's list")


def _kind(value):
    """What a value is, for an error: 'a function', 'a torch.Tensor', 'the class Block'."""
    if isinstance(value, type):
        return f"the class {value.__qualname__}"
    cls = type(value)
    return f"a {cls.__qualname__}" if cls.__module__ == "builtins" else f"a {cls.__module__}.{cls.__qualname__}"


def _modules(built, what):
    """built as a list, refused with the fix unless it is a non-empty sequence of nn.Modules: the bridge
    re-initialises blocks (reset_parameters()) and measures their parameters' gradients through nn.Module. A
    container of modules (nn.Sequential, nn.ModuleList, a generator) is its blocks, as list() gives them; one
    module that holds no blocks is refused."""
    torch = _torch()
    # Exactly these containers: a subclass of nn.Sequential with its own forward (x + super().forward(x)) is
    # one block, not a stack; a dict's keys or a set's unordered items are no stack either.
    if type(built) in (tuple, torch.nn.Sequential, torch.nn.ModuleList) or isinstance(built, types.GeneratorType):
        built = list(built)
    if not isinstance(built, list):
        raise TypeError(f"normsim.torch: {what} is {_kind(built)}, not a list of modules: a factory () -> list "
                        "returns the stack, one nn.Module per block (a list, tuple, nn.Sequential, nn.ModuleList or "
                        "generator of them), or pass a factory k -> module with depth=K; several configurations "
                        "are measure(blocks={name: factory, ...})")
    if not len(built):
        raise ValueError(f"normsim.torch: {what} holds no block; a stack needs at least one")
    for k, block in enumerate(built):
        if not isinstance(block, torch.nn.Module):
            raise TypeError(f"normsim.torch: block {k} is {_kind(block)}, not an nn.Module; wrap a function f "
                            "in one (class Block(nn.Module): def forward(self, x): return f(x)), with its "
                            "parameters as nn.Parameters or submodules so that they are re-initialised per "
                            "sample and their gradients measured")
    return list(built)


def _refuse_arity(factory, depth):
    """A factory called as the other kind would be: () -> list with depth=K (called with k), or k -> module
    without depth (called with nothing); TypeError with the fix. A factory whose signature Python cannot
    read is called as it is."""
    import inspect
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return

    def takes(*args):
        try:
            signature.bind(*args)
            return True
        except TypeError:
            return False
    if depth is not None and not takes(0) and takes():
        raise TypeError(f"blocks is a factory () -> list of modules (it takes no argument), given depth={depth}, "
                        "with which the bridge calls it as k -> module for k = 0..K-1: drop depth= (the list "
                        "it returns is the stack), or make it take the block's index k")
    if depth is None and not takes() and takes(0):
        raise TypeError("blocks is a factory k -> module (it takes one argument, the block's index), given no "
                        "depth: pass depth=K, the number of blocks it builds (k = 0..K-1)")


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


def _warn_nonfinite(config, sample, statistics, nonfinite):
    """The simulator's warnings (sim/run/sweep.cpp, nonfinite_warnings) as Python warnings."""
    import warnings
    who = f"normsim.torch: config {config} sample {sample}"
    if statistics:
        pass_, layer, metric = statistics[0]
        warnings.warn(f"{who}: {len(statistics)} statistic(s) came out NaN or Inf from a finite "
                      f"stream, first {metric} at layer {layer}; left out of the tables (see nonfinite)",
                      RuntimeWarning, stacklevel=3)
    if nonfinite:
        pass_, layer = nonfinite
        warnings.warn(f"{who}: NaN or Inf in the {pass_} pass at layer {layer}; non-finite values are left "
                      f"out of the tables (see nonfinite)", RuntimeWarning, stacklevel=3)


_UNSET = object()


def measure(blocks, x0, *, depth=None, loss="readout", samples=8, seed=0, dtype="float32", final_norm=_UNSET,
            name="torch", progress=None, device="cpu", batch=None):
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
    dtype       torch.float32 (default: normsim.run's default precision) or torch.float64 (or their names);
                the metrics are computed in float64 either way
    device      where the passes run: "cpu" (default), "cuda", "cuda:1" or a torch.device; every draw is
                made on the CPU first, so a device changes only the arithmetic's rounding, not the samples
    batch       samples built and run together: None (default) as many as 256 MiB of parameters hold, n at
                most n; their passes run each block under vmap over the samples' stacked parameters (a block
                vmap cannot run goes sample by sample, noted in run_info). False: sample by sample without
                vmap, one sample's blocks in memory at a time, as before batching. The samples' draws are the
                same whatever the batch; values differ by rounding only (docs/python.md)
    Blocks receive tensors of shape (1, T, d)."""
    torch = _torch()
    if loss not in ("readout", "mse"):
        raise ValueError(f"loss '{loss}': expected readout or mse")
    _positive("depth", depth, "the number of blocks K (a factory k -> module builds blocks k = 0..K-1)",
              none=True)
    _positive("samples", samples, "the number of initialisations averaged over")
    dtype = {torch.float64: "float64", torch.float32: "float32"}.get(dtype, dtype)  # torch.float64 too
    if dtype not in ("float64", "float32"):
        raise ValueError(f"dtype {dtype!r}: expected torch.float64 or torch.float32 (or their names)")
    if not (batch is None or batch is False or (type(batch) is int and batch >= 1)):
        raise ValueError(f"batch={batch!r}: None (as many samples as fit), a positive int, or False (sample by "
                         "sample)")
    named = blocks if isinstance(blocks, dict) else {name: blocks}
    _check_x0(x0)
    final_norm = _final_norm_given(final_norm)
    torch_dtype = getattr(torch, dtype)
    device = _device_of(device)
    if isinstance(final_norm, torch.nn.Module):
        final_norm = final_norm.to(device=device, dtype=torch_dtype)
    bar = _progress.Bar("normsim.torch", _progress.wanted(progress))
    started, t0 = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), time.monotonic()
    timings = dict.fromkeys(("build_seconds", "probe_seconds", "passes_seconds", "metrics_seconds"), 0.0)
    records = []
    try:
        for c, (config_name, config_blocks) in enumerate(named.items()):
            run = _ConfigRun(_stack_builder(config_blocks, depth), x0, torch_dtype, device, seed, batch, timings)
            records.append(run(loss, final_norm, samples,
                               lambda done: bar(c * samples + done, len(named) * samples)))
            for s, (statistics, nonfinite) in enumerate(zip(records[-1]["statistics"], records[-1]["nonfinite"])):
                _warn_nonfinite(c, s, statistics, nonfinite)
    finally:
        bar.close()
    from . import _bridge_result
    t1 = time.perf_counter()
    result = _bridge_result.build(list(named), records, loss, samples, seed, dtype,
                                  {"started": started, "wall_seconds": time.monotonic() - t0,
                                   "backend": f"torch {torch.__version__}", "device": _device_name(device),
                                   "threads": torch.get_num_threads()})
    result.run_info["timings"].update(timings, result_seconds=time.perf_counter() - t1)
    return result


def _positive(name, value, meaning, none=False):
    """ValueError naming `name` unless value is an int >= 1 (or None where `none`)."""
    if none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name}={value!r}: {meaning}, an int >= 1")


def _final_norm_given(final_norm):
    """final_norm, or None with a warning when it is not given. Not normsim.run's "auto": that adds a norm by
    the placement (pre-norm ones get one, post-norm ones, ending in a norm already, none), which a PyTorch
    block does not declare."""
    if final_norm is _UNSET:
        import warnings
        warnings.warn("normsim.torch.measure: no final_norm given, so y = x_K. normsim.run's final_norm = "
                      "'auto' adds a norm where the placement's blocks do not end in one, which the bridge cannot "
                      "see in a PyTorch block. A pre-norm-like stack (pre, mix, sandwich, ...): pass "
                      "final_norm=nn.LayerNorm(d) to measure what normsim.run measures. A post-norm stack (post, "
                      "every block ending in a norm): final_norm=None is what normsim.run does. Either silences "
                      "this warning", UserWarning, stacklevel=3)
        return None
    return final_norm


class _ConfigRun:
    """One configuration's samples, in batches: built with the seeds and in the order of sample-by-sample
    runs, token mixing probed on the first sample's blocks, passes, metrics; call it for the record."""

    def __init__(self, build, x0, dtype, device, seed, batch, timings):
        from . import _bridge_passes
        self.build, self.dtype, self.device, self.seed, self.batch = build, dtype, device, seed, batch
        self.draw_input = lambda generator: _input_of(x0, generator, dtype, device)
        self.plan = _bridge_passes.Plan(vectorize=batch is not False)
        self.timings = timings
        self.mixing, self.shape = None, None

    def _built(self, start, samples, size):
        """Samples start.. of one batch (its size decided on the first sample's bytes when `size` is None)."""
        from . import _bridge_checks, _bridge_passes
        t = time.perf_counter()
        make = lambda s: _bridge_passes.Sample(self.build, self.draw_input, self.dtype, self.device,  # noqa: E731
                                               self.seed, s, _bridge_checks.refuse_sequence_first)
        built = [make(start)]
        size = size or _bridge_passes.batch_size(self.batch, built[0], samples)
        built += [make(s) for s in range(start + 1, min(samples, start + size))]
        self.timings["build_seconds"] += time.perf_counter() - t
        return built, size

    def __call__(self, loss, final_norm, samples, progress):
        parts, start, size = [], 0, None
        while start < samples:
            with _collector_paused():
                part, size = self._batch(start, samples, size, loss, final_norm)
            if part is None:  # a factory handing out the same module objects again: one sample at a time
                continue
            parts.append(part)
            start += len(part["nonfinite"])
            progress(start)
        return _merged(parts, self.shape, self.mixing, self.plan, size)

    def _batch(self, start, samples, size, loss, final_norm):
        """(the measurements of the batch of samples start.., or None where its samples share module objects,
        and the batch size from now on); the batch's modules and passes are released on return."""
        from . import _bridge_passes, _metrics
        built, size = self._built(start, samples, size)
        if size > 1 and _shares_modules(built):
            self.plan.note_shared_across_samples()
            return None, 1
        if self.mixing is None:
            self._probe(built[0])
        self.shape = tuple(built[0].x.shape)
        passes = _bridge_passes.run(built, self.plan, final_norm, loss, self.dtype, self.device)
        self.timings["passes_seconds"] += passes.seconds
        t = time.perf_counter()
        part = _metrics.measure(passes)
        self.timings["metrics_seconds"] += time.perf_counter() - t
        return part, size

    def _probe(self, sample):
        from . import _bridge_checks
        t = time.perf_counter()
        self.plan.note_shared_across_blocks(sample.modules)
        self.mixing, grams = _bridge_checks.probe(sample.modules, *sample.x.shape, self.dtype, self.device)
        for k, (accepted, refused) in enumerate(grams):
            self.plan.note_gram_check(k, accepted, refused)
        self.timings["probe_seconds"] += time.perf_counter() - t


@contextlib.contextmanager
def _collector_paused():
    """Python's cycle collector off while one batch is built, run and measured (and back as it was after). A
    batch's modules live until its metrics are taken (1540 tracked objects per sample in the stack of
    docs/benchmarks.md, "PyTorch bridge"), so collections during the batch promote them to the oldest
    generation, and that triggered a full collection every two or three measures: 0.07 s each with torch and
    pandas loaded, a sixth of the bridge's time, for objects that all die by reference counting when the
    batch ends. Cyclic garbage a factory makes meanwhile is collected after the batch, by the next
    young-generation collection."""
    import gc
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _shares_modules(built):
    """Whether two samples of a batch hold the same module object (running them together would give every
    sample the last one's parameters)."""
    seen = [{id(m) for m in s.modules} for s in built]
    return len(set().union(*seen)) < sum(len(s) for s in seen)


def _merged(parts, shape, mixing, plan, size):
    """One configuration's record from its batches' measurements: values metric -> (samples, index), the
    per-sample statistics and nonfinite lists, gradw_<name> in first appearance, and the probe and plan."""
    import numpy as np
    order = list(dict.fromkeys(m for p in parts for m in p["gradw_order"]))
    values = {}
    for metric in [m for m in parts[0]["values"] if not m.startswith("gradw_") or m in order] + order:
        if metric in values:
            continue
        width = next(p["values"][metric].shape[1] for p in parts if metric in p["values"])
        values[metric] = np.concatenate([p["values"].get(metric, np.full((len(p["nonfinite"]), width), np.nan))
                                         for p in parts])
    return {"values": values, "shape": shape, "depth": len(mixing), "gradw_order": order,
            "statistics": [s for p in parts for s in p["statistics"]],
            "nonfinite": [n for p in parts for n in p["nonfinite"]],
            "token_mixing": mixing, "per_sample_blocks": dict(plan.per_sample), "batch": size,
            "one_at_a_time": plan.one_at_a_time, "gradw_formed": dict(plan.gradw_formed)}


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
