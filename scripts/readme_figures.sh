#!/usr/bin/env bash
# Regenerates the figures the README and docs show: runs `normsim check` on the default claims and copies
# every claim figure (PNG) and the report into docs/figures/.
# Usage: bash scripts/readme_figures.sh  (after a build)
set -euo pipefail
cd "$(dirname "$0")/.."
build/normsim check --out out/check --quiet --force || true   # a refuted literature claim is a finding, not an error
mkdir -p docs/figures
# Every claim's figure, beside the report, whose links are made relative to docs/figures/ (README.md and
# docs/claims.md link some of the same files).
cp out/check/figures/claim_*.png docs/figures/
sed 's|](figures/|](|g' out/check/report.md > docs/figures/check_report.md
# The output change under a random update against depth, per placement (issue 12, docs/claims.md).
build/normsim run experiments/output_change_depth.toml --out out/output_change --force --backend cpu --quiet
build/normsim plot out/output_change --metric output_change --quiet
cp out/output_change/figures/depth_output_change_last.png docs/figures/output_change_depth.png
python3 scripts/claims_tables.py out/check/verdicts.json   # the tallies and tables of docs/claims.md and README.md
echo "docs/figures/: $(ls docs/figures | wc -l) files from out/check"
