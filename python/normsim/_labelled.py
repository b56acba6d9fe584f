"""Result.per_sample: every metric's per-sample values [config, sample, index] with their labels, as an
xarray.DataArray when xarray is installed, else as a pandas DataFrame with a named MultiIndex (docs/python.md,
"Per-sample values"). The index dimension is `l` (0..K, stream metrics) or `k` (0..K-1, sublayer metrics), as
in the frames' columns."""
from . import _core
from ._deps import require


def index_name(metric):
    """'l' for a metric of the stream x_l, 'k' for one of sublayer k (the PyTorch bridge's own gradw_<name>
    metrics are per block: 'k')."""
    return {m[0]: m[1] for m in _core.metrics()}.get(metric, "k")


def _xarray():
    """xarray, or None when it is not installed (or fails to import)."""
    try:
        import xarray
    except ImportError:
        return None
    return xarray


def data_array(xr, metric, values, configs, varying):
    """values [config, sample, index] as a DataArray named `metric`: dims config, sample and l or k, each
    labelled 0..n-1, and the keys that vary as coordinates along config (da.sel(config=2), da.groupby("depth"),
    da.swap_dims(config="depth") when only depth varies)."""
    n_configs, n_samples, n_index = values.shape
    index = index_name(metric)
    coords = {"config": range(n_configs), "sample": range(n_samples), index: range(n_index)}
    coords.update({key: ("config", configs[key].to_numpy()) for key in varying})
    return xr.DataArray(values, dims=("config", "sample", index), coords=coords, name=metric)


def frame(metric, values):
    """values [config, sample, index] as a DataFrame: one row per (config, sample) (a MultiIndex with those
    names), one column per index (columns named l or k); a view of the same numbers, NaN where absent."""
    pd = require("pandas", "normsim's per-sample values")
    n_configs, n_samples, n_index = values.shape
    rows = pd.MultiIndex.from_product([range(n_configs), range(n_samples)], names=["config", "sample"])
    return pd.DataFrame(values.reshape(n_configs * n_samples, n_index), index=rows,
                        columns=pd.RangeIndex(n_index, name=index_name(metric)))


def labelled(arrays, configs, varying):
    """metric -> labelled values, from metric -> numpy array, Result.configs and the keys that vary."""
    xr = _xarray()
    if xr is None:
        return {m: frame(m, a) for m, a in arrays.items()}
    return {m: data_array(xr, m, a, configs, varying) for m, a in arrays.items()}
