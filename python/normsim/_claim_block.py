"""`python3 -m normsim._claim_block REQUEST OUT`: what `normsim check` runs for a claim whose [torch] table
names a Python block file (check/torch_block.hpp, docs/claims.md). REQUEST (JSON) holds the file and the
claim's configs (every key, as run.json writes them); for config c, normsim.torch.measure runs the file's
blocks(config) and writes its results folder OUT/c (layers.csv, summary.csv, nonfinite.csv, run.json).

The file defines blocks(config) -> what normsim.torch.measure takes with depth = config["depth"] (a factory
k -> nn.Module, or (parts, compose)), and may define final_norm(config) -> a module or None (y = x_K). Each
config runs with x_0 of shape (tokens, width), N(0,1) entries, and the config's loss, samples, seed and
precision (float64 or float32); keys the PyTorch block does not read are the block's business."""
import importlib.util
import json
import os
import sys

from . import torch as bridge
from ._deps import MissingPackageError, require


def load(file):
    spec = importlib.util.spec_from_file_location("normsim_claim_block", file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "blocks", None)):
        raise SystemExit(f"{file}: defines no function blocks(config) (docs/claims.md)")
    return module


def measure(module, config):
    """The bridge's Result for one config of the claim."""
    if config["input_std"] != 1 or config["input_corr"] != 0:
        raise SystemExit(f"input_std = {config['input_std']}, input_corr = {config['input_corr']}: "
                         "normsim.torch draws x_0 with N(0,1) entries only (input_std 1, input_corr 0)")
    if config["precision"] not in ("float64", "float32"):
        raise SystemExit(f"precision '{config['precision']}': normsim.torch runs float64 or float32")
    final_norm = getattr(module, "final_norm", None)
    blocks = module.blocks(config)
    if isinstance(blocks, dict):  # several configurations: one claim config reads back one only
        raise SystemExit(f"blocks(config) returned a dict ({', '.join(map(str, blocks))}): a [torch] claim measures "
                         "one stack per config; return one factory or list, and sweep a key in the claim instead")
    return bridge.measure(blocks, (config["tokens"], config["width"]), depth=config["depth"],
                          loss=config["loss"], samples=config["samples"], seed=config["seed"],
                          dtype=config["precision"], final_norm=final_norm(config) if final_norm else None,
                          name=config["placement"], progress=False)


def main(argv):
    if len(argv) != 3:
        raise SystemExit("usage: python3 -m normsim._claim_block REQUEST OUT")
    with open(argv[1]) as f:
        request = json.load(f)
    try:
        for package in ("torch", "numpy", "pandas"):
            require(package, f"the claim on the PyTorch block {request['file']}")
    except MissingPackageError as e:
        raise SystemExit(str(e))
    module = load(request["file"])
    for c, config in enumerate(request["configs"]):
        measure(module, config["values"]).save(os.path.join(argv[2], str(c)))


if __name__ == "__main__":
    main(sys.argv)
