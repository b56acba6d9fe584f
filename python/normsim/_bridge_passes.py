"""The PyTorch bridge's passes: a batch of samples built one by one with today's seeds and order, then run
forward and backward together. Each block runs for all the batch's samples at once, under vmap over the
samples' stacked parameters (functorch on torch 1.13, torch.func on newer torch), or, where vmap cannot run
it, sample by sample as before; the stream between blocks is one tensor (S, 1, T, d) either way."""
import contextlib
import copy
import functools
import time

from . import _bridge_grams as grams
from ._deps import require

# Parameters and buffers of at most this many bytes are built and run together (auto batch): the stacked
# copies and the weight gradients of a batch take about twice that again.
BATCH_BYTES = 256 << 20


def _torch():
    return require("torch", "normsim.torch")


@functools.lru_cache(maxsize=None)
def _vmap():
    """torch.func.vmap on torch >= 2.0, functorch's on 1.13. Looked up once: the failed import of torch.func on
    1.13 cost 0.13 ms per call, 3 ms per measure."""
    try:
        from torch.func import vmap
    except ImportError:
        from functorch import vmap
    return vmap


@contextlib.contextmanager
def _swapped(module, state):
    """module's parameters and buffers replaced by state's tensors (name -> tensor, named as named_parameters
    names them) for the block's call, and put back after it. This is what torch.func.functional_call does on
    torch >= 2.0 (an entry of the owning submodule's _parameters or _buffers set to the tensor); torch 1.13's
    torch.nn.utils.stateless.functional_call instead gives every submodule a class of its own per call, whose
    __getattribute__ runs in Python on each attribute the call reads, and those classes are cyclic garbage
    (docs/benchmarks.md, "PyTorch bridge", fifth step). The same operations run on the same tensors either way."""
    saved = []
    try:
        for name, tensor in state.items():
            owner, _, leaf = name.rpartition(".")
            sub = module.get_submodule(owner)
            table = sub._parameters if leaf in sub._parameters else sub._buffers
            saved.append((table, leaf, table[leaf]))
            table[leaf] = tensor
        yield
    finally:
        for table, leaf, original in reversed(saved):
            table[leaf] = original


def parameter_metric(name):
    """gradw_<name>: ".weight" dropped, the block's `branch.` prefix dropped, dots as underscores."""
    if name.startswith("branch."):
        name = name[len("branch."):]
    if name.endswith(".weight"):
        name = name[: -len(".weight")]
    return "gradw_" + name.replace(".", "_")


class _Rng:
    """A sample's global torch RNG state as it was when its blocks had been built: a block run sample by
    sample (dropout, say) draws from it as it did when each sample ran alone right after its construction."""

    def __init__(self, device):
        torch = _torch()
        self.cuda = device if device.type == "cuda" else None
        self.cpu = torch.get_rng_state()
        self.gpu = torch.cuda.get_rng_state(self.cuda) if self.cuda else None

    def __enter__(self):
        torch = _torch()
        torch.set_rng_state(self.cpu)
        if self.cuda:
            torch.cuda.set_rng_state(self.gpu, self.cuda)

    def __exit__(self, *exc):
        torch = _torch()
        self.cpu = torch.get_rng_state()
        if self.cuda:
            self.gpu = torch.cuda.get_rng_state(self.cuda)


def _moved(module, device, dtype):
    """module.to(device=device, dtype=dtype), not called where it would change nothing: no submodule overrides
    `to` or `_apply`, and every parameter, gradient and buffer is on `device` and, if floating or complex, of
    `dtype`. Module.to walks every tensor under no_grad whatever it finds: 0.01 s of the 0.2 s that the
    benchmark's 384 blocks take to build (docs/benchmarks.md, "PyTorch bridge")."""
    torch = _torch()
    plain = (torch.nn.Module.to, torch.nn.Module._apply)
    for sub in module.modules():
        if (type(sub).to, type(sub)._apply) != plain:
            return module.to(device=device, dtype=dtype)
        tensors = [*sub._parameters.values(), *(p.grad for p in sub._parameters.values() if p is not None),
                   *sub._buffers.values()]
        if not all(t is None or _has(t, device, dtype) for t in tensors):
            return module.to(device=device, dtype=dtype)
    return module


def _has(tensor, device, dtype):
    """Whether Module.to(device, dtype) leaves the tensor as it is (it converts floating and complex ones)."""
    return tensor.device == device and (tensor.dtype == dtype or not (tensor.is_floating_point() or
                                                                       tensor.is_complex()))


class Sample:
    """One sample as run_sample built it before batching: torch.manual_seed(seed * 1000003 + sample), a
    generator seeded seed * 1000033 + sample + 17, the blocks built and moved, the input drawn."""

    def __init__(self, build, draw_input, dtype, device, seed, index, check):
        torch = _torch()
        torch.manual_seed(seed * 1_000_003 + index)
        self.generator = torch.Generator().manual_seed(seed * 1_000_033 + index + 17)
        self.modules = [_moved(m, device, dtype) for m in build()]
        if getattr(build, "reuses_modules", False):
            self.modules = copy.deepcopy(self.modules)
        check(self.modules)
        self.x = draw_input(self.generator)
        self.rng = _Rng(device)

    def nbytes(self):
        return sum(t.numel() * t.element_size() for m in self.modules for t in (*m.parameters(), *m.buffers()))

    def readout(self, shape, dtype, device):
        """Drawn after the forward, as before, from the sample's generator (after its input)."""
        torch = _torch()
        return torch.randn(shape, generator=self.generator, dtype=torch.float64).to(device=device, dtype=dtype)


def batch_size(batch, sample0, samples):
    """Samples per batch: `batch` itself, 1 for batch=False (sample by sample), or as many as BATCH_BYTES of
    parameters and buffers hold (at least 1)."""
    if batch is False:
        return 1
    if batch is None:
        return max(1, min(samples, BATCH_BYTES // max(1, sample0.nbytes())))
    return batch


class Plan:
    """How each block of one configuration runs: under vmap unless `vectorize` is off or vmap failed on it
    once (then `per_sample[k]` says why, and later batches go straight to the per-sample loop)."""

    def __init__(self, vectorize):
        self.vectorize = vectorize
        self.per_sample = {}
        self.one_at_a_time = None  # why batches hold one sample, when they must
        self.by_grams = {}  # k -> the nn.Linear weights whose gradw comes from Grams (normsim._bridge_grams)
        self.gradw_formed = {}  # k -> {weight: why its dW is formed}, for those that failed the check

    def note_gram_check(self, k, accepted, refused):
        self.by_grams[k] = set(accepted)
        if refused:
            self.gradw_formed.setdefault(k, {}).update(refused)

    def refuse_grams(self, k, why):
        self.gradw_formed.setdefault(k, {}).update(dict.fromkeys(self.by_grams.pop(k, ()), why))

    def vmapped(self, k):
        return self.vectorize and k not in self.per_sample

    def note_shared_across_blocks(self, modules):
        """Blocks sharing a parameter (tied weights) run sample by sample: its gradient sums every use, and
        under vmap each block would have its own stacked copy, and the gradient of its own use only."""
        owners = {}
        for k, block in enumerate(modules):
            for p in block.parameters():
                owners.setdefault(id(p), set()).add(k)
        for ks in (sorted(ks) for ks in owners.values() if len(ks) > 1):
            for k in ks:
                self.per_sample.setdefault(k, f"shares a parameter with blocks {ks}")

    def note_shared_across_samples(self):
        self.one_at_a_time = "the blocks' factory returned the same module objects for two samples"


class _State:
    """A block's named parameters and buffers (each dict walked once, for the check and the stacking)."""

    def __init__(self, block):
        self.params, self.buffers = dict(block.named_parameters()), dict(block.named_buffers())


def _unbatchable(blocks, states):
    """Why the samples' copies of one block cannot run as one module with stacked state, or None: vmap swaps
    only parameters and buffers, so they must have the same names and shapes in every sample, no tensor may
    hide in a plain attribute (it would be sample 0's for all), and none may be shared under two names."""
    torch = _torch()
    template = blocks[0]
    shapes = [[(n, t.shape) for n, t in (*s.params.items(), *s.buffers.items())] for s in states]
    if any(s != shapes[0] for s in shapes[1:]):
        return "its parameters or buffers differ between samples"
    for name, sub in template.named_modules():
        plain = [a for a, v in vars(sub).items() if isinstance(v, torch.Tensor)]
        if plain:
            return f"submodule '{name or type(sub).__name__}' holds a tensor in the plain attribute '{plain[0]}'"
    aliases = sum(len([p for p in sub._parameters.values() if p is not None]) + len(
        [b for b in sub._buffers.values() if b is not None])
        for _, sub in template.named_modules(remove_duplicate=False))
    if aliases != len(shapes[0]):
        return "a parameter, buffer or submodule is shared under two names"
    return None


def _branch_hook(module, captured):
    """Records the output of the block's submodule `branch` (F_k), the last call's if it runs twice."""
    if not hasattr(module, "branch"):
        return None
    return module.branch.register_forward_hook(lambda _mod, _inp, out: captured.append(out))


def _vmapped_block(blocks, states, x, by_grams):
    """(x_next, branch output or None, [(metric, stacked parameter or LinearUse)]): blocks[s] on x[s] for every
    s at once, sample 0's module run with each sample's parameters and buffers (stacked: leaves whose
    gradients are the samples' parameter gradients). The nn.Linear weights named in `by_grams` are not leaves:
    hooks return each one's input and output, whose Gram matrices give ||dW|| (normsim._bridge_grams)."""
    torch = _torch()
    vmap = _vmap()
    template = blocks[0]
    linears = {n: m for n, m in grams.candidates(template).items() if n in by_grams}
    params = {n: torch.stack([s.params[n].detach() for s in states]) for n in states[0].params}
    for n, stacked in params.items():
        stacked.requires_grad_(states[0].params[n].requires_grad and n not in linears)
    state = {**params, **{n: torch.stack([s.buffers[n] for s in states]) for n in states[0].buffers}}

    def one_sample(sample_state, xs):
        captured, calls = [], {}
        hooks = grams.recording(linears, calls, strict=True) + [_branch_hook(template, captured)]
        try:
            with _swapped(template, sample_state):
                out = template(xs)
        finally:
            for hook in filter(None, hooks):
                hook.remove()
        if len(calls) < len(linears):
            raise grams.NotCalledOnce(next(n for n in linears if n not in calls))
        uses = {n: c[0] for n, c in calls.items()}
        return {"out": out, "uses": uses, **({"branch": captured[-1]} if captured else {})}

    outs = vmap(one_sample)(state, x)
    if not all(output.requires_grad for _, output in outs["uses"].values()):  # a layer of constants only
        raise grams.NotCalledOnce("an nn.Linear whose output has no gradient but for its weight")
    grads = [(parameter_metric(n), grams.LinearUse(outs["uses"][n][0].detach(), outs["uses"][n][1]) if n in linears
              else p) for n, p in params.items() if p.requires_grad or n in linears]
    return outs["out"], (outs["branch"].detach() if "branch" in outs else None), grads


def _looped_block(blocks, x, rngs):
    """The same, sample by sample as before batching (each sample's RNG state restored around its call)."""
    torch = _torch()
    outs, branches = [], []
    for block, xs, rng in zip(blocks, x.unbind(0), rngs):
        captured = []
        hook = _branch_hook(block, captured)
        try:
            with rng:
                outs.append(block(xs))
        finally:
            if hook is not None:
                hook.remove()
        branches.append(captured[-1].detach() if captured else None)
    names = [(n, p) for n, p in blocks[0].named_parameters() if p.requires_grad]
    per_sample = [dict(b.named_parameters()) for b in blocks]
    grads = [(parameter_metric(n), [s[n] for s in per_sample]) for n, _ in names]
    branch = torch.stack(branches) if all(b is not None for b in branches) else None
    return torch.stack(outs), branch, grads


def _run_block(plan, k, blocks, x, rngs):
    """Block k for every sample: under vmap where the plan allows it, else (or where vmap fails, noted in
    the plan once) sample by sample."""
    if plan.vmapped(k):
        states = [_State(b) for b in blocks]
        why = _unbatchable(blocks, states)
        if why is None:
            try:
                try:
                    return _vmapped_block(blocks, states, x, plan.by_grams.get(k, ()))
                except grams.NotCalledOnce as e:
                    plan.refuse_grams(k, f"under vmap: {e}")
                    return _vmapped_block(blocks, states, x, ())
            except Exception as e:  # noqa: BLE001 - vmap's refusals have no common type; the loop re-raises real errors
                why = f"vmap: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        plan.per_sample[k] = why
    return _looped_block(blocks, x, rngs)


def _apply_final(final_norm, x, vectorize):
    """y = final_norm(x_K) per sample (a callable may reduce over its whole input, so never over the batch)."""
    torch = _torch()
    if final_norm is None:
        return x
    if vectorize:
        vmap = _vmap()
        try:
            return vmap(final_norm)(x)
        except Exception:  # noqa: BLE001 - as in _run_block: the per-sample calls raise what is really wrong
            pass
    return torch.stack([final_norm(xs) for xs in x.unbind(0)])


class Passes:
    """One batch's forward and backward: `stream` x_0..x_K (S, 1, T, d) each, `y`, `branches[k]` (S, 1, T, d)
    or None, `grads` (dLoss/dx_l per l, None where no gradient reached it), `params[k]` [(metric, gradient
    (S, ...) or None, which samples have one)], `stream_finite` (K+1, S) whether x_l is finite, `y_finite`
    (S,) whether y is, `finite` (S,) whether the forward was finite (the samples that ran backward);
    `seconds` of the forward and backward."""


def run(samples, plan, final_norm, loss, dtype, device):
    torch = _torch()
    t0 = time.perf_counter()
    passes = Passes()
    x = torch.stack([s.x.unsqueeze(0) for s in samples]).requires_grad_(True)
    passes.stream, passes.branches, blocks_params = [x], [], []
    rngs = [s.rng for s in samples]
    for k in range(len(samples[0].modules)):
        x, branch, grads = _run_block(plan, k, [s.modules[k] for s in samples], x, rngs)
        passes.stream.append(x)
        passes.branches.append(branch)
        blocks_params.append(grads)
    passes.y = _apply_final(final_norm, x, plan.vectorize)
    passes.stream_finite = torch.stack([torch.isfinite(s.detach()).flatten(1).all(1) for s in passes.stream])
    passes.y_finite = torch.isfinite(passes.y.detach()).flatten(1).all(1)
    passes.finite = passes.stream_finite.all(0) & passes.y_finite
    _backward(passes, blocks_params, samples, loss, dtype, device)
    passes.seconds = time.perf_counter() - t0
    return passes


def _backward(passes, blocks_params, samples, loss, dtype, device):
    """dLoss/dx_l and every parameter's gradient for the samples whose forward was finite. The loss is the sum
    of theirs, so each sample's gradients are its own loss's (samples share nothing); torch.autograd.grad
    returns them without the copy into each parameter's layout that .backward() makes."""
    torch = _torch()
    keep = passes.finite.nonzero().flatten().tolist()
    passes.grads = [None] * len(passes.stream)
    passes.params = [[(metric, None, [False] * len(samples)) for metric, _ in block] for block in blocks_params]
    if not keep:
        return
    draws = torch.stack([samples[s].readout(passes.y.shape[1:], dtype, device) for s in keep])
    y = passes.y[keep]
    objective = (draws * y).sum() if loss == "readout" else 0.5 * ((y - draws) ** 2).sum()
    wanted = [(("stream", l), t) for l, t in enumerate(passes.stream) if t.requires_grad]
    for k, block in enumerate(blocks_params):
        for i, (_, p) in enumerate(block):
            leaves = p if isinstance(p, list) else [p.output] if isinstance(p, grams.LinearUse) else [p]
            wanted += [(("param", k, i, j), leaf) for j, leaf in enumerate(leaves)]
    if not objective.requires_grad:
        raise ValueError("normsim.torch: the stack's output y depends neither on its input x0 nor on any parameter "
                         "(a block returns a constant, or detaches the stream), so there is no gradient to "
                         "measure: a residual block returns x + F(x) computed from its input")
    grads = torch.autograd.grad(objective, [t for _, t in wanted], allow_unused=True)
    per_sample = {}
    for (where, _), g in zip(wanted, grads):
        if where[0] == "stream":
            passes.grads[where[1]] = g
        else:
            per_sample.setdefault(where[1:3], []).append(g)
    for (k, i), gs in per_sample.items():
        metric, leaf = blocks_params[k][i]
        passes.params[k][i] = (metric, *_stacked_gradient(gs, leaf, len(samples)))


def _stacked_gradient(gs, leaf, samples):
    """(gradient (S, ...) or None, which samples have one). A stacked parameter (gs: its one gradient) or an
    nn.Linear's use (gs: its output's gradient) has every sample's or none; per-sample leaves may lack one (a
    sample left out of the backward): zeros there."""
    from . import _metrics
    torch = _torch()
    if isinstance(leaf, grams.LinearUse):
        return (None if gs[0] is None else _metrics.LinearGradient(leaf.a, gs[0])), [gs[0] is not None] * samples
    if not isinstance(leaf, list):
        return gs[0], [gs[0] is not None] * samples
    present = [g is not None for g in gs]
    if not any(present):
        return None, present
    like = gs[present.index(True)]
    return torch.stack([g if g is not None else torch.zeros_like(like) for g in gs]), present
