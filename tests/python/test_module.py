"""import normsim: the same numbers and files as the CLI, the CLI's error messages, theory/check/list,
Ctrl-C without files, and a clear error when pandas is missing."""
import contextlib
import importlib.util
import io
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time
import unittest
from unittest import mock

from common import PROGRAM, SOURCE_DIR, Scratch, require_or_skip

require_or_skip("numpy", "pandas")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import normsim  # noqa: E402

CONFIG = textwrap.dedent("""\
    placement = ["pre", "post"]
    sublayer = "transformer"
    depth = 4
    width = 32
    tokens = 4
    heads = 2
    samples = 3
    seed = 7
    """)


def cli(*args, cwd=None):
    return subprocess.run([PROGRAM, *args], capture_output=True, text=True, cwd=cwd)


# Pre-LN beside static hyper-connections at the official init, n = 2 (experiments/placements/hc.toml): a grid
# whose tables have the `lane` column.
LANES_CONFIG = textwrap.dedent("""\
    placement = "custom"
    block = ["x + F(N(x))", "[[1,0],[0,1]] @ x + [1,1] * F(N(k - 2*floor(k/2) < 1 ? x[0] : x[1]))"]
    sublayer = "mlp"
    depth = 4
    width = 16
    tokens = 4
    samples = 3
    seed = 7
    """)


class SameAsCli(unittest.TestCase):
    def same_as_cli(self, d, text, backend="auto"):
        """normsim.run and normsim.read of the CLI's folder: equal frames, arrays and saved files."""
        config = os.path.join(d, "grid.toml")
        with open(config, "w") as f:
            f.write(text)
        done = cli("run", config, "--out", os.path.join(d, "cli"), "--quiet", "--no-plots", "--backend", backend)
        self.assertEqual(done.returncode, 0, done.stderr)
        r = normsim.run(config, progress=False, backend=backend)
        files = normsim.read(os.path.join(d, "cli"))
        for table in ("summary", "layers", "theory", "configs"):
            pd.testing.assert_frame_equal(getattr(r, table), getattr(files, table), check_exact=True)
        pd.testing.assert_frame_equal(r.nonfinite, files.nonfinite, check_exact=True)
        self.assertEqual(set(r.per_sample), set(files.per_sample))
        for metric in files.per_sample:
            np.testing.assert_array_equal(r.array(metric), files.array(metric))
        return r, files

    def test_lane_frames_and_files_equal_the_cli(self):
        """docs/metrics.md "Lanes": lane is "mean", "0", "1" on HC's per-lane metrics, "" elsewhere; the
        per-sample arrays are the lanes' mean's; the files save back byte for byte."""
        with Scratch() as d:
            r, _ = self.same_as_cli(d, LANES_CONFIG)
            self.assertEqual(list(r.summary.columns[-5:]), ["k", "lane", "mean", "se", "n"])
            lanes = r.layers.groupby("config")["lane"].unique()
            self.assertEqual(sorted(lanes[0]), [""])
            self.assertEqual(sorted(lanes[1]), ["", "0", "1", "mean"])
            act = r.summary[(r.summary.metric == "act_sq") & (r.summary.config == 1)]
            self.assertEqual(sorted(act["lane"].unique()), ["0", "1", "mean"])
            mean = r.layers[(r.layers.metric == "act_sq") & (r.layers.config == 1) & (r.layers.lane == "mean")]
            at = mean["sample"].to_numpy("int64"), mean["l"].to_numpy("int64")
            np.testing.assert_array_equal(r.array("act_sq")[1][at], mean["value"].to_numpy())
            r.save(os.path.join(d, "py"))
            for name in ("layers.csv", "summary.csv"):
                with open(os.path.join(d, "cli", name)) as a, open(os.path.join(d, "py", name)) as b:
                    self.assertEqual(a.read(), b.read(), name)

    @unittest.skipUnless(normsim._build.REFERENCE, "built without the reference device (NORMSIM_CUDA_MOCK=OFF)")
    def test_reference_device_equals_the_cli(self):
        """backend="reference" (docs/gpu.md, "The reference device"): the CLI's --backend reference numbers,
        bit for bit, and its run.json's backend."""
        with Scratch() as d:
            r, files = self.same_as_cli(d, CONFIG, backend="reference")
            self.assertEqual(r.run_info["backend"], "reference")
            self.assertEqual(files.run_info["backend"], "reference")

    def test_frames_and_files_equal_the_cli(self):
        with Scratch() as d:
            r, files = self.same_as_cli(d, CONFIG)
            self.assertNotIn("lane", r.summary.columns)
            self.assertEqual(r.array("act_sq").shape, (2, 3, 5))  # configs, samples, l = 0..K
            self.assertEqual(r.array("cos_next").shape, (2, 3, 4))  # k = 0..K-1
            r.save(os.path.join(d, "py"))
            files.save(os.path.join(d, "read"))  # the frames lack the fixed keys; the files have them all
            for name in ("layers.csv", "summary.csv", "theory.csv", "nonfinite.csv"):
                for copy in ("py", "read"):
                    with open(os.path.join(d, "cli", name)) as a, open(os.path.join(d, copy, name)) as b:
                        self.assertEqual(a.read(), b.read(), f"{copy}/{name}")
            again = normsim.read(os.path.join(d, "py"))  # Result.save's folder reads back as the run
            for table in ("summary", "layers", "theory", "configs"):
                pd.testing.assert_frame_equal(getattr(r, table), getattr(again, table), check_exact=True)

    def test_training_steps_frames_have_the_step_column_of_the_files(self):
        # steps > 0 (sim/cpu/train_loop.hpp): the step column follows k in the frames as in the files, and a grid
        # without steps has none (docs/conventions.md, "Result files").
        with Scratch() as d:
            config = os.path.join(d, "grid.toml")
            with open(config, "w") as f:
                f.write('depth = 2\nwidth = 8\ntokens = 3\nsamples = 2\nupdate = "adam"\nsteps = [0, 2]\n')
            done = cli("run", config, "--out", os.path.join(d, "cli"), "--quiet", "--no-plots")
            self.assertEqual(done.returncode, 0, done.stderr)
            r = normsim.run(config, progress=False)
            files = normsim.read(os.path.join(d, "cli"))
            for table in ("summary", "layers", "theory"):
                columns = list(getattr(r, table).columns)
                self.assertEqual(columns.index("step"), columns.index("k") + 1, table)
                pd.testing.assert_frame_equal(getattr(r, table), getattr(files, table), check_exact=True)
            self.assertEqual(sorted(r.layers[r.layers.config == 1].step.unique()), [0, 1, 2])
            self.assertEqual(sorted(r.layers[r.layers.config == 0].step.unique()), [0])
            self.assertEqual(list(r.nonfinite.columns)[-1], "step")  # as nonfinite.csv's header
            pd.testing.assert_frame_equal(r.nonfinite, files.nonfinite, check_exact=True)
            r.save(os.path.join(d, "py"))
            files.save(os.path.join(d, "read_and_saved"))  # Python's writer: the step column kept too
            for name in ("layers.csv", "summary.csv", "theory.csv", "nonfinite.csv"):
                for saved in ("py", "read_and_saved"):
                    with open(os.path.join(d, "cli", name)) as a, open(os.path.join(d, saved, name)) as b:
                        self.assertEqual(a.read(), b.read(), f"{saved}/{name}")
            self.assertNotIn("step", normsim.run({"depth": 2, "width": 8, "tokens": 3, "samples": 2},
                                                 progress=False).layers.columns)

    def test_metrics_key_computes_only_those(self):
        config = {"depth": [2, 3], "width": 16, "tokens": 4, "samples": 2}
        r = normsim.run(config, metrics=["act_sq", "grad_sq"], progress=False)  # a list, not a sweep
        self.assertEqual(len(r.configs), 2)
        self.assertEqual(set(r.summary.metric), {"act_sq", "grad_sq"})
        self.assertEqual(set(r.per_sample), {"act_sq", "grad_sq"})
        self.assertEqual(list(r.configs.metrics), [["act_sq", "grad_sq"]] * 2)
        full = normsim.run(config, progress=False)
        same = full.summary[full.summary.metric.isin(["act_sq", "grad_sq"])].reset_index(drop=True)
        pd.testing.assert_frame_equal(r.summary, same, check_exact=True)
        with self.assertRaisesRegex(normsim.ConfigError, "key 'metrics': unknown value 'act_sqq'"):
            normsim.run(config, metrics=["act_sqq"], progress=False)

    def test_nonfinite_rows_equal_the_file(self):
        # No norm and weights with gain 30: float32 overflows within a few sublayers (as test_end_to_end).
        config = {"placement": "none", "final_norm": "false", "depth": 24, "width": 16, "tokens": 4,
                  "samples": 2, "init_gain": 30.0}
        with Scratch() as d:
            r = normsim.run(config, progress=False, out=os.path.join(d, "py"))
            self.assertIn("forward", list(r.nonfinite["pass"]))
            pd.testing.assert_frame_equal(r.nonfinite, normsim.read(os.path.join(d, "py")).nonfinite)

    def test_meanfield_overflow_is_named_not_written(self):
        # Gain 1e100: the mean field overflows in double from layer 1. Its entries are named in nonfinite
        # (pass "meanfield", sample -1) and absent from theory, never 0 (issue 25 1); in memory, in
        # Result.save's files and in the CLI's alike.
        config = {"placement": "none", "depth": 4, "width": 16, "samples": 2, "init_gain": 1e100,
                  "input_corr": 0.5}
        with Scratch() as d:
            r = normsim.run(config, progress=False, out=os.path.join(d, "py"))
            mf = r.nonfinite[r.nonfinite["pass"] == "meanfield"]
            self.assertEqual(set(mf["sample"]), {-1})
            self.assertIn(("act_sq", 1), set(zip(mf["metric"], mf["layer"])))
            self.assertEqual(set(r.theory[r.theory.metric == "act_sq"]["l"]), {0})
            self.assertFalse(((r.theory.metric == "token_cos") & (r.theory["value"] == 0)).any())
            pd.testing.assert_frame_equal(r.nonfinite, normsim.read(os.path.join(d, "py")).nonfinite)

    def test_frames_carry_a_config_id_and_the_keys_that_vary(self):
        # Issue 30 item 5: the keys that are the same in every configuration are in r.configs, not on every row.
        r = normsim.run({"depth": [2, 3], "width": 16, "tokens": 4, "samples": 2}, progress=False)
        self.assertEqual(list(r.summary.columns), ["config", "depth", "metric", "l", "k", "mean", "se", "n"])
        self.assertEqual(list(r.layers.columns), ["config", "depth", "sample", "metric", "l", "k", "value"])
        self.assertEqual(list(r.theory.columns), ["config", "depth", "metric", "l", "k", "value"])
        keys = normsim.list("keys")
        # Every key but those written only where a configuration sets them (the parametrization's).
        self.assertEqual(set(keys[~keys.when_set].name), set(r.configs.columns))
        p = normsim.run({"depth": 2, "width": 16, "tokens": 4, "samples": 1, "parametrization": "completep"},
                        progress=False)
        self.assertIn("parametrization", p.configs.columns)
        self.assertNotIn("param_rules", p.configs.columns)
        self.assertEqual(r.configs.index.name, "config")
        full = r.summary.merge(r.configs.reset_index(), how="left")  # docs/python.md's one line
        self.assertTrue(set(normsim._core.columns("summary")) <= set(full.columns))  # every key again
        self.assertEqual(len(full), len(r.summary))
        self.assertEqual(set(full.width), {16})
        self.assertEqual(list(full.groupby("config").depth.first()), [2, 3])
        pd.testing.assert_frame_equal(full[r.summary.columns], r.summary)
        single = normsim.run({"depth": 2, "width": 16, "tokens": 4, "samples": 2}, progress=False)
        self.assertEqual(list(single.summary.columns), ["config", "metric", "l", "k", "mean", "se", "n"])
        # normsim.theory returns a bare DataFrame, with no configs table to join: every key stays.
        self.assertEqual(list(normsim.theory({"depth": 2}).columns), normsim._core.columns("theory"))
        stream = r.summary[(r.summary.metric == "act_sq") & (r.summary.config == 0)]
        sublayer = r.summary[(r.summary.metric == "cos_next") & (r.summary.config == 0)]
        self.assertEqual(list(stream.l), [0, 1, 2])
        self.assertTrue(stream.k.isna().all())
        self.assertEqual(list(sublayer.k), [0, 1])
        self.assertTrue(sublayer.l.isna().all())

    def test_overrides_and_dicts(self):
        a = normsim.run({"depth": [2, 3], "width": 16, "tokens": 4}, samples=2, progress=False)
        self.assertEqual(list(a.configs.depth), [2, 3])
        self.assertEqual(list(a.configs.samples), [2, 2])
        self.assertEqual(a.run_info["swept_keys"], ["depth"])
        # A numpy array sweeps a key as a list does (issue 25 13: it failed in toml_value), a numpy scalar is
        # one value.
        b = normsim.run({"depth": np.array([2, 3]), "width": np.int64(16), "tokens": 4}, samples=2,
                        progress=False)
        self.assertEqual(list(b.configs.depth), [2, 3])
        pd.testing.assert_frame_equal(a.summary, b.summary)


class Errors(unittest.TestCase):
    def test_config_errors_carry_the_cli_message(self):
        with Scratch() as d:
            config = os.path.join(d, "bad.toml")
            with open(config, "w") as f:
                f.write("sublayer = \"attention\"\nwidth = 32\nheads = 5\n")
            done = cli("run", config, "--out", os.path.join(d, "out"), "--quiet")
            self.assertEqual(done.returncode, 2)
            with self.assertRaises(normsim.ConfigError) as e:
                normsim.run(config)
            self.assertEqual(str(e.exception), done.stderr.strip())
            self.assertIn("key 'heads'", str(e.exception))
        with self.assertRaises(normsim.ConfigError) as e:
            normsim.run({"depth": 0})
        self.assertIn("key 'depth': 0 is out of range", str(e.exception))
        with self.assertRaises(ValueError) as e:  # ConfigError is a ValueError
            normsim.theory({"width": 16}, placement="sideways")
        self.assertIn("--set placement=\"sideways\"", str(e.exception))
        # Issue 25 7, 13: a thread count the CLI refuses, and a backend that does not exist, are ValueErrors
        # before anything runs (threads=-1 was all cores, 10**5 a segfault in libgomp).
        for kwargs in ({"threads": -1}, {"threads": 10**5}, {"backend": "gpu"}):
            with self.assertRaises(ValueError):
                normsim.run({"depth": 2, "width": 8, "samples": 1}, progress=False, **kwargs)

    def test_python_habits(self):
        # Issue 30 item 5: a missing file is FileNotFoundError, as open() says it; `import *` keeps list(),
        # and the caller's torch, np and pd (normsim.torch stays an attribute).
        with self.assertRaises(FileNotFoundError):
            normsim.run("no/such/config.toml")
        names = {"torch": "the caller's torch"}
        exec("from normsim import *", names)
        self.assertEqual(names["torch"], "the caller's torch")
        self.assertIn("run", names)
        import builtins
        shadowed = set(normsim.__all__) & (set(dir(builtins)) | {"torch", "np", "pd", "numpy", "pandas"})
        self.assertEqual(shadowed, set())
        self.assertTrue(importlib.util.find_spec("torch") is None or hasattr(normsim, "torch"))

    def test_missing_folders_are_file_not_found(self):
        """A folder that does not exist is FileNotFoundError naming it, checked before the C++ (which made it a
        RuntimeError from the plots library, and a ClaimError with a made-up line ':1:')."""
        with Scratch() as d:
            missing = os.path.join(d, "nonexistent_dir")
            with self.assertRaisesRegex(FileNotFoundError, "no such results folder: '.*nonexistent_dir'"):
                normsim.plot(missing)
            with self.assertRaisesRegex(FileNotFoundError, "no such claims folder: '.*nonexistent_dir'") as e:
                normsim.check(claims_dir=missing, progress=False)
            self.assertNotIn(":1:", str(e.exception))

    def test_missing_pandas_is_named_not_a_crash(self):
        code = ("import sys; sys.modules['pandas'] = None\n"
                "import normsim\n"
                "try:\n    normsim.run({'depth': 2})\n"
                "except normsim.MissingPackageError as e:\n    print(e)\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("normsim.run needs the Python package 'pandas'", done.stdout)
        self.assertIn("python3-pandas", done.stdout)


class PerSample(unittest.TestCase):
    """Issue 30 item 5: r.per_sample is labelled, an xarray.DataArray when xarray is installed, else a
    DataFrame with a named MultiIndex; r.array gives the plain numpy array either way."""

    @classmethod
    def setUpClass(cls):
        cls.config = {"placement": ["pre", "post"], "depth": [2, 3], "width": 16, "tokens": 4, "samples": 3}

    def value(self, r, metric, config, sample, index):
        """The layers frame's value of one metric at (config, sample, l or k)."""
        rows = r.layers[(r.layers.metric == metric) & (r.layers.config == config) & (r.layers["sample"] == sample)]
        return rows[(rows.l == index) | (rows.k == index)]["value"].item()

    @unittest.skipUnless(importlib.util.find_spec("xarray"), "xarray is not installed (python3-xarray)")
    def test_a_data_array_with_xarray(self):
        r = normsim.run(self.config, progress=False)
        act, cos = r.per_sample["act_sq"], r.per_sample["cos_next"]
        self.assertEqual(act.dims, ("config", "sample", "l"))
        self.assertEqual(cos.dims, ("config", "sample", "k"))
        self.assertEqual(act.name, "act_sq")
        self.assertEqual(list(act.placement.values), list(r.configs.placement))  # the keys that vary
        self.assertEqual(list(act.depth.values), [2, 3, 2, 3])
        self.assertNotIn("width", act.coords)  # the same everywhere: r.configs has it
        np.testing.assert_array_equal(act.values, r.array("act_sq"))
        self.assertEqual(float(act.sel(config=3, sample=1, l=3)), self.value(r, "act_sq", 3, 1, 3))
        self.assertTrue(np.isnan(act.sel(config=0, l=3)).all())  # depth 2: no x_3

    def test_a_data_frame_without_xarray(self):
        r = normsim.run(self.config, progress=False)
        with mock.patch.dict(sys.modules, {"xarray": None}):  # import xarray now fails
            act, cos = r.per_sample["act_sq"], r.per_sample["cos_next"]
        self.assertIsInstance(act, pd.DataFrame)
        self.assertEqual(list(act.index.names), ["config", "sample"])
        self.assertEqual(act.columns.name, "l")
        self.assertEqual(cos.columns.name, "k")
        self.assertEqual(act.shape, (4 * 3, 4))
        self.assertEqual(act.loc[(3, 1), 3], self.value(r, "act_sq", 3, 1, 3))
        self.assertEqual(cos.loc[(2, 0), 1], self.value(r, "cos_next", 2, 0, 1))
        np.testing.assert_array_equal(act.to_numpy().reshape(4, 3, 4), r.array("act_sq"))
        self.assertTrue(act.loc[0, 3].isna().all())  # config 0 has depth 2: no x_3
        full = act.join(r.configs[["depth"]], on="config")  # the config one join away, as for the frames
        self.assertEqual(list(full.depth), [2, 2, 2, 3, 3, 3] * 2)

    def test_array_names_the_metrics_it_has(self):
        r = normsim.run({"depth": 2, "width": 8, "samples": 1}, metrics=["act_sq"], progress=False)
        with self.assertRaisesRegex(KeyError, "no per-sample values of 'grad_sq' in this Result; it has act_sq"):
            r.array("grad_sq")


class RoundTrip(unittest.TestCase):
    """Issue 30: what normsim writes, normsim.read and pandas read back as the same doubles; any Result saves."""

    def test_huge_values_read_back_exactly_and_a_read_result_saves(self):
        # placement none, depth 48: act_sq grows ~2^l, past 1e14 and into the 1e18-1e22 range the issue found
        r = normsim.run({"placement": "none", "depth": 48, "width": 16, "tokens": 2, "samples": 2, "seed": 3,
                         "init_gain": 2.0, "precision": "float64", "metrics": "act_sq"}, progress=False)
        values = r.array("act_sq")
        self.assertGreater(np.nanmax(values), 1e18)
        with Scratch() as d:
            r.save(os.path.join(d, "a"))
            back = normsim.read(os.path.join(d, "a"))
            np.testing.assert_array_equal(back.array("act_sq"), values)
            self.assertEqual(back.layers["value"].dtype, np.float64)
            raw = pd.read_csv(os.path.join(d, "a", "layers.csv"))  # a plain pandas read, no dtypes given
            self.assertEqual(raw["value"].dtype, np.float64)
            back.save(os.path.join(d, "b"))  # a Result normsim.read returned saves too
            again = normsim.read(os.path.join(d, "b"))
            np.testing.assert_array_equal(again.array("act_sq"), values)
            pd.testing.assert_frame_equal(again.summary, back.summary)
            self.assert_same_files(os.path.join(d, "a"), os.path.join(d, "b"))

    def assert_same_files(self, a, b):
        for name in ("layers.csv", "summary.csv", "theory.csv", "nonfinite.csv"):
            with open(os.path.join(a, name)) as f, open(os.path.join(b, name)) as g:
                self.assertEqual(f.read(), g.read(), name)

    def test_a_read_result_saves_the_bytes_normsim_run_wrote(self):
        """Result.save of a Result normsim.read returned (Python's writer) writes the CSV files the C++ wrote:
        text with a comma quoted as io::csv_field quotes it (a custom block's expression), numbers spelled as
        io::format_number spells them (1e-04, 1e-05, 0.5, 1 not 1.0), booleans, lanes and empty keys alike."""
        with Scratch() as d:
            config = os.path.join(d, "grid.toml")
            with open(config, "w") as f:
                f.write(LANES_CONFIG + "norm_eps = 0.0001\n")
            normsim.run(config, progress=False, out=os.path.join(d, "a"))
            with open(os.path.join(d, "a", "layers.csv")) as f:
                self.assertIn('"[[1,0],[0,1]] @ x', f.read())  # the C++ quoted it
            normsim.read(os.path.join(d, "a")).save(os.path.join(d, "b"))
            self.assert_same_files(os.path.join(d, "a"), os.path.join(d, "b"))

    def test_nan_and_inf_in_float_columns_read_as_doubles(self):
        """io::format_number spells nan, -nan, inf and -inf so (normsim's files leave non-finite values out, but
        another writer or a hand edit may put them there):
        in a float column (a measured value or a float key) normsim.read reads them as the doubles, while a
        string key keeps its text; an empty value is still a damaged row."""
        with Scratch() as d:
            out = os.path.join(d, "r")
            normsim.run({"activation": ["relu", "gelu"], "init_gain": [1.0, 2.0], "depth": 2, "width": 8,
                         "samples": 1}, progress=False, out=out)
            self.replace_first_row(os.path.join(out, "summary.csv"), activation="nan", init_gain="-inf",
                                   mean="nan", se="inf")
            self.replace_first_row(os.path.join(out, "layers.csv"), value="-nan")
            r = normsim.read(out)
            self.replace_first_row(os.path.join(out, "layers.csv"), value="")
            with self.assertRaisesRegex(ValueError, "layers.csv:2: a row with empty or missing fields"):
                normsim.read(out)
        row = r.summary.iloc[0]
        self.assertEqual(len(r.summary), 1)
        self.assertEqual(row.activation, "nan")
        self.assertTrue(np.isnan(row["mean"]))
        self.assertEqual((row.se, row.init_gain), (np.inf, -np.inf))
        for column in ("mean", "se", "init_gain"):
            self.assertEqual(r.summary[column].dtype, np.float64, column)
        self.assertTrue(np.isnan(r.layers["value"][0]))
        self.assertEqual(r.layers["value"].dtype, np.float64)

    @staticmethod
    def replace_first_row(path, **fields):
        """The file with only its first row, `fields` replaced in it (the row holds no quoted text)."""
        with open(path) as f:
            header, first = f.read().splitlines()[:2]
        row = dict(zip(header.split(","), first.split(",")))
        row.update(fields)
        with open(path, "w") as f:
            f.write(header + "\n" + ",".join(row.values()) + "\n")


class DamagedFolders(unittest.TestCase):
    """Issue 25 10: normsim.read on a damaged folder raises ValueError naming the file (and the line of a bad
    index), never a raw pandas or json error, and never sizes arrays by a bogus index."""

    def damaged(self, name, mutate):
        with Scratch() as d:
            out = os.path.join(d, "r")
            normsim.run({"depth": 2, "width": 8, "samples": 2}, progress=False, out=out)
            mutate(os.path.join(out, name))
            with self.assertRaises(ValueError) as e:
                normsim.read(out)
            self.assertIn(os.path.join(out, name), str(e.exception))
            return str(e.exception)

    def test_each_damage_names_its_file(self):
        def write(text, mode="w"):
            def go(path):
                with open(path, mode) as f:
                    f.write(text)
            return go

        def truncate(path):
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(text[: len(text) // 3].rsplit(",", 1)[0])

        def row_with(column, value):
            def go(path):
                df = pd.read_csv(path, keep_default_na=False)
                df.loc[0, column] = value
                df.to_csv(path, index=False)
            return go

        self.damaged("layers.csv", write(""))
        self.damaged("summary.csv", write(""))
        self.damaged("layers.csv", truncate)
        self.damaged("run.json", write("{not json"))
        self.damaged("run.json", write("{}"))
        self.damaged("layers.csv", write(b"\x00\xff\xfe binary", "wb"))
        self.assertIn("sample -5", self.damaged("layers.csv", row_with("sample", -5)))
        self.assertIn("layers.csv:2: sample 999999999", self.damaged("layers.csv", row_with("sample", 999999999)))


class WholeOrNothing(unittest.TestCase):
    """Issue 25 11-12: a results folder is locked while written and complete or absent after a failure."""

    def test_full_disk_leaves_no_partial_folder(self):
        # RLIMIT_FSIZE stands in for a full disk: every write past 20 kB fails (EFBIG, SIGXFSZ ignored).
        code = textwrap.dedent("""
            import os, resource, signal, sys
            import normsim
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            r = normsim.run({"depth": 8, "width": 64, "samples": 8}, progress=False)
            resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))
            try:
                r.save(sys.argv[1])
            except OSError as e:
                print("OSError", e.errno)
            try:
                normsim.run({"depth": 8, "width": 64, "samples": 8}, progress=False, out=sys.argv[2])
            except OSError as e:
                print("OSError", e.errno)
            """)
        with Scratch() as d:
            first, second = os.path.join(d, "save"), os.path.join(d, "run")
            done = subprocess.run([sys.executable, "-c", code, first, second], capture_output=True, text=True,
                                  env=dict(os.environ))
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(done.stdout.split(), ["OSError", "27", "OSError", "27"])  # EFBIG
            self.assertFalse(os.path.exists(first))  # Result.save made it: absent again
            self.assertFalse(os.path.exists(second))  # run(out=) made it: absent again

    def test_a_second_writer_is_refused_at_once(self):
        with Scratch() as d:
            out = os.path.join(d, "out")
            held = normsim._core.OutLock(out)
            try:
                start = time.monotonic()
                with self.assertRaises(RuntimeError) as e:
                    normsim.run({"depth": 2, "width": 8, "samples": 1}, progress=False, out=out)
                self.assertIn("is in use by normsim", str(e.exception))
                r = normsim.run({"depth": 2, "width": 8, "samples": 1}, progress=False)
                with self.assertRaises(RuntimeError):
                    r.save(out, force=True)
                self.assertLess(time.monotonic() - start, 30)
            finally:
                held.release()
            r.save(out, force=True)
            self.assertTrue(os.path.isfile(os.path.join(out, "run.json")))


class TheoryCheckList(unittest.TestCase):
    def test_theory_alone(self):
        t = normsim.theory({"placement": "pre", "depth": 4, "width": 16})
        act = t[t.metric == "act_sq"].set_index("l")["value"]
        self.assertEqual(len(act), 5)
        self.assertAlmostEqual(act[4] / act[0], 3.0, delta=1e-3)  # v_l = 1 + l/2 for Pre-LN ReLU (§3(a))

    def test_check_returns_verdicts(self):
        v = normsim.check("preln_act_linear_relu", progress=False)
        self.assertEqual(list(v.id), ["preln_act_linear_relu"])
        self.assertIn(v.verdict[0], ("supported", "refuted", "inconclusive", "not testable at init"))
        self.assertEqual(list(v.columns[:3]), ["id", "statement", "verdict"])
        with self.assertRaises(normsim.ClaimError):
            normsim.check("no_such_claim", progress=False)

    def test_a_check_folder_reads_as_its_summary(self):
        """docs/claims.md: `normsim check --out` writes summary.csv and run.json beside the verdicts ("so OUT is
        also a results folder"), no layers.csv: normsim.read gives its summary and configs, and layers, theory
        and per_sample empty, with their columns (a check keeps no per-sample values)."""
        with Scratch() as d:
            out = os.path.join(d, "check")
            normsim.check("preln_act_linear_relu", progress=False, out=out)
            self.assertFalse(os.path.exists(os.path.join(out, "layers.csv")))
            r = normsim.read(out)
            self.assertEqual(len(r.summary), len(pd.read_csv(os.path.join(out, "summary.csv"))))
            # Its saved copy (a results folder, no verdicts.json) reads back: theory.csv header only, as run's.
            copy = os.path.join(d, "copy")
            r.save(copy)
            again = normsim.read(copy)
            pd.testing.assert_frame_equal(r.summary, again.summary, check_exact=True)
            self.assertTrue(again.theory.empty)
        self.assertGreater(len(r.summary), 0)
        self.assertEqual(len(r.configs), len(r.run_info["configs"]))
        self.assertTrue(r.layers.empty and r.theory.empty)
        self.assertEqual(list(r.layers.columns[-5:]), ["sample", "metric", "l", "k", "value"])
        self.assertEqual(r.per_sample, {})
        with self.assertRaisesRegex(KeyError, "it has none"):
            r.array("act_sq")

    def test_check_refuses_an_out_holding_results_unless_forced(self):
        with Scratch() as d:
            out = os.path.join(d, "check")
            normsim.check("preln_act_linear_relu", progress=False, out=out)
            with open(os.path.join(out, "verdicts.json")) as f:
                first = f.read()
            with self.assertRaises(FileExistsError) as refused:
                normsim.check("preln_act_linear_relu", progress=False, out=out)
            self.assertIn("force", str(refused.exception))
            with open(os.path.join(out, "verdicts.json")) as f:
                self.assertEqual(f.read(), first)  # refused before anything was written
            normsim.check("preln_act_linear_relu", progress=False, out=out, force=True)
            self.assertTrue(os.path.isfile(os.path.join(out, "verdicts.json")))

    def test_lists(self):
        self.assertIn("pre", list(normsim.list("placements").name))
        metrics = normsim.list("metrics")
        self.assertEqual(metrics.set_index("metric").loc["cos_next", "index"], "k")
        self.assertEqual(set(normsim.list()), {"keys", "placements", "sublayers", "activations", "norms",
                                               "inits", "metrics", "claims"})
        claims = normsim.list("claims").set_index("id")  # what `normsim list claims` prints
        self.assertEqual(claims.loc["xiong_thm1_preln", "kind"], "literature")

    def test_the_bridge_names_metrics_as_the_table_does(self):
        """The PyTorch bridge's metric names are rows of the metric table (vocab/metrics.def) with the index and
        pass it computes them at: STREAM and SUBLAYER are read from the table, STREAM_FORWARD is its own."""
        from normsim import _metrics
        table = {m[0]: (m[1], m[4]) for m in normsim._core.metrics()}
        self.assertEqual(list(table), list(normsim.list("metrics").metric))
        bridge = [(m, ("l", "forward")) for m in _metrics.STREAM_FORWARD] + [("grad_sq", ("l", "backward"))]
        bridge += [(m, ("k", "forward")) for m in _metrics.PAIR_FIELDS + ("branch_sq",)]  # measure()'s masks
        for name, where in bridge:
            self.assertEqual(table.get(name), where, name)
            self.assertIn(name, _metrics.STREAM if where[0] == "l" else _metrics.SUBLAYER)
        self.assertEqual(list(normsim.list("metrics").columns), ["metric", "index", "definition", "default"])


class StreamFields(unittest.TestCase):
    """_core.stream_fields, the bridge's stream fields and eff_rank computed by the simulator's code
    (sim/stream_sums.hpp, sim/stream_metrics.hpp):
    the definitions of docs/metrics.md, written here in numpy, on a random stream; its shapes; NaN where a
    definition says so."""

    def stream(self, S=3, L=4, T=5, d=7):
        return np.random.default_rng(11).standard_normal((S, L, T, d))

    def test_the_definitions(self):
        x = self.stream()
        got = normsim._core.stream_fields(x, 2)
        norms = np.linalg.norm(x, axis=-1)
        u = x / norms[..., None]
        T = x.shape[2]
        want = {"act_sq": (x ** 2).mean(axis=(2, 3)), "act_mean_abs": np.abs(x).mean(axis=(2, 3)),
                "act_max_abs": np.abs(x).max(axis=(2, 3)),
                "token_cos": ((u.sum(axis=2) ** 2).sum(axis=-1) - T) / (T * (T - 1)),
                "cos_next": ((x[:, :-1] * x[:, 1:]).sum(-1) / (norms[:, :-1] * norms[:, 1:])).mean(-1),
                "rel_update": (np.linalg.norm(x[:, 1:] - x[:, :-1], axis=-1) / norms[:, :-1]).mean(-1)}
        self.assertEqual(set(got), {m for m, _, _ in normsim._core.stream_field_table()} | {"eff_rank"})
        for metric, value in want.items():
            # Sums of at most T d = 35 float64 terms in another order: a relative error of a few 35 x 1.1e-16;
            # token_cos subtracts T = 5 from a sum of squares near 5..25, hence the absolute 1e-13.
            np.testing.assert_allclose(got[metric], value, rtol=1e-13, atol=1e-13, err_msg=metric)
        # eff_rank (Roy & Vetterli) from numpy's SVD; the simulator takes the singular values as square roots
        # of the Gram matrix's eigenvalues, whose rounding (eps ||G|| = eps s_max^2) moves s_i by about
        # eps s_max^2 / s_i: a relative eps cond^2, with cond = s_max / s_min of each matrix (here below 10).
        sv = np.linalg.svd(x, compute_uv=False)
        p = sv / sv.sum(axis=-1, keepdims=True)
        cond = sv.max(axis=-1) / sv.min(axis=-1)
        err = np.abs(got["eff_rank"] - np.exp(-(p * np.log(p)).sum(axis=-1)))
        self.assertTrue(np.all(err <= 100 * np.finfo(float).eps * cond ** 2 * got["eff_rank"]), err)

    def test_threads_do_not_change_a_bit(self):
        x = self.stream(S=4, L=9, T=16, d=64)
        one, two = normsim._core.stream_fields(x, 1), normsim._core.stream_fields(x, 2)
        for metric in one:
            np.testing.assert_array_equal(one[metric], two[metric], metric)

    def test_undefined_values(self):
        x = self.stream()
        x[0, 1, 2] = 0  # a zero token: no direction, token_cos undefined (NaN), as in the simulator
        x[1, 2, 0, 0] = np.inf
        got = normsim._core.stream_fields(x, 1)
        self.assertTrue(np.isnan(got["token_cos"][0, 1]))
        self.assertFalse(np.isnan(got["token_cos"][0, 0]))
        self.assertTrue(np.isnan(got["act_max_abs"][1, 2]))  # a NaN or Inf entry: max |x| NaN
        self.assertTrue(np.isnan(normsim._core.stream_fields(np.zeros((1, 2, 3, 4)), 1)["eff_rank"]).all())
        self.assertNotIn("token_cos", normsim._core.stream_fields(x[:, :, :1], 1))  # one token
        self.assertEqual(got["cos_next"].shape, (3, 3))


class PlotKeywords(unittest.TestCase):
    """Issue 30 item 5: normsim.plot takes keywords (the CLI's strings still work, with a DeprecationWarning)."""

    def test_keywords_choose_the_figures(self):
        with Scratch() as d:
            out = os.path.join(d, "r")
            normsim.run({"depth": 2, "width": 8, "samples": 1}, progress=False, out=out)
            self.assertEqual(normsim.plot(out, format="png", metric=["act_sq"], report=False), out)
            figures = sorted(os.listdir(os.path.join(out, "figures")))
            self.assertEqual([f for f in figures if not f.endswith((".csv", ".gp"))], ["profile_act_sq.png"])
            self.assertFalse(os.path.exists(os.path.join(out, "report.html")))
            normsim.plot(out, format=["svg", "png"], metric="grad_sq", size="two-column")
            self.assertTrue(os.path.isfile(os.path.join(out, "figures", "profile_grad_sq.svg")))
            self.assertTrue(os.path.isfile(os.path.join(out, "report.html")))

    def test_cli_strings_still_work_with_a_deprecation_warning(self):
        with Scratch() as d:
            out = os.path.join(d, "r")
            normsim.run({"depth": 2, "width": 8, "samples": 1}, progress=False, out=out)
            with self.assertWarnsRegex(DeprecationWarning, "pass keywords"):
                normsim.plot(out, "--format", "png", "--metric", "act_sq", "--no-report")
            self.assertTrue(os.path.isfile(os.path.join(out, "figures", "profile_act_sq.png")))

    def test_step_draws_a_training_step(self):
        """Issue 28: normsim.plot(step=S) is `normsim plot --step S`: a folder with steps draws the step asked
        (its summary rows at that step), and a step the folder lacks is refused naming the steps it has."""
        with Scratch() as d:
            out = os.path.join(d, "r")
            normsim.run({"depth": 2, "width": 8, "samples": 1, "steps": 1, "update": "sgd", "update_lr": 0.1},
                        progress=False, out=out)
            normsim.plot(out, format="png", metric="act_sq", report=False, step=1)
            data = pathlib.Path(out, "figures", "profile_act_sq.csv")
            at_step_1 = data.read_text()
            normsim.plot(out, format="png", metric="act_sq", report=False)  # step 0, init
            self.assertNotEqual(data.read_text(), at_step_1)  # the update moved act_sq: another figure
            with self.assertRaisesRegex(RuntimeError, "step 5"):
                normsim.plot(out, format="png", report=False, step=5)
        with self.assertRaisesRegex(TypeError, "step takes a training step"):
            normsim.plot("nowhere", step=-1)
        with self.assertRaisesRegex(TypeError, "step takes a training step"):
            normsim.plot("nowhere", step=True)

    def test_bad_keywords_are_named(self):
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'formats'; it takes metric, format"):
            normsim.plot("nowhere", formats="png")
        with self.assertRaisesRegex(TypeError, "latex takes True or False"):
            normsim.plot("nowhere", latex="yes")
        with self.assertRaisesRegex(TypeError, "format takes a string or a non-empty list"):
            normsim.plot("nowhere", format=[])
        with Scratch() as d, self.assertRaisesRegex(RuntimeError, "size takes one-column"):  # the library's
            normsim.plot(d, size="huge")


class Gil(unittest.TestCase):
    def test_the_simulation_releases_the_gil(self):
        # One sample on one thread: a single unit of about half a second. Another Python thread keeps
        # running meanwhile only if the GIL is released; if it were held, that thread would stall for the
        # whole unit.
        config = {"depth": 32, "width": 512, "tokens": 64, "samples": 1}
        start = time.monotonic()
        normsim.run(config, threads=1, progress=False)
        alone = time.monotonic() - start
        worker = threading.Thread(target=normsim.run, args=(config,), kwargs={"threads": 1, "progress": False})
        ticks = [time.monotonic()]
        worker.start()
        while worker.is_alive():
            time.sleep(0.002)
            ticks.append(time.monotonic())
        longest_stall = max(b - a for a, b in zip(ticks, ticks[1:]))
        self.assertLess(longest_stall, alone / 2, f"the main thread stalled {longest_stall:.3f} s of {alone:.3f} s")


class Progress(unittest.TestCase):
    """Issue 30 item 5: tqdm draws the bar when it is installed, normsim's own text bar when it is not."""

    def drawn(self, progress=True):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            normsim.run({"depth": 2, "width": 8, "samples": 4}, threads=1, progress=progress)
        return err.getvalue()

    @unittest.skipUnless(importlib.util.find_spec("tqdm"), "tqdm is not installed (python3-tqdm)")
    def test_tqdm_when_installed(self):
        text = self.drawn()
        self.assertIn("normsim run: 100%|", text)
        self.assertNotIn("normsim run [", text)

    def test_own_bar_without_tqdm(self):
        with mock.patch.dict(sys.modules, {"tqdm": None, "tqdm.auto": None}):  # import tqdm now fails
            text = self.drawn()
        self.assertIn("normsim run [##############################] 100%", text)
        self.assertTrue(text.endswith("\n"))  # close() ends the line

    def test_progress_false_draws_nothing(self):
        self.assertEqual(self.drawn(progress=False), "")


class Interrupt(unittest.TestCase):
    def test_ctrl_c_stops_and_writes_nothing(self):
        with Scratch() as d:
            out = os.path.join(d, "out")
            code = ("import normsim\n"
                    f"normsim.run({{'depth': 64, 'width': 256, 'tokens': 16, 'samples': 400}}, out={out!r},"
                    " progress=True)\n")
            proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
            seen, deadline = "", time.monotonic() + 120
            while "%" not in seen and time.monotonic() < deadline:  # the bar (tqdm's or normsim's): units run
                seen += proc.stderr.read(1)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
            err = seen + err
            self.assertNotEqual(proc.returncode, 0)
            self.assertIn("KeyboardInterrupt", err)
            self.assertRegex(err, r"normsim run\W.*\d+%")  # interrupted while running, not during the import
            self.assertNotIn("100%", err)
            self.assertFalse(os.path.exists(out))


class LoadOrder(unittest.TestCase):
    """normsim/_load_order.py: pip's CUDA torch before a CUDA extension (docs/gpu.md), nothing otherwise."""

    def run_python(self, code, path):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([path, os.environ.get("PYTHONPATH", "")])}
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)

    def test_torch_with_its_own_cuda_libraries_is_recognised_by_the_files_beside_it(self):
        code = "from normsim import _load_order; print(_load_order.torch_ships_cuda())"
        with Scratch() as d:
            os.makedirs(os.path.join(d, "torch"))
            open(os.path.join(d, "torch", "__init__.py"), "w").close()
            self.assertEqual(self.run_python(code, d).stdout.strip(), "False")  # Debian's layout: no CUDA
            os.makedirs(os.path.join(d, "nvidia"))  # pip's nvidia-* packages beside it
            self.assertEqual(self.run_python(code, d).stdout.strip(), "True")

    def test_a_cpu_only_torch_is_not_imported_by_import_normsim(self):
        code = "import sys, normsim; print('torch' in sys.modules)"
        with Scratch() as d:  # a torch that would announce itself if imported
            os.makedirs(os.path.join(d, "torch"))
            with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
                f.write("raise SystemExit('imported')\n")
            self.assertEqual(self.run_python(code, d).stdout.strip(), "False")


if __name__ == "__main__":
    os.chdir(SOURCE_DIR)  # normsim.check finds experiments/claims as the CLI does
    unittest.main()
