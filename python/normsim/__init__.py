"""normsim from Python: signal propagation through deep residual stacks at initialization.

    import normsim
    r = normsim.run("experiments/prenorm_depth.toml", depth=16)     # or a dict of config keys
    r.summary                                                      # pandas: config id, swept keys, metric, ...
    r.configs                                                      # every key of every configuration
    r.per_sample["act_sq"]                                         # labelled (xarray.DataArray if installed)
    normsim.theory({"placement": "post", "depth": 8})              # the mean field alone
    normsim.check(claims=["xiong_thm1_preln"])                     # verdicts
    normsim.coord("c.toml", {"width": [128, 256, 512]})            # a coordinate check: fitted exponents
    normsim.list("placements")
    normsim.torch.measure(...)                                     # any PyTorch residual block

Reference: docs/python.md. numpy and pandas (and torch for normsim.torch) are imported when needed; a missing
one raises MissingPackageError naming it.
"""
from . import _build, _extension, _load_order
_load_order.before_extension(_build.CUDA)
try:
    from . import _core
except ImportError as _error:
    _why = _extension.explain(_error)
    if _why is None:
        raise
    raise ImportError(_why) from None
from ._core import BackendUnavailable, ClaimError, ConfigError, Grid
from ._api import check, grid, list, plot, run, theory
from ._coord import coord
from ._deps import MissingPackageError
from ._result import Result, read

__version__ = _core.version()[0]
# Not `list`, nor `torch`: `from normsim import *` would replace the builtin and the caller's `import torch`
# (normsim.list and normsim.torch stay).
__all__ = ["run", "theory", "check", "coord", "read", "plot", "grid", "Result", "Grid", "ConfigError",
           "ClaimError", "BackendUnavailable", "MissingPackageError"]


def __getattr__(name):
    # normsim.torch is imported on first use: `import normsim` must not need PyTorch.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'normsim' has no attribute '{name}'")
