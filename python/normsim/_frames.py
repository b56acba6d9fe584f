"""The result tables as pandas DataFrames. The files' columns (normsim._core.columns, defined once in
sim/run/result_rows.hpp) are config, every config key, [sample,] metric, l, k, [step,] [lane,] then mean, se,
n or value (step where a configuration sets `steps`, lane where one is a block of n > 1 lanes); a
Result's frames keep of the keys only those whose value differs between its configurations (varying_keys),
since the others, repeated on every row, took most of a sweep's memory (docs/python.md, "Result frames"); the
full config is one merge away (Result.configs). One function, typed(), gives every table the same dtypes
whether it was built in memory or read from a file: config keys by their schema type (numpy's int64 and
bool, or pandas' nullable Int64 and boolean where a value is absent, as for keys a PyTorch block does not
have), l and k nullable Int64 (one of them empty per row). A grid with a block of n > 1 lanes adds `lane` after
k and step (str: "mean" for the lanes' mean, "0".."n-1" for a lane, "" for a metric not of the lanes: docs/metrics.md,
"Lanes")."""
from . import _core
from ._deps import require

_INT_COLUMNS = ("config", "sample", "n", "l", "k", "step")
# nonfinite.csv's columns (sim/run/result_rows.hpp, NonFiniteRow); metric "" for a stream that held a NaN or Inf.
NONFINITE_COLUMNS = ["config", "sample", "pass", "layer", "metric"]
# The measured values' columns: float64. normsim leaves non-finite values out of its files (nonfinite.csv says
# where); "nan", "inf" and "-inf" are read as the doubles all the same, from another writer or a hand edit.
MEASURED_COLUMNS = ("mean", "se", "value")
# How io::format_number spells the doubles pandas does not read by itself (it reads inf and -inf).
_NAN_SPELLINGS = ["nan", "-nan"]


def key_types():
    return {k["name"]: k["type"] for k in _core.keys()}


def _pandas(why="normsim's result tables"):
    return require("pandas", why)


def typed(df):
    """Every column in its dtype: integer keys and indices Int64, booleans boolean, floats float64, strings
    str ("" when absent)."""
    pd = _pandas()
    types = key_types()
    for col in df.columns:
        kind = types.get(col)
        if kind == "string" or col == "lane":
            df[col] = df[col].fillna("").astype(str)
        elif kind == "boolean":
            df[col] = _dense(df[col].map({True: True, False: False, "true": True, "false": False})
                             .astype("boolean"), bool)
        elif col in ("l", "k"):
            df[col] = pd.to_numeric(df[col]).astype("Int64")
        elif kind == "integer" or col in _INT_COLUMNS:
            df[col] = _dense(pd.to_numeric(df[col]).astype("Int64"), "int64")
        elif kind == "float" or col in MEASURED_COLUMNS:
            df[col] = pd.to_numeric(df[col]).astype("float64")
        elif col == "metric":
            df[col] = df[col].astype(str)
    return df


def _dense(column, dtype):
    """A nullable column as a plain numpy one when no value is absent."""
    return column.astype(dtype) if not column.isna().any() else column


def varying_keys(configs):
    """The config keys (of key -> list of values, one per config) whose value is not the same in every
    configuration, in the files' column order; `metrics` (which rows exist) is no column."""
    return [key for key in _core.columns("theory", list(configs))
            if key in configs and len({repr(v) for v in configs[key]}) > 1]


def frame_columns(name, configs, every_key=False, lanes=False):
    """The columns of a Result's frame `name`: the file's, less the keys that do not vary (all of them with
    every_key, as the files and normsim.theory have them); `lane` when `lanes`."""
    keep = set(configs) if every_key else set(varying_keys(configs))
    return [c for c in _core.columns(name, list(configs), lanes) if c not in configs or c in keep]


def table(name, columns, configs, metric_names, every_key=False):
    """DataFrame `name` (layers, summary, theory) from column arrays indexed by config and metric code, and
    the key values of every config (key -> list): the config id and the keys that vary (every_key: all)."""
    pd = _pandas()
    np = require("numpy", "normsim's result tables")
    rows = columns["config"]
    data = {"config": rows}
    wanted = frame_columns(name, configs, every_key, "lane" in columns)
    for key, values in configs.items():
        if key not in wanted:
            continue  # a key that does not vary, or `metrics` (which rows exist, not a column)
        data[key] = np.asarray(values, dtype=object)[rows] if len(rows) else np.asarray([], dtype=object)
    data["metric"] = np.asarray(metric_names, dtype=object)[columns["metric"]] if len(rows) else []
    for col, values in columns.items():
        if col not in ("config", "metric"):
            data[col] = values
    return typed(pd.DataFrame(data)[wanted])


def config_table(configs):
    """One row per config, every key a column (index: config)."""
    pd = _pandas()
    order = [c for c in _core.columns("theory", list(configs)) if c in configs]  # placement, then the schema's
    df = typed(pd.DataFrame(configs)[order + [c for c in configs if c not in order]])
    df.index.name = "config"
    return df


def with_every_key(frame, configs, name):
    """A Result's frame `name` with every config key again, in its file's column order (what Result.save
    writes): the keys that do not vary joined from `configs` (Result.configs) by config id."""
    # with the keys written only when set, if present, and the lane column if the frame has it
    columns = _core.columns(name, list(configs.columns), "lane" in frame.columns)
    missing = [c for c in columns if c in configs.columns and c not in frame.columns]
    full = frame.join(configs[missing], on="config")
    return full[[c for c in columns if c in full.columns]]


def read_table(path, columns=None):
    """A result CSV file as written by normsim (or the PyTorch bridge), typed like the in-memory tables;
    only `columns` (None: all) are read, so the keys a Result leaves out never take memory; `lane` whenever the
    file has it."""
    pd = _pandas("reading a results folder")
    header = pd.read_csv(path, nrows=0).columns
    floats = {c: "float64" for c in header if c in MEASURED_COLUMNS or key_types().get(c) == "float"}
    # Not pandas' default NA strings: a string key's text stays text ("nan", "NA" and "null" included); in a
    # float column "nan" is the double, and "" absent everywhere.
    missing = {c: ["", *_NAN_SPELLINGS] if c in floats else [""] for c in header}
    df = pd.read_csv(path, keep_default_na=False, na_values=missing, dtype={"metric": str, "lane": str, **floats},
                     float_precision="round_trip",  # exact: normsim writes shortest round-trip numbers
                     usecols=None if columns is None else [c for c in header if c in columns or c == "lane"])
    _refuse_short_rows(path, df)
    strings = {k for k, t in key_types().items() if t == "string"}
    for col in strings & set(df.columns):
        df[col] = df[col].astype(object).where(df[col].notna(), "").astype(str)
    return typed(df)


# Columns normsim fills on every row it writes (non-finite values are left out of its files, and a summary row
# with no finite sample is not written): empty there means a short (truncated) or damaged row, which pandas
# would otherwise pad with NaN.
_ALWAYS_FILLED = ("config", "metric", "value", "n")


def _refuse_short_rows(path, df):
    filled = [c for c in _ALWAYS_FILLED if c in df.columns]
    empty = df[filled].isna()
    if "value" in filled and empty["value"].any():  # NaN also where the file says "nan": only "" is missing
        text = _pandas().read_csv(path, usecols=["value"], dtype=str, keep_default_na=False, na_values=[""])
        empty["value"] = text["value"].isna().to_numpy()
    bad = empty.any(axis=1).to_numpy().nonzero()[0]
    if len(bad):
        raise ValueError(f"{path}:{int(bad[0]) + 2}: a row with empty or missing fields "
                         f"({', '.join(filled)} must be filled): the file is truncated or damaged")


def nonfinite_table(rows, steps=False):
    """nonfinite.csv as a frame; with `steps` (a grid that trains: the file's step column) its step too."""
    columns = NONFINITE_COLUMNS + (["step"] if steps else [])
    integers = {"config": "int64", "sample": "int64", "layer": "int64", **({"step": "int64"} if steps else {})}
    return _pandas().DataFrame(rows, columns=columns).astype(integers)


def read_nonfinite(path):
    pd = _pandas("reading a results folder")
    table = pd.read_csv(path, keep_default_na=False, dtype={"pass": str, "metric": str})
    return nonfinite_table(table, steps="step" in table.columns)


def per_sample_from_layers(layers, depths):
    """metric -> array [config, sample, index] (NaN where absent) from a layers table and the depth of every
    config; the index runs over 0..K for a stream metric (l) and 0..K-1 for a sublayer metric (k), K the
    largest depth. Of a block of lanes, the lanes' mean's (as normsim.run's arrays): one lane's rows are left
    out."""
    np = require("numpy", "normsim's per-sample arrays")
    pd = _pandas()
    out = {}
    if "lane" in layers.columns:
        layers = layers[layers["lane"].isin(["", "mean"])]
    if layers.empty:
        return out
    configs = int(layers["config"].max()) + 1
    samples = int(layers["sample"].max()) + 1
    depth = max((int(d) for d in depths if d is not None), default=0)
    index = layers["l"].fillna(layers["k"]).astype("int64").to_numpy()
    for metric, rows in layers.groupby("metric", sort=False).indices.items():
        stream = bool(layers["l"].iloc[rows[0]] is not pd.NA)
        size = max(int(index[rows].max()) + 1, depth + 1 if stream else depth)
        a = np.full((configs, samples, size), np.nan)
        a[layers["config"].to_numpy("int64")[rows], layers["sample"].to_numpy("int64")[rows], index[rows]] = \
            layers["value"].to_numpy("float64")[rows]
        out[metric] = a
    return out
