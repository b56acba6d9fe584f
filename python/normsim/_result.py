"""Result: what normsim.run, normsim.read and normsim.torch.measure return."""
import contextlib
import json
import os
import shutil

from . import _frames


@contextlib.contextmanager
def held_out(out):
    """The results folder `out`, created if needed and locked for the block (a folder another writer holds is
    refused at once); if the block fails or is interrupted, a folder this call made is absent again."""
    from . import _core
    path = os.fspath(out)
    created = not os.path.exists(path)
    lock = _core.OutLock(path)
    try:
        yield path
    except BaseException:
        if created:  # removed before the lock is released: no other writer can have taken it meanwhile
            shutil.rmtree(path, ignore_errors=True)
        raise
    finally:
        lock.release()


def check_out(out):
    """Raises FileExistsError when the results folder `out` exists and holds anything but a lock file or
    temporaries (what a run killed before writing leaves)."""
    leftovers = ("normsim.lock",)
    if os.path.isdir(out) and [n for n in os.listdir(out) if n not in leftovers and ".tmp." not in n]:
        raise FileExistsError(f"{out} is not empty; pass force=True to Result.save to replace its result files")


class Result:
    """A run's results.

    summary     DataFrame, summary.csv's columns less the keys that are the same in every configuration:
                config, the keys that vary, metric, l, k, mean, se, n
    layers      DataFrame, likewise layers.csv's: config, the keys that vary, sample, metric, l, k, value
    theory      DataFrame, likewise theory.csv's (the mean field; empty where the theory has no prediction)
    per_sample  dict metric -> its values per config, sample and index l or k, labelled: an xarray.DataArray
                when xarray is installed, else a DataFrame (rows: MultiIndex config, sample; columns: l or k).
                NaN: missing, not finite or undefined
    array(m)    metric m's values as a plain numpy array [config, sample, index], whichever per_sample has
    configs     DataFrame, one row per config with every key (index: config); a frame's full config is
                `r.summary.merge(r.configs.reset_index(), how="left")`. `config` is the same table
    run_info    dict, run.json's content (version, commit, backend, threads, timings, seeds, metrics)
    nonfinite   DataFrame, nonfinite.csv's columns config, sample, pass, layer, metric (and step, where the
                grid trains): where a NaN or Inf first appeared in a stream (metric ""), and statistics that came
                out NaN or Inf from a finite one
    """

    def __init__(self, summary, layers, theory, per_sample, configs, run_info, nonfinite, saver=None):
        """per_sample: metric -> numpy array [config, sample, index], labelled when first asked for."""
        self.summary, self.layers, self.theory = summary, layers, theory
        self.configs, self.run_info, self.nonfinite = configs, run_info, nonfinite
        self._arrays, self._labelled = per_sample, None
        self._saver = saver

    @property
    def per_sample(self):
        """metric -> labelled per-sample values (an xarray.DataArray, else a DataFrame: docs/python.md)."""
        if self._labelled is None:
            from . import _labelled
            varying = [c for c in self.summary.columns if c in self.configs.columns]
            self._labelled = _labelled.labelled(self._arrays, self.configs, varying)
        return self._labelled

    def array(self, metric):
        """Metric `metric`'s values as a numpy array [config, sample, index] (index l = 0..K or k = 0..K-1;
        NaN where absent), the same whether xarray is installed or not; KeyError naming the metrics."""
        if metric not in self._arrays:
            none = ("none (a normsim check folder has no layers.csv; in a run, every value may have been "
                    "non-finite: see nonfinite)")
            raise KeyError(f"no per-sample values of '{metric}' in this Result; it has "
                           f"{', '.join(self._arrays) or none}")
        return self._arrays[metric]

    @property
    def config(self):
        """Result.configs under its earlier name (code written before the frames left out the fixed keys)."""
        return self.configs

    def save(self, out, force=False):
        """Writes the results folder `out` (the files `normsim run` writes, each atomically; `normsim plot out`
        draws its figures). Refuses a folder that is not empty unless force=True."""
        with held_out(out) as path:
            if not force:
                check_out(path)  # under the lock: two writers cannot both pass it
            self._saver(path)
        return out

    def __repr__(self):
        n = len(self.configs)
        return (f"<normsim.Result: {n} configuration{'s' if n != 1 else ''}, {len(self.summary)} summary rows, "
                f"metrics {sorted(self._arrays)}>")


def _measured(arrays):
    """The metrics with at least one value: the simulator also returns all-NaN arrays for metrics this stack
    does not have (gradw_wgate without a gate), which layers.csv has no rows of, so normsim.read of the
    saved folder would lack them."""
    import numpy as np
    return {m: a for m, a in arrays.items() if not np.isnan(a).all()}


def from_run(run, theory_columns):
    """A Result of a simulation held by _core.Run."""
    from . import _core
    metric_names = [m[0] for m in _core.metrics()]
    configs = run.grid.values()
    return Result(
        summary=_frames.table("summary", run.summary(), configs, metric_names),
        layers=_frames.table("layers", run.layers(), configs, metric_names),
        theory=_frames.table("theory", theory_columns, configs, metric_names),
        per_sample=_measured(run.per_sample()),
        configs=_frames.config_table(configs),
        run_info=json.loads(run.run_json()),
        nonfinite=_frames.nonfinite_table(*run.nonfinite()),
        saver=run.save)


def read(out):
    """The Result of a results folder written by `normsim run`, Result.save or normsim.torch, or of the
    summaries of a `normsim check --out` folder (no per-sample values there). A damaged
    folder (an empty, truncated or binary file, a bad run.json, an index its run.json does not have) raises
    ValueError naming the file (and the line, for an index), never a raw pandas or json error."""
    _frames._pandas("normsim.read")
    path = os.fspath(out)
    if not os.path.isfile(os.path.join(path, "summary.csv")):
        raise FileNotFoundError(f"{path} is not a normsim results folder: it has no summary.csv")
    run_info = _checked(os.path.join(path, "run.json"), _read_json)
    configs = _checked(os.path.join(path, "run.json"), lambda _: _config_values(run_info["configs"]))
    of_check = _check_folder(path)
    layers = _optional(path, "layers", configs, of_check)
    _checked(os.path.join(path, "layers.csv"), lambda p: _check_indices(p, layers, configs))
    summary = _checked(os.path.join(path, "summary.csv"), _table_reader("summary", configs))
    # Absent only where nothing has a mean field (normsim.torch's folders) or nothing per layer (check's);
    # `normsim run` always writes it, so there its absence is a damaged folder.
    theory = _optional(path, "theory", configs, of_check or of_bridge(run_info))
    nonfinite_path = os.path.join(path, "nonfinite.csv")
    nonfinite = _checked(nonfinite_path, _frames.read_nonfinite) if os.path.isfile(nonfinite_path) \
        else _frames.nonfinite_table([])
    from . import _bridge_result
    result = Result(summary=summary, layers=layers, theory=theory,
                    per_sample=_frames.per_sample_from_layers(layers, configs.get("depth", [])),
                    configs=_frames.config_table(configs),
                    run_info=run_info, nonfinite=nonfinite)
    result._saver = lambda out: _bridge_result.save(result, out)
    return result


def _config_values(records):
    """key -> its value in every config of run.json, None where a config has none: the PyTorch bridge's
    run.json leaves out the keys a block has no value for, which its Result holds as absent (so the frames of
    normsim.read and of measure() have the same columns: the keys that vary)."""
    from . import _core
    keys = [c for c in _core.columns("summary") if c in _frames.key_types()]
    keys = dict.fromkeys([*keys, *(key for c in records for key in c["values"])])
    return {key: [c["values"].get(key) for c in records] for key in keys}


def of_bridge(run_info):
    """Whether a Result's run.json is normsim.torch's (backend "torch <version>": torch.py measure), whose
    folders have no theory.csv (read and Result.save both follow this)."""
    return str(run_info.get("backend", "")).startswith("torch ")


def _check_folder(path):
    """Whether `path` is what `normsim check --out` writes: summary.csv and run.json of every simulation behind
    its claims (docs/claims.md, "Outputs") beside verdicts.json, and no layers.csv (no per-sample values)."""
    return os.path.isfile(os.path.join(path, "verdicts.json"))


def _optional(path, name, configs, may_lack):
    """Table `name` of the folder, or (where the folder `may_lack` the file and has none) the same frame
    empty, with its columns, so that code merging frames runs on every Result."""
    file = os.path.join(path, f"{name}.csv")
    if may_lack and not os.path.isfile(file):
        return _frames.table(name, {c: [] for c in _frames.frame_columns(name, configs) if c not in configs},
                             configs, [])
    return _checked(file, _table_reader(name, configs))


def _table_reader(name, configs):
    """Reads the file of table `name` with the columns a Result's frame has (_frames.frame_columns)."""
    return lambda path: _frames.read_table(path, _frames.frame_columns(name, configs))


def _read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _checked(path, reader):
    """reader(path), its failure on a damaged file raised as ValueError naming the file (a missing file stays
    FileNotFoundError; an error that already names the file is kept). pandas' parser errors, json's,
    UnicodeDecodeError, KeyError and the rest alike."""
    try:
        return reader(path)
    except FileNotFoundError:
        raise
    except Exception as e:
        if isinstance(e, ValueError) and str(e).startswith(path):
            raise
        raise ValueError(f"{path}: not a readable normsim results file ({type(e).__name__}: {e})") from None


def _check_indices(path, layers, configs):
    """Every row's config, sample and layer index exist in run.json's configs (a row with sample 999999999
    would size the per-sample arrays by it). Vectorised; the first bad row is named with its line."""
    if layers.empty:
        return
    np = _frames.require("numpy", "normsim.read")
    n_samples = np.asarray(configs.get("samples", []), dtype="int64")
    depths = np.asarray(configs.get("depth", []), dtype="int64")
    c = layers["config"].to_numpy(dtype="int64", na_value=-1)
    s = layers["sample"].to_numpy(dtype="int64", na_value=-1)
    l = layers["l"].to_numpy(dtype="float64", na_value=np.nan)
    k = layers["k"].to_numpy(dtype="float64", na_value=np.nan)
    known = (c >= 0) & (c < len(n_samples))
    cc = np.where(known, c, 0) if len(n_samples) else np.zeros_like(c)
    top_s = n_samples[cc] if len(n_samples) else np.zeros_like(c)
    top_d = depths[cc] if len(depths) else np.zeros_like(c)
    ok = (known & (s >= 0) & (s < top_s) & (np.isnan(l) | ((l >= 0) & (l <= top_d)))
          & (np.isnan(k) | ((k >= 0) & (k < top_d))))
    if ok.all():
        return
    row = int(np.argmin(ok))
    what = (f"config {c[row]} (run.json has {len(n_samples)})" if not known[row] else
            f"sample {s[row]}, l {l[row]:g}, k {k[row]:g} (config {c[row]}: {top_s[row]} samples, depth "
            f"{top_d[row]})")
    raise ValueError(f"{path}:{row + 2}: {what}: not an index of this results folder")
