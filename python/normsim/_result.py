"""Result: what normsim.run, normsim.read and normsim.torch.measure return."""
import json
import os

from . import _frames


def check_out(out):
    """Raises FileExistsError when the results folder `out` exists and is not empty."""
    if os.path.isdir(out) and os.listdir(out):
        raise FileExistsError(f"{out} is not empty; pass force=True to Result.save to replace its result files")


class Result:
    """A run's results.

    summary     DataFrame, summary.csv's columns: config, every config key, metric, l, k, mean, se, n
    layers      DataFrame, layers.csv's columns: config, every config key, sample, metric, l, k, value
    theory      DataFrame, theory.csv's columns (the mean field; empty where the theory has no prediction)
    per_sample  dict metric -> numpy array [config, sample, index] (NaN: missing, not finite or undefined)
    config      DataFrame, one row per config with every key (index: config)
    run_info    dict, run.json's content (version, commit, backend, threads, timings, seeds, metrics)
    nonfinite   DataFrame, nonfinite.csv's columns config, sample, pass, layer, metric: where a NaN or Inf first
                appeared in a stream (metric ""), and statistics that came out NaN or Inf from a finite one
    """

    def __init__(self, summary, layers, theory, per_sample, config, run_info, nonfinite, saver=None):
        self.summary, self.layers, self.theory = summary, layers, theory
        self.per_sample, self.config, self.run_info, self.nonfinite = per_sample, config, run_info, nonfinite
        self._saver = saver

    def save(self, out, force=False):
        """Writes the results folder `out` (the files `normsim run` writes, each atomically; `normsim plot out`
        draws its figures). Refuses a folder that is not empty unless force=True."""
        if not force:
            check_out(out)
        self._saver(os.fspath(out))
        return out

    def __repr__(self):
        n = len(self.config)
        return (f"<normsim.Result: {n} configuration{'s' if n != 1 else ''}, {len(self.summary)} summary rows, "
                f"metrics {sorted(self.per_sample)}>")


def from_run(run, theory_columns):
    """A Result of a simulation held by _core.Run."""
    from . import _core
    metric_names = [m[0] for m in _core.metrics()]
    configs = run.grid.values()
    return Result(
        summary=_frames.table("summary", run.summary(), configs, metric_names),
        layers=_frames.table("layers", run.layers(), configs, metric_names),
        theory=_frames.table("theory", theory_columns, configs, metric_names),
        per_sample=run.per_sample(),
        config=_frames.config_table(configs),
        run_info=json.loads(run.run_json()),
        nonfinite=_frames.nonfinite_table(run.nonfinite()),
        saver=run.save)


def read(out):
    """The Result of a results folder written by `normsim run`, Result.save or normsim.torch."""
    _frames._pandas("normsim.read")
    path = os.fspath(out)
    if not os.path.isfile(os.path.join(path, "summary.csv")):
        raise FileNotFoundError(f"{path} is not a normsim results folder: it has no summary.csv")
    layers = _frames.read_table(os.path.join(path, "layers.csv"))
    theory_path = os.path.join(path, "theory.csv")
    theory = _frames.read_table(theory_path) if os.path.isfile(theory_path) else None
    with open(os.path.join(path, "run.json")) as f:
        run_info = json.load(f)
    configs = {}
    for c in run_info.get("configs", []):
        for key, value in c["values"].items():
            configs.setdefault(key, []).append(value)
    nonfinite_path = os.path.join(path, "nonfinite.csv")
    nonfinite = _frames.read_nonfinite(nonfinite_path) if os.path.isfile(nonfinite_path) else None
    return Result(summary=_frames.read_table(os.path.join(path, "summary.csv")), layers=layers, theory=theory,
                  per_sample=_frames.per_sample_from_layers(layers), config=_frames.config_table(configs),
                  run_info=run_info, nonfinite=nonfinite)
