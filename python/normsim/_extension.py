"""Why normsim's compiled extension (_core) did not load, in words that say what to do: built for another
Python (the interpreter loads only its own ABI's file names), or not built at all."""
import glob
import importlib.machinery
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def explain(error):
    """The message for an ImportError raised while importing normsim._core, or None to keep the original."""
    built = sorted(os.path.basename(p) for p in glob.glob(os.path.join(HERE, "_core.*")))
    loadable = importlib.machinery.EXTENSION_SUFFIXES
    this = f"Python {sys.version.split()[0]} ({sys.executable})"
    rebuild = (f"rebuild it for this interpreter: `{sys.executable} -m pip install .` in the normsim checkout, "
               f"or cmake -DPython_EXECUTABLE={sys.executable} (docs/python.md \"Install\")")
    if not built:
        return f"normsim's extension (_core) is not built in {HERE}; {rebuild}"
    if not any(name == "_core" + suffix for name in built for suffix in loadable):
        return (f"normsim's extension in {HERE} was built for another Python ({', '.join(built)}); this is "
                f"{this}, which loads only *{loadable[0]}; {rebuild}")
    return None
