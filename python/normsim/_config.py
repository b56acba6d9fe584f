"""A config given as a dict, a path or a Grid, plus keyword overrides, turned into normsim's Grid: the same
parser as the CLI, so the same keys, checks and error messages ("FILE:LINE: key 'K': why", "--set K=V: why")."""
import json
import math
import os

from . import _core


def toml_value(value):
    """A Python value as a TOML value (lists sweep the key)."""
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0 and not isinstance(value, (list, tuple)):
        value = value.item()  # numpy scalar (an array, ndim >= 1, is a list below)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string for every JSON-escapable text
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
        return "[" + ", ".join(toml_value(v) for v in items) + "]"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as a config value")


def dict_to_toml(config):
    """The dict as a TOML document: scalar and list keys one per line, nested dicts (the [run] table) as
    tables."""
    lines, tables = [], []
    for key, value in config.items():
        if isinstance(value, dict):
            tables.append(f"[{key}]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in value.items()))
        else:
            lines.append(f"{key} = {toml_value(value)}\n")
    return "".join(lines) + "".join(tables)


def overrides_list(overrides):
    """Keyword overrides as the CLI's --set values."""
    return [f"{key}={toml_value(value)}" for key, value in overrides.items()]


def grid_of(config, overrides):
    """A Grid from a dict, a TOML file path or a Grid (then without overrides)."""
    if isinstance(config, _core.Grid):
        if overrides:
            raise TypeError("overrides apply to a dict or a config file, not to a Grid")
        return config
    sets = overrides_list(overrides)
    if isinstance(config, dict):
        return _core.Grid.from_toml(dict_to_toml(config), "<dict>", sets)
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        if not os.path.isfile(path):  # as open() says it (issue 30 item 5), not a ConfigError
            import errno
            raise FileNotFoundError(errno.ENOENT, "no such config file", path)
        return _core.Grid.from_file(path, sets)
    raise TypeError(f"config must be a dict or a path to a TOML file, not {type(config).__name__}")
