# %% [markdown]
# # Xiong et al. (2020) Theorem 1 in Pre-LN, from Python
# The README figure `claim_xiong_thm1_preln`: the last layer's W2 gradient norm against depth K, with the
# per-sample power-law exponent and its 95% interval, simulated by `normsim.run` with the claim's sweep
# (experiments/claims/xiong_thm1_preln.toml). This is the exported script of xiong_depth.ipynb; the tests run
# it with plain python3 (MPLBACKEND=Agg).

# %%
import matplotlib.pyplot as plt
import numpy as np

import normsim

r = normsim.run({"placement": "pre", "sublayer": "transformer", "init": "xavier", "mlp_ratio": 1.0,
                 "depth": [8, 16, 32, 64], "width": 64, "tokens": 8, "samples": 32})
K = r.configs.depth.to_numpy()
g = np.stack([r.array("gradw_w2")[c, :, k - 1] for c, k in enumerate(K)], axis=1)  # [sample, depth]
slopes = np.polyfit(np.log(K), np.log(g).T, 1)[0]  # one least-squares exponent per sample
half = 2.040 * slopes.std(ddof=1) / np.sqrt(len(slopes))  # 95% Student-t half-width, 31 degrees of freedom
print(f"exponent {slopes.mean():.3f} ± {half:.3f}")
plt.errorbar(K, g.mean(0), g.std(0, ddof=1) / np.sqrt(len(g)), marker="o", capsize=3, label="measured")
plt.plot(K, np.exp(np.log(g.mean(0)).mean()) * (K / np.exp(np.log(K).mean())) ** -0.5, "k:", label="predicted (−0.5)")
plt.xscale("log"), plt.yscale("log"), plt.xticks(K, K), plt.gca().xaxis.set_minor_locator(plt.NullLocator())
plt.gca().yaxis.set_minor_formatter("{x:g}")
plt.xlabel("depth K (sublayers)"), plt.ylabel("‖dL/dW2‖ of the last layer"), plt.legend()
plt.title(f"Pre-LN: exponent {slopes.mean():.3f} ± {half:.3f}")
plt.savefig("xiong_thm1_preln.png", dpi=200, bbox_inches="tight")
