# %% [markdown]
# # Coordinate checks from Python: muP in width, CompleteP in depth
# A Pre-LN MLP stack trained for 3 Adam steps on a fixed batch (`normsim.coord`, as
# experiments/coord_width.toml and coord_depth.toml do from the command line). The classic figures: the
# stream's mean |x| (averaged over layers and samples, with its standard error) against width or depth, a line
# per step. In width (microsoft/mup's coord check, its README l.180-185) SP's lines climb with width after the
# first step and muP's stay flat; in depth (EleutherAI/nanoGPT-mup's `completep` depth checks) no depth rule
# (`sp`) climbs with depth, depth-muP (branch x L^-1/2) and CompleteP (L^-1) stay flat. The printed table is
# `normsim coord`'s verdict per quantity: its fitted exponents at every step against the exponents the
# parametrization predicts (docs/theory_notes.md, "Coordinate checks"). This is the exported script of
# coord_checks.ipynb; the tests run it with plain python3 (MPLBACKEND=Agg), in about 10 s on 2 cores.

# %%
import matplotlib.pyplot as plt
import pandas as pd

import normsim

adam = {"sublayer": "mlp", "tokens": 16, "samples": 4, "seed": 1, "steps": 3, "update": "adam", "update_lr": 0.01,
        "metrics": ["act_mean_abs", "output_change", "rel_update"]}
checks = {"width": ([128, 256, 512, 1024], {"parametrization": ["sp", "mup"], "depth": 4, "base_width": 128}),
          "depth": ([4, 8, 16, 32, 64], {"parametrization": ["sp", "depth_mup", "completep"], "width": 128,
                                         "base_width": 128, "base_depth": 4})}
for key, (values, config) in checks.items():
    normsim.coord({**adam, **config}, {key: values}, out=f"coord_{key}", progress=False)
    print(pd.read_csv(f"coord_{key}/coord/verdicts.csv").iloc[:, 2:-1].to_string(index=False))
    lines = pd.read_csv(f"coord_{key}/coord/lines.csv").query("metric == 'act_mean_abs'")
    settings = config["parametrization"]
    fig, axes = plt.subplots(1, len(settings), sharey=True, figsize=(3.2 * len(settings), 3))
    for ax, name in zip(axes, settings):
        for step, line in lines[lines.setting == f"parametrization={name}"].groupby("step"):
            ax.errorbar(line[key], line["mean"], line["se"], marker="o", capsize=3, label=f"step {step}")
        ax.set(xscale="log", yscale="log", xlabel=key, title=name), ax.set_xticks(values, values)
        ax.xaxis.set_minor_locator(plt.NullLocator())
    axes[0].set_ylabel("mean |x| over layers"), axes[0].legend()
    fig.savefig(f"coord_{key}.png", dpi=200, bbox_inches="tight")
