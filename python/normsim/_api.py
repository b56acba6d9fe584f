"""The functions of the normsim package (see docs/python.md)."""
import builtins
import contextlib
import errno
import json
import os
import sys
import threading

from . import _config, _core, _frames, _progress
from ._deps import require
from ._result import check_out, from_run, held_out


def grid(config, **overrides):
    """The configurations a config (dict or TOML path) and overrides describe, checked as `normsim run`
    checks them (ConfigError with the CLI's message otherwise)."""
    return _config.grid_of(config, overrides)


def _theory_columns(g):
    columns, _skipped = _core.theory(g)
    return columns


def run(config, *, backend="auto", threads=0, progress=None, out=None, **overrides):
    """Runs every configuration of `config` (a dict of config keys or a TOML file; any key may be a list,
    swept over the Cartesian product) with `overrides` applied as `--set key=value`, and returns a Result.

    The same config and seed give the same numbers as `normsim run`. Computation releases the GIL; a progress
    bar goes to stderr (progress=None: when stderr is a terminal or in a notebook); Ctrl-C raises
    KeyboardInterrupt after the sample in flight and writes nothing. With out=FOLDER the result files are
    written there as well (Result.save)."""
    require("pandas", "normsim.run")
    g = _config.grid_of(config, overrides)
    with held_out(out) if out is not None else contextlib.nullcontext() as path:
        if path is not None:
            check_out(path)  # before the run, under the lock (a second writer is refused at once)
        bar = _progress.Bar("normsim run", _progress.wanted(progress))
        try:
            handle = _core.run(g, backend, threads, bar)
        finally:
            bar.close()
        result = from_run(handle, _theory_columns(g))
        if path is not None:
            handle.save(path)
    return result


def theory(config, **overrides):
    """The mean-field prediction of every configuration (theory.csv's columns, every key) in milliseconds,
    without a simulation. Metrics without a controlled prediction are absent."""
    require("pandas", "normsim.theory")
    g = _config.grid_of(config, overrides)
    metric_names = [m[0] for m in _core.metrics()]
    # Every key, unlike a Result's frames: there is no Result.configs here to join them from.
    return _frames.table("theory", _theory_columns(g), g.values(), metric_names, every_key=True)


def check(claims=None, *, full=False, claims_dir=None, backend="auto", threads=0, out=None, plots=False,
          progress=None, force=False):
    """Runs claims (ids, one id, or None for every claim in experiments/claims/) and returns the verdict
    table: one row per claim with verdicts.json's fields (docs/claims.md). With out=FOLDER it also writes what
    `normsim check --out FOLDER` writes (plots=True: the claim figures too); a FOLDER that already holds
    results raises FileExistsError, as `normsim check --out` refuses it, unless force=True (which replaces an
    earlier check's files there)."""
    pd = require("pandas", "normsim.check")
    ids = [claims] if isinstance(claims, str) else builtins.list(claims or [])
    if claims_dir is not None:
        _existing_folder(claims_dir, "no such claims folder")
    bar = _progress.Bar("normsim check", _progress.wanted(progress))
    try:
        with _this_python():
            verdicts = _core.check(ids, full, os.fspath(claims_dir or ""), backend, threads,
                                   os.fspath(out or ""), plots, bar, force)
    finally:
        bar.close()
    table = pd.DataFrame([json.loads(v) for v in verdicts])
    first = [c for c in _VERDICT_FIRST if c in table.columns]
    return table[first + [c for c in table.columns if c not in first]]


def _existing_folder(path, what):
    """FileNotFoundError naming `path` where it does not exist, as open() says it (the C++ behind the call
    would report it as a malformed claim or a failed plot)."""
    if not os.path.exists(os.fspath(path)):
        raise FileNotFoundError(errno.ENOENT, what, os.fspath(path))


# Held while a check runs with NORMSIM_PYTHON set by _this_python: the variable is the process's, and
# _core.check runs without the GIL, so a second thread's check would otherwise see (and then lose) the first's.
_ENVIRONMENT = threading.Lock()


@contextlib.contextmanager
def _this_python():
    """NORMSIM_PYTHON set to this interpreter while the block runs, unless the caller set it: a [torch] claim's
    block runs in NORMSIM_PYTHON, else in the Python the module was built for (check/torch_block.cpp), which
    from a venv or another Python would measure the block with that one's torch, not the caller's. Every
    check from Python runs under one lock: the variable is the process's, read by the C++ while it runs."""
    with _ENVIRONMENT:
        given = os.environ.get("NORMSIM_PYTHON")
        if given or not sys.executable:
            yield
            return
        os.environ["NORMSIM_PYTHON"] = sys.executable
        try:
            yield
        finally:
            if given is None:
                os.environ.pop("NORMSIM_PYTHON", None)
            else:
                os.environ["NORMSIM_PYTHON"] = given


# The verdict table's leading columns (report.md's order); the rest follow alphabetically.
_VERDICT_FIRST = ("id", "statement", "verdict", "measured", "ci_low", "ci_high", "predicted", "meanfield")


_LISTS = ("keys", "placements", "sublayers", "activations", "norms", "inits", "metrics", "claims")


def list(what=None):
    """What can be configured, as DataFrames: keys, placements, sublayers, activations, norms, inits or
    metrics, and the claims `normsim check` runs (id, kind, statement) (None: a dict of all of them), the
    content of `normsim list`."""
    pd = require("pandas", "normsim.list")
    if what is None:
        return {w: list(w) for w in _LISTS}
    if what == "keys":
        return pd.DataFrame(_core.keys())
    if what == "claims":
        return pd.DataFrame(_core.claims(""), columns=["id", "kind", "statement"])
    if what == "metrics":
        return pd.DataFrame([m[:4] for m in _core.metrics()], columns=["metric", "index", "definition", "default"])
    if what in _LISTS:
        return pd.DataFrame(_core.choices(what), columns=["name", "meaning"])
    raise ValueError(f"no list '{what}' ({', '.join(_LISTS)})")


# normsim.plot's keywords and the `normsim plot` options they stand for (app/plot_command.cpp): a string or
# a list of strings for the comma-separated options, a bool for the flags. The deprecated form with the
# command's strings is read back into keywords; --quiet and --verbose are dropped there: the drawing's stderr
# is captured and only shown in the error of a failed plot.
_PLOT_LISTS = {"metric": "--metric", "format": "--format"}
_PLOT_CHOICES = {"size": "--size", "heatmap_layer": "--heatmap-layer"}
_PLOT_FLAGS = {"latex": "--latex", "depth_at_first_layer": "--depth-at-first-layer", "claims_only": "--claims-only"}
_PLOT_KEYWORDS = (*_PLOT_LISTS, *_PLOT_CHOICES, *_PLOT_FLAGS, "report", "step")


def _plot_keywords(keywords):
    """The arguments of _core.plot for normsim.plot's keywords (lists of strings, defaults filled in);
    TypeError naming the valid ones otherwise."""
    arguments = {"metric": [], "format": [], "size": "one-column", "heatmap_layer": "normalized", "latex": False,
                 "depth_at_first_layer": False, "claims_only": False, "report": True, "step": 0}
    for name, value in keywords.items():
        if name not in _PLOT_KEYWORDS:
            raise TypeError(f"normsim.plot() got an unexpected keyword argument '{name}'; it takes "
                            f"{', '.join(_PLOT_KEYWORDS)}")
        if name in _PLOT_LISTS:
            items = [value] if isinstance(value, str) else builtins.list(value)
            if not items or not all(isinstance(v, str) for v in items):
                raise TypeError(f"normsim.plot: {name} takes a string or a non-empty list of strings, not "
                                f"{value!r}")
            arguments[name] = [item for v in items for item in v.split(",")]
        elif name == "step":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TypeError(f"normsim.plot: step takes a training step, an int >= 0, not {value!r}")
            arguments[name] = value
        elif name in _PLOT_CHOICES:
            if not isinstance(value, str):
                raise TypeError(f"normsim.plot: {name} takes a string, not {value!r}")
            arguments[name] = value
        else:
            if not isinstance(value, bool):
                raise TypeError(f"normsim.plot: {name} takes True or False, not {value!r}")
            arguments[name] = value
    return arguments


def _keywords_of_strings(args):
    """normsim.plot's keywords for the deprecated `normsim plot` option strings (`--option value` or
    `--option=value`); RuntimeError for an option normsim.plot does not take."""
    named = {option: name for name, option in {**_PLOT_LISTS, **_PLOT_CHOICES, **_PLOT_FLAGS}.items()}
    keywords, rest = {}, builtins.list(args)
    while rest:
        arg = rest.pop(0)
        option, eq, value = arg.partition("=")
        if option in ("-q", "--quiet", "-v", "--verbose") and not eq:
            continue
        if option == "--no-report" and not eq:
            keywords["report"] = False
        elif option in _PLOT_FLAGS.values() and not eq:
            keywords[named[option]] = True
        elif option in named and option not in _PLOT_FLAGS.values():
            if not eq:
                if not rest:
                    raise RuntimeError(f"normsim plot: {option} needs a value")
                value = rest.pop(0)
            if named[option] in _PLOT_LISTS:
                keywords.setdefault(named[option], []).append(value)
            else:
                keywords[named[option]] = value
        else:
            raise RuntimeError(f"normsim plot: '{arg}' is not an option normsim.plot takes ("
                               f"{', '.join([*named, '--no-report'])})")
    return keywords


def plot(out, *args, **options):
    """Draws the figures and report of a results folder as `normsim plot` does, e.g.
    normsim.plot(out, metric=["act_sq", "grad_sq"], format="png", size="two-column", report=False).
    Keywords: metric, format (a string or a list), size ("one-column", "two-column"), heatmap_layer
    ("normalized", "raw"), latex, depth_at_first_layer, claims_only, report (bools), step (the training step
    the figures draw, as `normsim plot --step`; default 0, init). Returns out; raises FileNotFoundError
    where out does not exist, RuntimeError with the reason (and what the drawing printed) when it fails.
    Options given as CLI strings (normsim.plot(out, "--format", "png")) still work, with a
    DeprecationWarning."""
    if args:
        import warnings
        warnings.warn("normsim.plot(out, \"--option\", ...) with the command's strings is deprecated: pass "
                      "keywords, e.g. normsim.plot(out, format=\"png\", metric=[\"act_sq\"], report=False)",
                      DeprecationWarning, stacklevel=2)
        options = {**_keywords_of_strings(map(str, args)), **options}
    keywords = _plot_keywords(options)
    _existing_folder(out, "no such results folder")
    _core.plot(os.fspath(out), **keywords)
    return out
