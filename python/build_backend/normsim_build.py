"""normsim's PEP 517 build backend (pyproject.toml names it; it needs nothing from a package index): builds the
extension with CMake for the interpreter pip runs (`Python_EXECUTABLE` = sys.executable, pybind11 from
Debian's pybind11-dev or a pip-installed pybind11) and packs BUILD/python/normsim into a wheel.

    pip install .                        a wheel: the package copied into the environment
    pip install -e .                     editable: a .pth pointing at BUILD/python (rebuilt by each install)
    pip install . --config-settings build-dir=DIR    where CMake builds (default build/pip-<python tag>)

numpy, pandas, matplotlib and torch are optional (normsim imports each when a function first needs it); the
extras `data`, `plots` and `torch` name them for pip."""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXTRAS = {"data": ["numpy", "pandas", "xarray", "tqdm"], "plots": ["matplotlib"], "torch": ["torch"]}


def _version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(normsim VERSION ([0-9.]+)", f.read()).group(1)


def _tags():
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return python, python, platform


def _build_dir(config_settings):
    given = (config_settings or {}).get("build-dir")
    return os.path.abspath(given) if given else os.path.join(ROOT, "build", f"pip-{_tags()[0]}")


# What installs the build's dependencies: Debian's packages, or pip's where a package index is reachable.
_DEBIAN = "'bash scripts/setup.sh --no-build' in the checkout (Debian: CMake, g++, pybind11-dev and the rest)"


def _pip(packages):
    return f"{sys.executable} -m pip install {packages}"


def _cmake_program():
    """cmake on PATH, or the one `pip install cmake` put beside this interpreter's scripts (a venv's bin/, on
    no PATH when the venv is not activated); FileNotFoundError saying how to install it otherwise."""
    found = shutil.which("cmake") or shutil.which("cmake", path=sysconfig.get_path("scripts"))
    if found is None:
        raise FileNotFoundError(f"normsim: building the extension needs CMake, and no cmake is on PATH; install "
                                f"it with '{_pip('cmake')}' (where a package index is reachable) or 'sudo apt-get "
                                f"install cmake' (Debian; or {_DEBIAN}), then run the install again")
    return found


def _cmake(build):
    """Configures and builds the extension target; CMake's own output goes to stderr (pip shows it with -v)."""
    pybind11 = []
    try:  # a pip-installed pybind11 where Debian's pybind11-dev is absent
        import pybind11
        pybind11 = [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]
    except ImportError:
        pass
    cmake = _cmake_program()
    configure = [cmake, "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DNORMSIM_PYTHON=ON",
                 f"-DPython_EXECUTABLE={sys.executable}", "-DNORMSIM_TESTS=OFF", "-DNORMSIM_MPI=OFF", *pybind11]
    jobs = str(os.cpu_count() or 1)
    steps = ((configure, f"CMake could not configure the build, most often for a missing dependency (its message "
                         f"is above; 'pip install -v' shows it); install them with {_DEBIAN}, or pybind11 and "
                         f"CMake with '{_pip('pybind11 cmake')}' where a package index is reachable"),
             ([cmake, "--build", build, "-j", jobs, "--target", "normsim_python"],
              f"the C++ build failed (the compiler's message is above; 'pip install -v' shows it); the packages "
              f"it needs: {_DEBIAN}, docs/python.md"))
    for command, why in steps:
        done = subprocess.run(command, stdout=sys.stderr, stderr=sys.stderr)
        if done.returncode != 0:
            raise RuntimeError(f"normsim: '{' '.join(command)}' failed (status {done.returncode}): {why}")
    return os.path.join(build, "python")


def _metadata():
    lines = ["Metadata-Version: 2.1", "Name: normsim", f"Version: {_version()}",
             "Summary: Signal propagation through deep residual networks at initialization",
             "Requires-Python: >=3.9"]
    for extra, packages in EXTRAS.items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {p}; extra == "{extra}"' for p in packages]
    return "\n".join(lines) + "\n"


def _wheel(wheel_directory, files):
    """files: archive name -> bytes. Writes the wheel with its dist-info (WHEEL, METADATA, RECORD)."""
    python, abi, platform = _tags()
    tag = f"{python}-{abi}-{platform}"
    info = f"normsim-{_version()}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: normsim_build\nRoot-Is-Purelib: false\n"
                              f"Tag: {tag}\n").encode()
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"normsim-{_version()}-{tag}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files.items():
            z.writestr(arcname, data)
    return name


def _package_files(python_dir):
    package = os.path.join(python_dir, "normsim")
    files = {}
    for entry in sorted(os.listdir(package)):
        path = os.path.join(package, entry)
        if os.path.isfile(path) and (entry.endswith(".py") or entry.startswith("_core.")):
            with open(path, "rb") as f:
                files[f"normsim/{entry}"] = f.read()
    return files


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, _package_files(_cmake(_build_dir(config_settings))))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    python_dir = _cmake(_build_dir(config_settings))
    return _wheel(wheel_directory, {"normsim.pth": (python_dir + "\n").encode()})
