"""experiments/notebooks/xiong_depth: the notebook and its exported script hold the same code, the script runs
with plain python3 (Agg backend), draws the figure, and reproduces the README figure's exponent: the one
`normsim check` reports for the claim xiong_thm1_preln (the same config and seed give the same numbers)."""
import json
import os
import re
import subprocess
import sys
import unittest

from common import SOURCE_DIR, Scratch, require_or_skip

require_or_skip("numpy", "pandas", "matplotlib")
import normsim  # noqa: E402

NOTEBOOK = os.path.join(SOURCE_DIR, "experiments", "notebooks", "xiong_depth")


def script_code():
    """The code cells of the exported script (the text after each plain `# %%` marker)."""
    with open(NOTEBOOK + ".py") as f:
        chunks = re.split(r"^# %%", f.read(), flags=re.M)[1:]
    return [c.partition("\n")[2].strip("\n") for c in chunks if not c.startswith(" [markdown]")]


class Notebook(unittest.TestCase):
    def test_notebook_and_script_hold_the_same_code(self):
        with open(NOTEBOOK + ".ipynb") as f:
            cells = json.load(f)["cells"]
        code = ["".join(c["source"]).strip("\n") for c in cells if c["cell_type"] == "code"]
        self.assertEqual(code, script_code())
        lines = [l for l in "\n".join(code).splitlines() if l.strip() and not l.lstrip().startswith("#")]
        self.assertLess(len(lines), 20)  # the figure in under 20 lines

    def test_script_reproduces_the_readme_figure(self):
        with Scratch() as d:
            done = subprocess.run([sys.executable, NOTEBOOK + ".py"], cwd=d, capture_output=True, text=True,
                                  env={**os.environ, "MPLBACKEND": "Agg"})
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertGreater(os.path.getsize(os.path.join(d, "xiong_thm1_preln.png")), 10000)
        claim = normsim.check("xiong_thm1_preln", claims_dir=os.path.join(SOURCE_DIR, "experiments", "claims"),
                              progress=False).iloc[0]
        half = (claim.ci_high - claim.ci_low) / 2
        self.assertEqual(done.stdout.strip(), f"exponent {claim.measured:.3f} ± {half:.3f}")


if __name__ == "__main__":
    unittest.main()
