"""Loads pip's CUDA PyTorch before normsim's extension when both are CUDA builds (docs/gpu.md "With pip's
PyTorch in the same process"): the extension links the CUDA toolkit's cudart, cuBLAS and cuSOLVER, pip's
torch ships its own under the same sonames, and whichever loads first serves both; with the extension's
first, `import torch` aborted ("free(): invalid pointer", torch 2.11.0+cu130, H200). A CPU-only extension,
or a torch without CUDA libraries of its own (Debian's python3-torch), needs nothing: torch is then not
imported here, so `import normsim` stays fast."""
import glob
import importlib
import importlib.util
import os


def torch_ships_cuda():
    """Whether an installed torch brings CUDA libraries (pip's nvidia-* packages, or torch/lib/libcu*)."""
    spec = importlib.util.find_spec("torch")
    for where in (spec.submodule_search_locations or []) if spec else []:
        if os.path.isdir(os.path.join(os.path.dirname(where), "nvidia")) or \
                glob.glob(os.path.join(where, "lib", "libcu*")):
            return True
    return False


def before_extension(extension_has_cuda):
    if not extension_has_cuda:
        return
    try:
        if torch_ships_cuda():
            importlib.import_module("torch")  # binds no name: normsim.torch stays the bridge
    except Exception:  # noqa: BLE001  (a broken torch: normsim itself does not need it)
        pass
