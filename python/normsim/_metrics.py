"""normsim's per-layer metrics (docs/metrics.md) of a PyTorch model's streams, for the PyTorch bridge, in
float64 with the simulator's definitions: the stream fields (act_sq, token_cos, cos_next, ...: the rows of
sim/stream_sums.hpp) and eff_rank by the simulator's own code (_core.stream_fields), so a field added there
needs nothing here; branch_sq and the gradients' norms in batched tensor operations (sim/sample_metrics.cpp's
definitions)."""
from . import _core
from ._deps import require

# From the metric table (vocab/metrics.def): every metric of the stream x_l, and every forward metric of
# sublayer k (the backward ones, gradw_<name>, the bridge names by its parameters: _gradw_order).
STREAM = tuple(m[0] for m in _core.metrics() if m[1] == "l")
SUBLAYER = tuple(m[0] for m in _core.metrics() if m[1] == "k" and m[4] == "forward")
# The stream fields, (metric, pair, fewest tokens) in the order the simulator computes them: of x_l, then
# eff_rank (STREAM_FORWARD, the order it stores their NaN/Inf in), and of the pair x_l, x_{l+1} (PAIR_FIELDS).
_FIELDS = _core.stream_field_table()
STREAM_FORWARD = tuple(m for m, pair, _ in _FIELDS if not pair) + ("eff_rank",)
PAIR_FIELDS = tuple(m for m, pair, _ in _FIELDS if pair)


def _torch():
    return require("torch", "normsim.torch")


def forward(stream, branches):
    """metric -> float64 numpy (S, index) of every forward statistic, from the stream x_0..x_K (S, K+1, T, d),
    zero where a sample's stream is not finite (its values there are not used), and the branch outputs
    [(S, T, d) or None per block] (branch_sq NaN for a block without one). The stream fields and eff_rank
    come from _core.stream_fields on the stream in float64 (a float32 or bfloat16 entry widens exactly, as
    the simulator widens its own), on torch's thread count; a field defined for more tokens than T is left
    out."""
    torch = _torch()
    x = stream.double()
    nan = x.new_full((x.shape[0],), float("nan"))
    branch_sq = torch.stack([nan if b is None else b.double().pow(2).mean(dim=(-2, -1)) for b in branches],
                            dim=1)
    out = {"branch_sq": branch_sq.cpu().numpy()}
    out.update(_core.stream_fields(x.cpu().contiguous().numpy(), torch.get_num_threads()))
    return out


def gradient_sq(grads):
    """grad_sq (S, K+1) from dLoss/dx_l (S, T, d) per l (zero where a sample's gradient is not used)."""
    return _torch().stack([g.double().pow(2).mean(dim=(-2, -1)) for g in grads], dim=1).cpu().numpy()


class LinearGradient:
    """dLoss/dW of an nn.Linear, y_t = W a_t + b, for S samples without forming it: dW = sum_t g_t a_t^T over
    the N tokens (every leading index of the layer's input), g_t = dLoss/dy_t, so ||dW||_F^2 = sum_{t,s}
    (a_t . a_s)(g_t . g_s), the inner product of two N x N Gram matrices, as the simulator takes gradw
    (frobenius_of_AtB, sim/cpu/frobenius.hpp:73-81 and sim/cpu/gram.hpp:1-2): N^2 (n + m) multiply-adds
    instead of dW's N n m, for an n -> m layer, used where fewer (sim/cpu/frobenius.hpp:75), dW formed
    otherwise. In float64: a float32 product is exact there and the sums round at 1.1e-16, where dW formed in
    float32 rounds each entry at 6e-8 (tests/python/test_torch_bridge.py, test_gradw_by_grams_equals_dw)."""

    def __init__(self, a, g):
        self.a = a.reshape(a.shape[0], -1, a.shape[-1])  # (S, N, n)
        self.g = g.reshape(g.shape[0], -1, g.shape[-1])  # (S, N, m)

    def norms(self):
        """numpy (S,): ||dW||_F per sample (NaN where a or g is not finite)."""
        N, n, m = self.a.shape[1], self.a.shape[2], self.g.shape[2]
        if N * (n + m) >= n * m:
            return frobenius(self.g.transpose(1, 2) @ self.a)
        a, g = self.a.double(), self.g.double()
        inner = ((a @ a.transpose(1, 2)) * (g @ g.transpose(1, 2))).sum(dim=(1, 2))
        return inner.clamp(min=0).sqrt().cpu().numpy()  # clamp: rounding below 0 when dW is 0; NaN stays


def frobenius(grad):
    """The Frobenius norm of each sample's gradient, grad (S, ...) or a LinearGradient -> numpy (S,), summed in
    float64. The sum
    of squares does not depend on the order of the entries, so a vmapped weight's gradient (a transposed view)
    is read in memory order, one row per sample, converted to float64 and its squares summed: torch 1.13's
    vector_norm in float64 took twice as long (48 float32 gradients 16 x 512 x 128: 0.074 s, this 0.036 s)."""
    if isinstance(grad, LinearGradient):
        return grad.norms()
    if grad.dim() == 1:  # a scalar parameter: its absolute value
        return grad.double().abs().cpu().numpy()
    in_memory_order = grad.permute(0, *sorted(range(1, grad.dim()), key=lambda i: -grad.stride(i)))
    rows = in_memory_order.reshape(grad.shape[0], -1)
    return rows.double().pow(2).sum(dim=1).sqrt().cpu().numpy()


def _first_false(ok):
    """Per row of a boolean numpy array, the first column that is False, or -1."""
    np = require("numpy", "normsim.torch")
    return np.where(ok.all(axis=1), -1, np.argmin(ok, axis=1))


def measure(passes):
    """Every metric of a batch's samples, as the simulator's measure_sample stores them (sim/sample_metrics.cpp):
    {"values": metric -> numpy (S, index), NaN where a statistic is not computed, "statistics": per sample
    the (pass, index, metric) of each statistic that came out NaN or Inf from a finite stream, in the order
    computed, "nonfinite": per sample (pass, layer) where a stream first held a NaN or Inf, or None}.
    The forward ends at the first non-finite stream (K+1 for y) and skips the backward; the backward runs
    from x_K down and ends at the first non-finite (or missing) gradient, whose block still has gradw."""
    np = require("numpy", "normsim.torch")
    torch = _torch()
    stream = torch.stack([s.detach()[:, 0] for s in passes.stream], dim=1)  # (S, K+1, T, d)
    S, K = stream.shape[0], stream.shape[1] - 1
    finite = passes.stream_finite.T  # (S, K+1)
    if not bool(finite.all()):
        stream = stream.where(finite[..., None, None], stream.new_zeros(()))
    values = forward(stream, [None if b is None else b[:, 0] for b in passes.branches])
    y_finite = passes.y_finite.cpu().numpy()
    bad = _first_false(finite.cpu().numpy())
    bad = np.where((bad < 0) & ~y_finite, K + 1, bad)
    end = np.where(bad < 0, K + 1, bad)
    l, k = np.arange(K + 1), np.arange(K)
    masks = {m: l[None] < end[:, None] for m in STREAM_FORWARD if m in values}
    masks.update({m: k[None] < np.minimum(K, end - 1)[:, None] for m in PAIR_FIELDS})
    has_branch = np.array([b is not None for b in passes.branches], dtype=bool)
    masks["branch_sq"] = (k[None] < np.minimum(K, end)[:, None]) & has_branch[None]
    stop = _backward_values(passes, values, masks, bad < 0)
    gradw_order = _gradw_order(passes.params, masks, S, K)
    out = {"values": {}, "nonfinite": [], "statistics": [], "gradw_order": gradw_order}
    for metric, v in values.items():
        if metric in masks and (metric in STREAM or metric in SUBLAYER or metric in gradw_order):
            out["values"][metric] = np.where(masks[metric], v, np.nan)
    for metric in STREAM_FORWARD:  # a field defined for more tokens than T (token_cos, one token): NaN
        out["values"].setdefault(metric, np.full((S, K + 1), np.nan))
    for s in range(S):
        out["nonfinite"].append(("forward", int(bad[s])) if bad[s] >= 0 else
                                ("backward", int(stop[s])) if stop[s] >= 0 else None)
        out["statistics"].append(_nonfinite_statistics(values, masks, passes.params, s, K))
    return out


def _backward_values(passes, values, masks, ran):
    """grad_sq and gradw_<name> into `values` and their masks into `masks` for the samples that `ran` the
    backward; returns per sample the stream index where the backward ended (-1: none)."""
    np = require("numpy", "normsim.torch")
    torch = _torch()
    S, K = len(ran), len(passes.stream) - 1
    present = np.array([g is not None for g in passes.grads])
    grads = [g[:, 0] if g is not None else _zeros_like_stream(passes.stream[0])
             for g in passes.grads]
    ok = torch.stack([torch.isfinite(g).flatten(1).all(1) for g in grads], dim=1).cpu().numpy() & present
    top_bad = _first_false(ok[:, ::-1])
    stop = np.where(top_bad < 0, -1, K - top_bad)
    stop = np.where(ran, stop, -1)
    values["grad_sq"] = gradient_sq(grads)
    masks["grad_sq"] = ran[:, None] & (np.arange(K + 1)[None] > stop[:, None])
    for k, block in enumerate(passes.params):
        for metric, grad, have in block:
            if grad is None:
                continue
            if metric not in values:
                values[metric], masks[metric] = np.full((S, K), np.nan), np.zeros((S, K), bool)
            values[metric][:, k] = frobenius(grad)
            masks[metric][:, k] = ran & np.asarray(have) & (k >= np.maximum(stop, 0))
    return stop


def _zeros_like_stream(x):
    """(S, T, d) zeros for a stream x (S, 1, T, d) that no gradient reached (its grad_sq is not stored)."""
    return x.new_zeros((x.shape[0], *x.shape[2:]))


def _nonfinite_statistics(values, masks, params, s, K):
    """Sample s's statistics that came out NaN or Inf, in the order the simulator computes them."""
    import math
    if all(math.isfinite(v) for m in masks for v in values[m][s][masks[m][s]]):
        return []
    order = [("forward", l, m) for l in range(K + 1) for m in STREAM_FORWARD if m in masks]  # token_cos: T > 1
    order += [("forward", k, m) for k in range(K) for m in PAIR_FIELDS]
    order += [("forward", k, "branch_sq") for k in range(K)]
    order += [("backward", l, "grad_sq") for l in range(K, -1, -1)]
    order += [("backward", k, metric) for k in range(K - 1, -1, -1) for metric, grad, _ in params[k]
              if grad is not None]
    return [(p, i, m) for p, i, m in order if masks[m][s, i] and not math.isfinite(values[m][s, i])]


def _gradw_order(params, masks, S, K):
    """gradw_<name> in the order a sample first stores them (blocks from K-1 down, parameters in order)."""
    seen = {}
    for s in range(S):
        for k in range(K - 1, -1, -1):
            for metric, grad, _ in params[k]:
                if grad is not None and masks[metric][s, k]:
                    seen.setdefault(metric, None)
    return list(seen)
