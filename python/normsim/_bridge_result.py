"""The PyTorch bridge's per-sample values as a Result with normsim.run's columns, and its files: the result
files of `normsim run` (layers.csv, summary.csv, nonfinite.csv, run.json; no theory.csv), readable by
`normsim plot` and normsim.read."""
import json
import math
import os

from . import _core, _frames
from ._deps import require
from ._metrics import STREAM
from ._result import Result, of_bridge


def _metric_order(records):
    """The simulator's metrics in table order, then the bridge's own (gradw_<parameter>) in first appearance."""
    table = [m[0] for m in _core.metrics()]
    seen = list(dict.fromkeys(m for config in records for m in config["values"]))
    return [m for m in table if m in seen] + [m for m in seen if m not in table]


def _config_values(names, records, loss, samples, seed, dtype):
    """Every config key (empty where a PyTorch block has no such key), placement = the block's name."""
    values = {key: [None] * len(names) for key in _core.columns("summary")[1:-6]}
    for c, name in enumerate(names):
        T, d = records[c]["shape"]
        known = {"placement": name, "width": d, "tokens": T, "depth": records[c]["depth"],
                 "loss": loss, "seed": seed, "samples": samples, "precision": dtype}
        for key, value in known.items():
            values[key][c] = value
    return values


def _per_sample(records, metrics):
    """metric -> [config, sample, index], NaN where a value is missing or not finite."""
    np = require("numpy", "normsim.torch")
    samples = max(len(c["nonfinite"]) for c in records)
    out = {}
    for m in metrics:
        size = max(c["values"][m].shape[1] for c in records if m in c["values"])
        a = np.full((len(records), samples, size), np.nan)
        for c, config in enumerate(records):
            if m in config["values"]:
                v = config["values"][m]
                a[c, : v.shape[0], : v.shape[1]] = np.where(np.isfinite(v), v, np.nan)
        out[m] = a
    return out


def _index_columns(metrics, code, index):
    """l and k of rows with metric codes `code` and indices `index`: the index in l for a stream metric, in k
    for a sublayer metric, NaN in the other."""
    np = require("numpy", "normsim.torch")
    stream = np.array([m in STREAM for m in metrics], dtype=bool)[code]
    index = index.astype(float)
    return np.where(stream, index, np.nan), np.where(stream, np.nan, index)


def _row_statistics(a):
    """mean, se (sample sd / sqrt(n), 0 when n = 1) and n over the finite values of each row of a (rows,
    samples). Rows with every value finite are reduced together along their contiguous last axis, which
    numpy sums as it sums one row alone (pairwise), so the figures equal those of the per-row computation;
    the few rows with missing values are computed one by one."""
    np = require("numpy", "normsim.torch")
    finite = np.isfinite(a)
    n = finite.sum(axis=1)
    mean, se = np.full(len(a), np.nan), np.full(len(a), np.nan)
    full = n == a.shape[1]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        rows = np.ascontiguousarray(a[full])
        mean[full] = rows.mean(axis=1)
        se[full] = np.std(rows, axis=1, ddof=1) / np.sqrt(a.shape[1]) if a.shape[1] > 1 else 0.0
        for r in np.nonzero(~full & (n > 0))[0]:
            v = a[r][finite[r]]
            mean[r] = v.mean()
            se[r] = np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
    return mean, se, n


def _summary_columns(per_sample, metrics):
    """summary.csv's columns: mean, se and n over the finite samples, rows by config, metric, index; a row
    whose mean or se is not finite is left out (summary.csv never holds NaN or Inf)."""
    np = require("numpy", "normsim.torch")
    configs = next(iter(per_sample.values())).shape[0]
    parts = []
    for c in range(configs):
        for code, m in enumerate(metrics):
            rows = per_sample[m][c].T  # (index, samples)
            mean, se, n = _row_statistics(rows)
            keep = (n > 0) & np.isfinite(mean) & np.isfinite(se)
            index = np.nonzero(keep)[0]
            parts.append((np.full(len(index), c), np.full(len(index), code), index, mean[keep], se[keep],
                          n[keep]))
    config, code, index, mean, se, n = (np.concatenate(p) for p in zip(*parts))
    l, k = _index_columns(metrics, code.astype(int), index)
    return {"config": config.astype(int), "metric": code.astype(int), "l": l, "k": k, "mean": mean, "se": se,
            "n": n.astype(int)}


def _layer_columns(per_sample, metrics):
    """layers.csv's columns: every finite value, ordered by config, sample, metric, index."""
    np = require("numpy", "normsim.torch")
    configs, samples = next(iter(per_sample.values())).shape[:2]
    size = max(a.shape[2] for a in per_sample.values())
    grid = np.full((configs, samples, len(metrics), size), np.nan)
    for code, m in enumerate(metrics):
        grid[:, :, code, : per_sample[m].shape[2]] = per_sample[m]
    config, sample, code, index = np.nonzero(np.isfinite(grid))  # C order: config, sample, metric, index
    l, k = _index_columns(metrics, code, index)
    return {"config": config, "metric": code, "l": l, "k": k, "sample": sample,
            "value": grid[config, sample, code, index]}


def _table(name, columns, configs, metrics):
    """_frames.table(name, ...) with its config-key columns typed once per config, not once per row:
    _frames.table converts every key column from Python objects (40-odd of them), which for the 5000 rows of
    a 16-sample depth-24 run took most of the result's time. Here it types the first row of each config,
    whose key values are that config's, so every dtype is the one the whole table gets (a key is nullable
    exactly where some config lacks it), and those rows are repeated; the other columns are typed as
    _frames.typed types them."""
    np = require("numpy", "normsim.torch")
    rows = np.asarray(columns["config"])
    if not len(rows):
        return _frames.table(name, columns, configs, metrics)
    present, first, position = np.unique(rows, return_index=True, return_inverse=True)
    head = _frames.table(name, {c: np.asarray(v)[first] for c, v in columns.items()}, configs, metrics)
    table = head.iloc[position].reset_index(drop=True)
    own = _frames.typed(require("pandas", "normsim.torch").DataFrame(
        {"metric": np.asarray(metrics, dtype=object)[columns["metric"]],
         **{c: v for c, v in columns.items() if c not in ("config", "metric")}}))
    for col in own.columns:
        table[col] = own[col].to_numpy() if own[col].dtype != "Int64" else own[col].array
    return table


def _definitions(metrics):
    known = {m[0]: m[2] for m in _core.metrics()}
    return {m: known.get(m, f"Frobenius norm of dLoss/d(parameter '{m[len('gradw_'):]}') of block k (PyTorch)")
            for m in metrics}


def _nonfinite_rows(records):
    """nonfinite.csv's rows in the simulator's order: config, sample, its statistics, then its stream."""
    rows = []
    for c, config in enumerate(records):
        for s, (statistics, stream) in enumerate(zip(config["statistics"], config["nonfinite"])):
            rows += [(c, s, pass_, layer, metric) for pass_, layer, metric in statistics]
            if stream:
                rows.append((c, s, *stream, ""))
    return rows


def _bridge_notes(record):
    """What run.json says of a configuration's run beyond the simulator's fields: every block's token-mixing
    probe (true, false, or null where it could not be probed), the samples per batch, the blocks run sample
    by sample with why, and the nn.Linear weights whose dW is formed (not taken from Grams) with why."""
    notes = {"token_mixing": record["token_mixing"], "batch": record["batch"],
             "per_sample_blocks": {str(k): why for k, why in sorted(record["per_sample_blocks"].items())},
             "gradw_formed": {str(k): why for k, why in sorted(record["gradw_formed"].items())}}
    if record["one_at_a_time"]:
        notes["batch_note"] = record["one_at_a_time"]
    return notes


def build(names, records, loss, samples, seed, dtype, info):
    require("pandas", "normsim.torch")
    metrics = _metric_order(records)
    configs = _config_values(names, records, loss, samples, seed, dtype)
    per_sample = _per_sample(records, metrics)
    summary = _table("summary", _summary_columns(per_sample, metrics), configs, metrics)
    layers = _table("layers", _layer_columns(per_sample, metrics), configs, metrics)
    theory = _frames.table("theory", {"config": [], "metric": [], "l": [], "k": [], "value": []}, configs,
                           metrics)
    nonfinite = _frames.nonfinite_table(_nonfinite_rows(records))
    version, commit = _core.version()
    wall = info.pop("wall_seconds")
    run_info = {"normsim_version": version, "git_commit": commit, "name": "torch", "description":
                "normsim.torch.measure", "config_file": "", **info, "peak_memory_bytes": 0,
                "timings": {"wall_seconds": wall}, "swept_keys": ["placement"],
                "configs": [{"id": c, "values": {k: v[c] for k, v in configs.items() if v[c] is not None},
                             "seed": seed, **_bridge_notes(records[c])} for c in range(len(names))],
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


def _text(v):
    """A field of a column that is not float64: booleans true/false, text quoted where needed (io::csv_field: a
    custom placement's block "x + Fv(N(x), 0.5)" holds commas), "" absent."""
    if v is None or v is require("pandas", "normsim.torch").NA:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v) if isinstance(v, int) else _core.csv_field(str(v))


def _column_texts(column, measured):
    """A column's fields as normsim writes them, each distinct value formatted once (the config keys repeat
    one value per config over thousands of rows). A double's NaN is "nan" in a measured column (mean, se,
    value), as io::format_number spells it (normsim's own results hold none: non-finite values are left out),
    and "" (absent) in a config key's, where it stands for a key the block has no value for."""
    np = require("numpy", "normsim.torch")
    if column.dtype == np.float64:
        # Distinct by their bits: -0.0 == 0.0 as doubles, yet they are written "-0" and "0".
        bits, where = np.unique(np.ascontiguousarray(column.to_numpy()).view(np.uint64), return_inverse=True)
        # io::format_number itself (one definition of how normsim spells a double: shortest round trip, never a
        # bare integer of 16 or more digits, nan/-nan/inf/-inf), once per distinct value.
        texts = ["" if math.isnan(x) and not measured else _core.format_number(x)
                 for x in bits.view(np.float64).tolist()]
        return np.array(texts, dtype=object)[where].tolist()
    texts, out = {}, []
    for v in column.astype(object):
        # Keyed by type and text: True == 1 and -0.0 == 0.0 as dict keys, yet each is written its own way.
        key = (type(v), repr(v) if isinstance(v, float) else v)
        out.append(texts[key] if key in texts else texts.setdefault(key, _text(v)))
    return out


def _csv(df):
    columns = [_column_texts(df[c], c in _frames.MEASURED_COLUMNS) for c in df.columns]
    lines = [",".join(df.columns)] + [",".join(row) for row in zip(*columns)]
    return "\n".join(lines) + "\n"


def save(result, out):
    """Any Result's frames as normsim's files (the bridge's, or one normsim.read returned)."""
    os.makedirs(out, exist_ok=True)
    _write(os.path.join(out, "nonfinite.csv"), _csv(result.nonfinite))
    # As `normsim run` (and read's rule, _result.read): every folder but a bridge's has a theory.csv, header
    # only where nothing has a mean field, so that a saved copy reads back.
    if result.theory is not None and (len(result.theory) or not of_bridge(result.run_info)):
        _write(os.path.join(out, "theory.csv"), _csv(_frames.with_every_key(result.theory, result.configs, "theory")))
    _write(os.path.join(out, "layers.csv"), _csv(_frames.with_every_key(result.layers, result.configs, "layers")))
    _write(os.path.join(out, "summary.csv"), _csv(_frames.with_every_key(result.summary, result.configs, "summary")))
    _write(os.path.join(out, "run.json"), json.dumps(result.run_info, indent=2) + "\n")  # last: finished
