"""normsim's per-layer metrics (docs/metrics.md) on PyTorch tensors, computed in float64 with the simulator's
definitions (sim/stream_metrics.cpp, sim/sample_metrics.cpp), for the PyTorch bridge."""
import math

STREAM = ("act_sq", "act_mean_abs", "act_max_abs", "token_cos", "eff_rank", "grad_sq")
SUBLAYER = ("cos_next", "rel_update", "branch_sq")
NAN = float("nan")


def token_cosine(x):
    """Mean over token pairs t != s of cos(x[t], x[s])."""
    T = x.shape[0]
    if T < 2:
        return NAN
    norms = x.norm(dim=1, keepdim=True)
    n = x / norms.where(norms > 0, norms.new_ones(()))
    total = n.sum(dim=0).pow(2).sum() - n.pow(2).sum()
    return float(total) / (T * (T - 1))


def effective_rank(x):
    """exp(entropy of s / sum s), s the singular values of x (Roy & Vetterli)."""
    import torch
    s = torch.linalg.svdvals(x)
    total = float(s.sum())
    if not total > 0:
        return NAN
    p = s / total
    p = p[p > 0]
    return math.exp(float(-(p * p.log()).sum()))


def mean_token_cosine(a, b):
    return float(((a * b).sum(dim=1) / (a.norm(dim=1) * b.norm(dim=1))).mean())


def mean_relative_update(before, after):
    return float(((after - before).norm(dim=1) / before.norm(dim=1)).mean())


def _finite(t):
    import torch
    return bool(torch.isfinite(t).all())


class Store:
    """Where one sample's values go, as the simulator's measure_sample stores them (sim/sample_metrics.cpp):
    values[metric][index], and (pass, index, metric) for every statistic that came out NaN or Inf although
    its stream was finite (`nonfinite`, in the order computed), so that none vanishes silently."""

    def __init__(self, K):
        self.values = {m: [NAN] * (K + 1) for m in STREAM}
        self.values.update({m: [NAN] * K for m in SUBLAYER})
        self.nonfinite = []

    def __call__(self, metric, index, compute, size=None, pass_="forward"):
        value = float(compute())
        self.values.setdefault(metric, [NAN] * (size or 0))[index] = value
        if not math.isfinite(value):
            self.nonfinite.append((pass_, index, metric))


def forward_metrics(store, stream, y, branch_out):
    """Stream and sublayer metrics of one sample from x_0..x_K (T x d each), the output y and the branch
    outputs, into `store`; returns the first non-finite stream index (K+1 for y), or None."""
    K = len(stream) - 1
    bad = next((l for l, x in enumerate(stream) if not _finite(x)), None)
    if bad is None and not _finite(y):
        bad = K + 1
    end = K + 1 if bad is None else bad
    xs = [x.double() for x in stream[:end]]
    for l, x in enumerate(xs):
        store("act_sq", l, lambda: x.pow(2).mean())
        store("act_mean_abs", l, lambda: x.abs().mean())
        store("act_max_abs", l, lambda: x.abs().max())
        if x.shape[0] > 1:
            store("token_cos", l, lambda: token_cosine(x))
        store("eff_rank", l, lambda: effective_rank(x))
    for k in range(min(K, end - 1)):
        store("cos_next", k, lambda: mean_token_cosine(xs[k], xs[k + 1]))
        store("rel_update", k, lambda: mean_relative_update(xs[k], xs[k + 1]))
    for k in range(min(K, end)):
        if branch_out[k] is not None:
            store("branch_sq", k, lambda: branch_out[k].double().pow(2).mean())
    return bad


def backward_metrics(store, grads, params):
    """grad_sq from the stream gradients (x_0..x_K) and gradw_<name> of every block's parameters
    ({k: [(metric, grad)]}), into `store`; the backward runs from x_K down, so a non-finite gradient at l
    ends it. Returns that l, or None."""
    K = len(grads) - 1
    bad = next((l for l in range(K, -1, -1) if grads[l] is None or not _finite(grads[l])), None)
    stop = -1 if bad is None else bad
    for l in range(K, stop, -1):
        store("grad_sq", l, lambda: grads[l].double().pow(2).mean(), pass_="backward")
    for k in range(K - 1, max(stop, 0) - 1, -1):
        for metric, grad in params.get(k, []):
            if grad is not None:
                store(metric, k, lambda: grad.double().norm(), size=K, pass_="backward")
    return bad
