"""Issue 30 item 1: `pip install .` and `pip install -e .` into a fresh venv (no package index: the venv sees
Debian's numpy and pandas through --system-site-packages), then README.md's Python example with that venv's
python; `pip install .` into a venv of another interpreter (the oldest Python >= 3.9 the machine has besides
Debian's: pyenv's on these VMs), where the extension builds for it and imports; and an extension built for
another Python is named as such, with the rebuild command."""
import glob
import os
import re
import shutil
import subprocess
import sys
import unittest

from common import SOURCE_DIR, Scratch, require_or_skip

require_or_skip("numpy", "pandas")
# Beside the build tree at the same depth (build -> build-pip), so that ccache, with CCACHE_BASEDIR at the
# checkout (scripts/test.sh), sees the same relative paths and serves the Release build's objects.
BUILD = os.path.abspath(os.environ.get("NORMSIM_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))) + "-pip"


def clean_env():
    """The environment without the test harness's PYTHONPATH (which points at the build tree's package)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def readme_example():
    with open(os.path.join(SOURCE_DIR, "README.md")) as f:
        section = f.read().split("## From Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(?:python)?\n(.*?)```", section, flags=re.S)[:2]


class PipInstall(unittest.TestCase):
    def install(self, venv, *how):
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        done = subprocess.run([python, "-m", "pip", "install", "--no-index", "--quiet",
                               "--config-settings", f"build-dir={BUILD}", *how, SOURCE_DIR],
                              env=clean_env(), cwd=venv, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stdout[-3000:] + done.stderr[-3000:])
        return python

    def check_venv_runs_the_readme(self, python, venv):
        where = subprocess.run([python, "-c", "import normsim; print(normsim.__file__)"], env=clean_env(),
                               cwd=venv, capture_output=True, text=True, check=True).stdout
        code, output = readme_example()
        done = subprocess.run([python, "-c", code], cwd=SOURCE_DIR, env=clean_env(), capture_output=True,
                              text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, output)
        return where

    def test_wheel_and_editable_installs_run_the_readme_example(self):
        with Scratch() as d:
            venv = os.path.join(d, "venv")
            python = self.install(venv)
            self.assertTrue(self.check_venv_runs_the_readme(python, venv).startswith(venv))  # the wheel's copy
            editable = os.path.join(d, "editable")
            python = self.install(editable, "-e")
            where = self.check_venv_runs_the_readme(python, editable)
            self.assertTrue(where.startswith(os.path.join(BUILD, "python")), where)  # the .pth's build tree


def other_interpreter():
    """The oldest Python >= 3.9 on this machine other than this one's version (pyenv's, or /usr/bin/python3.X)
    that can make a venv with pip and has its headers, or None: `pip install .` must build for whatever
    interpreter runs it, not only Debian's."""
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = glob.glob(os.path.join(pyenv, "versions", "3.*", "bin", "python3")) + glob.glob("/usr/bin/python3.*")
    versions = []
    for python in found:
        match = re.fullmatch(r".*/(?:versions/3\.(\d+)[^/]*/bin/python3|python3\.(\d+))", python)
        minor = match and int(match.group(1) or match.group(2))
        if minor and 9 <= minor != sys.version_info.minor and os.access(python, os.X_OK) and usable(python):
            versions.append((minor, python))
    return min(versions)[1] if versions else None


def usable(python):
    """Whether `python` has venv with ensurepip (Debian splits them into python3.X-venv) and its C headers
    (python3.X-dev): without them the install cannot be tried, which is the machine's set-up, not normsim's."""
    probe = ("import ensurepip, os, sysconfig, venv; "
             "raise SystemExit(not os.path.isfile(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))")
    return subprocess.run([python, "-c", probe], capture_output=True).returncode == 0


class AnotherInterpreter(unittest.TestCase):
    def test_pip_install_builds_for_the_interpreter_that_runs_it(self):
        python = other_interpreter()
        if python is None:
            self.skipTest("no Python >= 3.9 besides this one's version on this machine")
        with Scratch() as d:
            venv = os.path.join(d, "venv")  # no system site packages: Debian's are for another Python
            subprocess.run([python, "-m", "venv", venv], check=True)
            venv_python = os.path.join(venv, "bin", "python")
            minor = subprocess.run([venv_python, "-c", "import sys; print(sys.version_info.minor)"],
                                   capture_output=True, text=True, check=True).stdout.strip()
            done = subprocess.run([venv_python, "-m", "pip", "install", "--no-index", "--quiet", "--config-settings",
                                   f"build-dir={BUILD}3{minor}", SOURCE_DIR],
                                  env=clean_env(), cwd=venv, capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stdout[-3000:] + done.stderr[-3000:])
            # The extension imports; pandas, not in this venv (no package index), is asked for by name with the
            # pip command for this very interpreter.
            done = subprocess.run([venv_python, "-c", "import normsim, sys; print(normsim.__version__); "
                                   "normsim.theory({'depth': 2})"], env=clean_env(), cwd=venv, capture_output=True,
                                  text=True)
            self.assertTrue(done.stdout.strip(), done.stderr)  # the version: the extension imported
            self.assertIn("MissingPackageError", done.stderr)  # the venv has no pandas (no system site packages)
            self.assertIn(f"{venv_python} -m pip install pandas", done.stderr)


class OtherPython(unittest.TestCase):
    def test_an_extension_built_for_another_python_says_so_and_how_to_rebuild(self):
        import normsim
        with Scratch() as d:
            package = os.path.join(d, "normsim")
            os.makedirs(package)
            for f in glob.glob(os.path.join(os.path.dirname(normsim.__file__), "*.py")):
                shutil.copy(f, package)
            open(os.path.join(package, "_core.cpython-39-x86_64-linux-gnu.so"), "w").close()
            done = subprocess.run([sys.executable, "-c", "import normsim"], env={**clean_env(), "PYTHONPATH": d},
                                  capture_output=True, text=True)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("was built for another Python (_core.cpython-39-x86_64-linux-gnu.so)", done.stderr)
            self.assertIn("-m pip install .", done.stderr)
            self.assertNotIn("circular import", done.stderr)


class BuildBackendErrors(unittest.TestCase):
    """The PEP 517 backend (python/build_backend/normsim_build.py) says what to install where CMake is missing
    or cannot configure, instead of subprocess's raw FileNotFoundError traceback. Runs no build: PATH holds no
    cmake, or a cmake that fails as a configure with a missing dependency does."""

    def backend(self):
        import importlib.util
        path = os.path.join(SOURCE_DIR, "python", "build_backend", "normsim_build.py")
        spec = importlib.util.spec_from_file_location("normsim_build", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def build_wheel(self, bin_dir, d):
        from unittest import mock
        backend = self.backend()
        with mock.patch.dict(os.environ, {"PATH": bin_dir}), \
                mock.patch.object(backend.sysconfig, "get_path", return_value=bin_dir):
            backend.build_wheel(d, {"build-dir": os.path.join(d, "build")})

    def test_no_cmake_names_pip_and_apt(self):
        with Scratch() as d:
            with self.assertRaises(FileNotFoundError) as e:
                self.build_wheel(d, d)
        message = str(e.exception)
        self.assertIn("no cmake is on PATH", message)
        self.assertIn(f"'{sys.executable} -m pip install cmake' (where a package index is reachable)", message)
        self.assertIn("'sudo apt-get install cmake' (Debian", message)

    def test_a_failed_configure_names_debian_and_pip(self):
        with Scratch() as d:
            bin_dir = os.path.join(d, "bin")
            os.makedirs(bin_dir)
            with open(os.path.join(bin_dir, "cmake"), "w") as f:
                f.write("#!/bin/sh\necho 'CMake Error: Could not find pybind11' >&2\nexit 1\n")
            os.chmod(os.path.join(bin_dir, "cmake"), 0o755)
            with self.assertRaises(RuntimeError) as e:
                self.build_wheel(bin_dir, d)
        message = str(e.exception)
        self.assertIn("CMake could not configure the build", message)
        self.assertIn("bash scripts/setup.sh --no-build", message)
        self.assertIn(f"'{sys.executable} -m pip install pybind11 cmake'", message)


if __name__ == "__main__":
    unittest.main()
