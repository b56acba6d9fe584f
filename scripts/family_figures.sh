#!/usr/bin/env bash
# Regenerates the design-family figures, docs/figures/families/: for every experiments/families/FAMILY.toml
# (one line per `variants` entry, depths 4 to 64) one figure per metric of its `metrics` key against depth,
# act_sq and token_cos at the last layer, grad_sq and jac_sq at layer 0, each variant a line over its mean
# field (docs/placements.md "Design families").
# A new family is one more TOML file there, a new variant one more line in its file.
# Usage: bash scripts/family_figures.sh  (after a build; about a minute per family on 2 cores)
# Look at every image before committing it (docs/figures.md, "Style").
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/families
figures=docs/figures/families
rm -rf "$out" "$figures"
mkdir -p "$out" "$figures"

# The layer a metric is drawn at: the stream's second moment and the tokens' cosine at the output end, the
# gradient and the input-to-output Jacobian (APJN) at the input end, where depth acts on them.
end_of() {
  case "$1" in
    act_sq | token_cos) echo last ;;
    grad_sq | jac_sq) echo first ;;
    *) echo "family_figures.sh: no layer chosen for metric '$1'" >&2 && exit 2 ;;
  esac
}
for config in experiments/families/*.toml; do
  family=$(basename "$config" .toml)
  metrics=$(sed -n 's/^metrics = \[\(.*\)\]$/\1/p' "$config" | tr -d ' "')
  build/normsim run "$config" --out "$out/$family" --quiet --no-plots
  build/normsim plot "$out/$family" --metric "$metrics" --depth-at-first-layer --format png,pdf --no-report --quiet
  for metric in ${metrics//,/ }; do
    cp "$out/$family/figures/depth_${metric}_$(end_of "$metric").png" "$figures/${family}_$metric.png"
  done
done
echo "$figures/: $(ls "$figures" | wc -l) figures from $out"
