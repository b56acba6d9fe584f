"""README.md's "From Python" example prints what the README says it prints."""
import os
import re
import subprocess
import sys
import unittest

from common import SOURCE_DIR, require_or_skip

require_or_skip("numpy", "pandas")


class ReadmeExample(unittest.TestCase):
    def test_from_python_prints_its_output(self):
        with open(os.path.join(SOURCE_DIR, "README.md")) as f:
            section = f.read().split("## From Python", 1)[1].split("\n## ", 1)[0]
        code, output = re.findall(r"```(?:python)?\n(.*?)```", section, flags=re.S)[:2]
        done = subprocess.run([sys.executable, "-c", code], cwd=SOURCE_DIR, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, output)
        self.assertEqual(len(code.strip().splitlines()), 5)  # the README promises five lines


if __name__ == "__main__":
    unittest.main()
