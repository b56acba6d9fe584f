"""The PyTorch bridge's per-sample values as a Result with normsim.run's columns, and its files: the result
files of `normsim run` (layers.csv, summary.csv, nonfinite.csv, run.json; no theory.csv), readable by
`normsim plot` and normsim.read."""
import json
import math
import os

from . import _core, _frames
from ._deps import require
from ._result import Result


def _metric_order(records):
    """The simulator's metrics in table order, then the bridge's own (gradw_<parameter>) in first appearance."""
    table = [m[0] for m in _core.metrics()]
    seen = []
    for config in records:
        for sample in config:
            seen += [m for m in sample["values"] if m not in seen]
    return [m for m in table if m in seen] + [m for m in seen if m not in table]


def _config_values(names, records, loss, samples, seed, dtype):
    """Every config key (empty where a PyTorch block has no such key), placement = the block's name."""
    values = {key: [None] * len(names) for key in _core.columns("summary")[1:-6]}
    for c, name in enumerate(names):
        T, d = records[c][0]["shape"]
        known = {"placement": name, "width": d, "tokens": T, "depth": len(records[c][0]["values"]["cos_next"]),
                 "loss": loss, "seed": seed, "samples": samples, "precision": dtype}
        for key, value in known.items():
            values[key][c] = value
    return values


def _per_sample(records, metrics):
    np = require("numpy", "normsim.torch")
    samples = max(len(c) for c in records)
    out = {}
    for m in metrics:
        size = max(len(s["values"].get(m, [])) for c in records for s in c)
        a = np.full((len(records), samples, size), np.nan)
        for c, config in enumerate(records):
            for s, sample in enumerate(config):
                row = np.asarray(sample["values"].get(m, []), dtype=float)
                a[c, s, : len(row)] = np.where(np.isfinite(row), row, np.nan)
        out[m] = a
    return out


def _stream_metric(metric):
    return metric in ("act_sq", "act_mean_abs", "act_max_abs", "token_cos", "eff_rank", "grad_sq")


def _summary_columns(per_sample, metrics):
    """summary.csv's columns: mean, se (sample sd / sqrt(n), 0 when n = 1) and n over the finite samples."""
    np = require("numpy", "normsim.torch")
    cols = {c: [] for c in ("config", "metric", "l", "k", "mean", "se", "n")}
    for c in range(next(iter(per_sample.values())).shape[0]):
        for code, m in enumerate(metrics):
            a = per_sample[m][c]
            for i in range(a.shape[1]):
                v = a[:, i][np.isfinite(a[:, i])]
                if not len(v):
                    continue
                with np.errstate(over="ignore", invalid="ignore"):
                    mean = float(v.mean())
                    se = float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0
                if math.isfinite(mean) and math.isfinite(se):  # never NaN or Inf, as summary.csv
                    _append(cols, c, code, m, i, mean=mean, se=se, n=len(v))
    return {k: np.asarray(v) for k, v in cols.items()}


def _layer_columns(per_sample, metrics):
    """layers.csv's columns: every finite value, ordered by config, sample, metric, index."""
    np = require("numpy", "normsim.torch")
    cols = {c: [] for c in ("config", "sample", "metric", "l", "k", "value")}
    configs, samples = next(iter(per_sample.values())).shape[:2]
    for c in range(configs):
        for s in range(samples):
            for code, m in enumerate(metrics):
                for i, v in enumerate(per_sample[m][c, s]):
                    if np.isfinite(v):
                        _append(cols, c, code, m, i, sample=s, value=float(v))
    return {k: np.asarray(v) for k, v in cols.items()}


def _append(cols, c, code, metric, index, **fields):
    cols["config"].append(c)
    cols["metric"].append(code)
    cols["l"].append(index if _stream_metric(metric) else float("nan"))
    cols["k"].append(float("nan") if _stream_metric(metric) else index)
    for k, v in fields.items():
        cols[k].append(v)


def _definitions(metrics):
    known = {m[0]: m[2] for m in _core.metrics()}
    return {m: known.get(m, f"Frobenius norm of dLoss/d(parameter '{m[len('gradw_'):]}') of block k (PyTorch)")
            for m in metrics}


def _nonfinite_rows(records):
    """nonfinite.csv's rows in the simulator's order: config, sample, its statistics, then its stream."""
    rows = []
    for c, config in enumerate(records):
        for s, r in enumerate(config):
            rows += [(c, s, pass_, layer, metric) for pass_, layer, metric in r["statistics"]]
            if r["nonfinite"]:
                rows.append((c, s, *r["nonfinite"], ""))
    return rows


def build(names, records, loss, samples, seed, dtype, info):
    require("pandas", "normsim.torch")
    metrics = _metric_order(records)
    configs = _config_values(names, records, loss, samples, seed, dtype)
    per_sample = _per_sample(records, metrics)
    summary = _frames.table("summary", _summary_columns(per_sample, metrics), configs, metrics)
    layers = _frames.table("layers", _layer_columns(per_sample, metrics), configs, metrics)
    theory = _frames.table("theory", {"config": [], "metric": [], "l": [], "k": [], "value": []}, configs,
                           metrics)
    nonfinite = _frames.nonfinite_table(_nonfinite_rows(records))
    version, commit = _core.version()
    wall = info.pop("wall_seconds")
    run_info = {"normsim_version": version, "git_commit": commit, "name": "torch", "description":
                "normsim.torch.measure", "config_file": "", **info, "peak_memory_bytes": 0,
                "timings": {"wall_seconds": wall}, "swept_keys": ["placement"],
                "configs": [{"id": c, "values": {k: v[c] for k, v in configs.items() if v[c] is not None},
                             "seed": seed} for c in range(len(names))],
                "metrics": _definitions(metrics)}
    result = Result(summary, layers, theory, per_sample, _frames.config_table(configs), run_info, nonfinite)
    result._saver = lambda out: save(result, out)
    return result


def _write(path, text):
    """Atomically, as normsim writes its files: a temporary file renamed over the target."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _csv(df):
    def field(v):
        if v is None or v is require("pandas", "normsim.torch").NA or (isinstance(v, float) and math.isnan(v)):
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return repr(v) if isinstance(v, float) else str(v)
    lines = [",".join(df.columns)]
    lines += [",".join(field(v) for v in row) for row in df.astype(object).itertuples(index=False)]
    return "\n".join(lines) + "\n"


def save(result, out):
    """Any Result's frames as normsim's files (the bridge's, or one normsim.read returned)."""
    os.makedirs(out, exist_ok=True)
    _write(os.path.join(out, "nonfinite.csv"), _csv(result.nonfinite))
    if result.theory is not None and len(result.theory):
        _write(os.path.join(out, "theory.csv"), _csv(_frames.with_every_key(result.theory, result.configs, "theory")))
    _write(os.path.join(out, "layers.csv"), _csv(_frames.with_every_key(result.layers, result.configs, "layers")))
    _write(os.path.join(out, "summary.csv"), _csv(_frames.with_every_key(result.summary, result.configs, "summary")))
    _write(os.path.join(out, "run.json"), json.dumps(result.run_info, indent=2) + "\n")  # last: finished
