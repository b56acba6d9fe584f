"""Shared by the Python tests (registered in CTest by tests/CMakeLists.txt, which sets PYTHONPATH to
BUILD/python and NORMSIM_PROGRAM to the normsim program). A package that is genuinely absent makes a test
exit with status 77, which CTest reports as Skipped."""
import importlib
import os
import shutil
import sys
import tempfile

SKIP = 77
SOURCE_DIR = os.environ.get("NORMSIM_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
PROGRAM = os.environ.get("NORMSIM_PROGRAM", os.path.join(SOURCE_DIR, "build", "normsim"))


def require_or_skip(*modules):
    """Exits with SKIP naming the first module that is not installed."""
    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            print(f"skipped: the Python package '{m}' is not installed", file=sys.stderr)
            sys.exit(SKIP)


class Scratch:
    """A temporary folder, removed afterwards."""

    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="normsim-pytest-")
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)
