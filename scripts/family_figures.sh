#!/usr/bin/env bash
# Regenerates the design-family figures, docs/figures/families/: for every experiments/families/FAMILY.toml
# (one line per `variants` entry, depths 4 to 64) the figures of act_sq at the last layer, grad_sq and jac_sq
# at layer 0 against depth, each variant a line over its mean field (docs/placements.md "Design families").
# A new family is one more TOML file there, a new variant one more line in its file.
# Usage: bash scripts/family_figures.sh  (after a build; about a minute per family on 2 cores)
# Look at every image before committing it (docs/figures.md, "Style").
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/families
figures=docs/figures/families
rm -rf "$out" "$figures"
mkdir -p "$out" "$figures"

# figure in the gallery | figure `normsim plot` draws: the stream's second moment at the output end, the
# gradient and the input-to-output Jacobian (APJN) at the input end, where depth acts on them.
picks=("act_sq|depth_act_sq_last" "grad_sq|depth_grad_sq_first" "jac_sq|depth_jac_sq_first")
for config in experiments/families/*.toml; do
  family=$(basename "$config" .toml)
  build/normsim run "$config" --out "$out/$family" --quiet --no-plots
  build/normsim plot "$out/$family" --metric act_sq,grad_sq,jac_sq --depth-at-first-layer --format png,pdf \
    --no-report --quiet
  for pick in "${picks[@]}"; do
    IFS='|' read -r metric source <<<"$pick"
    cp "$out/$family/figures/$source.png" "$figures/${family}_$metric.png"
  done
done
echo "$figures/: $(ls "$figures" | wc -l) figures from $out"
