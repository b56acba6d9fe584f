"""A claim file may name a Python block file (issue 11): `normsim check` measures the PyTorch block with
normsim.torch and gives it a verdict like any other claim (experiments/claims/torch_preln_act_linear.toml,
its block experiments/claims/blocks/preln_mlp.py). A malformed [torch] table exits 2 naming file, line and
key; a block file Python cannot run exits 1 naming the file and Python's error. Skipped (exit 77) without
numpy, pandas or torch."""
import json
import os
import subprocess
import sys
import unittest

from common import PROGRAM, SOURCE_DIR, Scratch, require_or_skip

require_or_skip("numpy", "pandas", "torch")

CLAIMS = os.path.join(SOURCE_DIR, "experiments", "claims")
CLAIM = "torch_preln_act_linear"


def check(*args):
    return subprocess.run([PROGRAM, "check", *args], capture_output=True, text=True)


def claim_folder(d, torch_table, block=None):
    """A claims folder holding the torch claim with its [torch] table replaced, and `block` as blocks/x.py."""
    folder = os.path.join(d, "claims")
    os.makedirs(os.path.join(folder, "blocks"))
    with open(os.path.join(CLAIMS, CLAIM + ".toml")) as f:
        text = f.read()
    text = text.replace('[torch]\nfile = "blocks/preln_mlp.py"\n', torch_table)
    with open(os.path.join(folder, CLAIM + ".toml"), "w") as f:
        f.write(text.replace("samples = 32", "samples = 2"))
    if block is not None:
        with open(os.path.join(folder, "blocks", "x.py"), "w") as f:
            f.write(block)
    return folder


class ClaimOnAPyTorchBlock(unittest.TestCase):
    def test_verdict_like_any_other_claim(self):
        with Scratch() as d:
            out = os.path.join(d, "check")
            done = check(CLAIM, "--out", out, "--quiet")
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(os.path.join(out, "verdicts.json")) as f:
                verdicts = json.load(f)
            v = next(v for v in verdicts if v["id"] == CLAIM)
            # The mean field's slope 0.5 (relu, Pre-LN); 32 samples of d = 256 put the 95 % interval within
            # about +-0.012 of the measured slope (docs/claims.md: 0.504 [0.493, 0.515]), inside the 5 % band.
            self.assertEqual(v["verdict"], "supported")
            self.assertAlmostEqual(v["predicted"], 0.5, places=3)
            self.assertLess(abs(v["measured"] - 0.5), 0.025)
            self.assertTrue(os.path.isfile(os.path.join(out, "claims", CLAIM, "data.csv")))
            self.assertTrue(os.path.isfile(os.path.join(out, "figures", f"claim_{CLAIM}.png")))
            # Each config's time in run.json is the bridge's own (its run.json's wall_seconds), one per config.
            with open(os.path.join(out, "run.json")) as f:
                info = json.load(f)
            seconds = info["timings"]["configs_seconds"]
            self.assertEqual(len(seconds), len(info["configs"]))
            self.assertTrue(all(s > 0 for s in seconds), seconds)

    def test_missing_block_file_is_a_claim_error(self):
        with Scratch() as d:
            folder = claim_folder(d, '[torch]\nfile = "blocks/none.py"\n')
            done = check(CLAIM, "--claims", folder, "--out", os.path.join(d, "o"), "--quiet")
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn(f"{CLAIM}.toml:", done.stderr)
            self.assertIn("key 'torch.file'", done.stderr)
            self.assertIn("none.py", done.stderr)

    def test_block_file_python_cannot_run(self):
        with Scratch() as d:
            folder = claim_folder(d, '[torch]\nfile = "blocks/x.py"\n', "def blocks(config):\n    raise "
                                  "ValueError('this block is broken')\n")
            done = check(CLAIM, "--claims", folder, "--out", os.path.join(d, "o"), "--quiet", "--no-plots")
            self.assertEqual(done.returncode, 1, done.stderr)
            self.assertIn("x.py", done.stderr)
            self.assertIn("this block is broken", done.stderr)


# experiments/claims/blocks/preln_mlp.py, its blocks(config) also writing the interpreter that runs it to
# python.txt beside the file.
RECORDING = """

_blocks = blocks


def blocks(config):
    import os, sys
    with open(os.path.join(os.path.dirname(__file__), "python.txt"), "w") as f:
        f.write(sys.executable)
    return _blocks(config)
"""


class CallersPython(unittest.TestCase):
    """normsim.check called from Python measures a [torch] claim's block with that Python (sys.executable),
    not the one the module was built for (check/torch_block.cpp's default), so that a venv's or another
    Python's torch is the one measured; NORMSIM_PYTHON, where the caller set it, still decides, and the
    environment is left as it was."""

    def check_from(self, python, d, env):
        with open(os.path.join(CLAIMS, "blocks", "preln_mlp.py")) as f:
            block = f.read() + RECORDING
        folder = claim_folder(d, '[torch]\nfile = "blocks/x.py"\n', block)
        code = (f"import json, os, normsim\n"
                f"v = normsim.check({CLAIM!r}, claims_dir={folder!r}, progress=False)\n"
                "print(json.dumps([v.device[0], os.environ.get('NORMSIM_PYTHON')]))")
        done = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(folder, "blocks", "python.txt")) as f:
            return (*json.loads(done.stdout.splitlines()[-1]), f.read())

    def test_the_calling_python_measures_the_block(self):
        env = {k: v for k, v in os.environ.items() if k != "NORMSIM_PYTHON"}
        with Scratch() as d:
            python = os.path.join(d, "bin", "python3")  # this interpreter under another name: its sys.executable
            os.makedirs(os.path.dirname(python))
            os.symlink(sys.executable, python)
            device, after, ran = self.check_from(python, os.path.join(d, "own"), env)
            self.assertEqual(ran, python)
            self.assertTrue(device.endswith(f"run by {python}"), device)
            self.assertIsNone(after)
            device, after, ran = self.check_from(python, os.path.join(d, "given"),
                                                 {**env, "NORMSIM_PYTHON": sys.executable})
            self.assertEqual((ran, after), (sys.executable, sys.executable))


if __name__ == "__main__":
    unittest.main()
