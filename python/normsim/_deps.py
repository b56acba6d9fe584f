"""The optional Python packages normsim uses, imported when first needed so that `import normsim` never fails
because one is missing: a function that needs one raises MissingPackageError naming it."""
import importlib
import sys

# module name -> Debian package that provides it
DEBIAN = {"numpy": "python3-numpy", "pandas": "python3-pandas", "torch": "python3-torch",
          "matplotlib": "python3-matplotlib"}


class MissingPackageError(ImportError):
    """A Python package normsim needs for this function is not installed."""


def require(module, why):
    """The module, or MissingPackageError saying which package `why` needs and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        package = DEBIAN.get(module, module)
        raise MissingPackageError(
            f"{why} needs the Python package '{module}', which is not installed in {sys.executable} "
            f"(pip: {sys.executable} -m pip install {module}; Debian's python3: apt-get install {package}, "
            f"which scripts/setup.sh does)") from e
