#!/usr/bin/env bash
# Regenerates the figure gallery, docs/figures/gallery/ and its index docs/figures/gallery.md: one example of
# every figure kind from the shipped experiments (quickstart, the twelve-placement zoo, the Xiong et al. depth
# sweep), drawn by `normsim plot` exactly as a user gets them, and the design families' figures
# (scripts/family_figures.sh, docs/figures/families/). Usage: bash scripts/gallery.sh  (after a build)
# Look at every image before committing it (docs/figures.md, "Style").
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/gallery
gallery=docs/figures/gallery
rm -rf "$out" "$gallery"
mkdir -p "$out" "$gallery"

bash scripts/family_figures.sh

run() {  # run NAME CONFIG PLOT-OPTIONS...: simulate without figures, then draw the ones asked for
  local name=$1 config=$2
  shift 2
  build/normsim run "$config" --out "$out/$name" --quiet --no-plots
  build/normsim plot "$out/$name" --format png,pdf --no-report --quiet "$@"
}
run quickstart experiments/quickstart.toml
run zoo experiments/placements_zoo.toml --metric act_sq,grad_sq,gradw_w2,cos_next
run xiong experiments/xiong_depth.toml --metric gradw_w2
mkdir -p "$out/zoo-wide" && cp "$out"/zoo/{run.json,summary.csv,theory.csv} "$out/zoo-wide/"
build/normsim plot "$out/zoo-wide" --format png --no-report --quiet --size two-column --metric act_sq

# gallery file name | source figure | caption
entries=(
  "profile_act_sq.png|quickstart/figures/profile_act_sq_depth-16.png|Per-layer profile, two placements: mean and standard-error band, mean-field theory thin and grey behind the data, legend beside the plot (experiments/quickstart.toml, depth 16)."
  "gradients.png|quickstart/figures/gradients_depth-16.png|Gradient norms across layers, stacked panels at one-column width, each on the log axis its metric prescribes."
  "heatmap_grad_sq.png|quickstart/figures/heatmap_grad_sq_placement-pre.png|Layer x depth heatmap of the hidden-state gradient, Pre-LN: viridis, log colour scale, labelled colorbar."
  "depth_gradw_w2_last.png|xiong/figures/depth_gradw_w2_last.png|Depth scaling of the last layer's W2 gradient (Xiong et al. 2020, Thm 1) with least-squares power laws and their 95% CIs (experiments/xiong_depth.toml)."
  "zoo_profile_act_sq.png|zoo/figures/profile_act_sq.png|Twelve placements as small multiples: one facet per placement family, one shared y range, every line named at its end (experiments/placements_zoo.toml)."
  "zoo_profile_grad_sq.png|zoo/figures/profile_grad_sq.png|The same for the hidden-state gradient: no norm in the stack spans nine decades, the families with a norm stay within one."
  "zoo_profile_cos_next.png|zoo/figures/profile_cos_next.png|A bounded metric (cosine between consecutive sublayers) on a linear axis, at every depth and in every facet."
  "zoo_gradients_stream-norm.png|zoo/figures/gradients_stream-norm.png|A gradients figure of more than six lines becomes one figure per family: here the placements that normalize the stream."
  "zoo_profile_act_sq_two-column.png|zoo-wide/figures/profile_act_sq.png|Two-column size (7 in wide): the facets sit two abreast."
)
{
  echo "# Figure gallery"
  echo
  echo "One example of every figure kind, drawn by \`normsim plot\` from the shipped experiments. Regenerate with"
  echo "\`bash scripts/gallery.sh\` (after a build); docs/figures.md says what each kind shows and why it looks so."
  echo "Each PNG is the figure's PDF rasterized at 300 dpi (same text, lines and markers)."
  echo
  for entry in "${entries[@]}"; do
    IFS='|' read -r file source caption <<<"$entry"
    cp "$out/$source" "$gallery/$file"
    echo "## ${file%.png}"
    echo
    echo "![${file%.png}](gallery/$file)"
    echo
    echo "$caption"
    echo
  done
  echo "## Design families"
  echo
  echo "One figure per family and metric (experiments/families/*.toml, \`bash scripts/family_figures.sh\`): every"
  echo "variant a line with its depth growth fitted, over its mean field, or marked \"no mean field\" where normsim"
  echo "has none; docs/placements.md, \"Design families\", reads them."
  echo
  for config in experiments/families/*.toml; do
    family=$(basename "$config" .toml)
    echo "### $family: $(sed -n 's/^description = "\(.*\)"$/\1/p' "$config")"
    echo
    for metric in $(sed -n 's/^metrics = \[\(.*\)\]$/\1/p' "$config" | tr -d '",'); do
      echo "![${family} ${metric}](families/${family}_${metric}.png)"
    done
    echo
  done
} >docs/figures/gallery.md
echo "docs/figures/gallery/: ${#entries[@]} figures from $out; index in docs/figures/gallery.md"
