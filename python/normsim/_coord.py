"""normsim.coord: a coordinate check from Python, the files and fits of `normsim coord` (docs/python.md)."""
import os
import tempfile

from . import _core
from ._deps import require

_TEXT_COLUMNS = {"swept": str, "setting": str, "parametrization": str, "metric": str, "layers": str,
                 "verdict": str, "source": str}


def _sweep(sweep):
    if not isinstance(sweep, dict) or len(sweep) != 1:
        raise ValueError("sweep is one key and its values, e.g. {\"width\": [128, 256, 512]}")
    (key, values), = sweep.items()
    values = [*values]
    if key not in ("width", "depth"):
        raise ValueError(f"a coordinate check sweeps width or depth, not '{key}'")
    if len(values) < 2 or any(not isinstance(v, int) or v <= 0 for v in values):
        raise ValueError(f"sweep {key}: two or more positive integers, not {values}")
    return key, values


def coord(config, sweep, *, out=None, plots=False, backend="auto", threads=0, progress=None, **overrides):
    """Runs `config` with the swept key set to each value (sweep={"width": [...]} or {"depth": [...]}) as
    normsim.run does, fits every metric's exponent against it at each layer and step and returns the fits
    (OUT/coord/fits.csv's columns: exponent, low, high, predicted, band_low, band_high, verdict, source; see
    `normsim coord --help`). With out=FOLDER the result files, OUT/coord/ and (plots=True) the figures stay
    there; else they are written to a temporary folder and removed."""
    pd = require("pandas", "normsim.coord")
    from ._api import plot, run
    key, values = _sweep(sweep)
    with tempfile.TemporaryDirectory() as scratch:
        path = os.fspath(out) if out is not None else os.path.join(scratch, "coord_run")
        run(config, backend=backend, threads=threads, progress=progress, out=path, **{**overrides, key: values})
        _core.coord(path, key)
        if plots:
            plot(path)
        fits = pd.read_csv(os.path.join(path, "coord", "fits.csv"), dtype=_TEXT_COLUMNS, keep_default_na=False,
                           na_values={c: [""] for c in ("exponent", "low", "high", "se", "predicted", "band_low",
                                                        "band_high", "samples_needed")})
    return fits
