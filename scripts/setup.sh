#!/usr/bin/env bash
# Installs everything normsim needs to build, test and plot on Debian 12, then builds it.
# Usage: bash scripts/setup.sh [--bench] [--no-build]
#   --bench     also install python3-torch (the benchmark's PyTorch reference)
#   --no-build  install packages only
set -euo pipefail
cd "$(dirname "$0")/.."
bench=0; build=1
for a in "$@"; do
  case "$a" in
    --bench) bench=1 ;;
    --no-build) build=0 ;;
    *) echo "setup.sh: unknown option '$a'" >&2; exit 2 ;;
  esac
done
pkgs=(cmake make g++ git pkg-config libeigen3-dev libboost-math-dev catch2 librandom123-dev
      libtomlplusplus-dev nlohmann-json3-dev gnuplot-nox libopenmpi-dev openmpi-bin clang-format
      fonts-liberation2 poppler-utils)
# fonts-liberation2: the figures' pinned font (Liberation Sans); poppler-utils: pdffonts and pdftotext, with
# which the plots tests read the font name and text size back from a drawn PDF.
# PyTorch for the benchmark's reference, with OpenBLAS behind libblas.so.3 (Debian's default is the
# unoptimized reference BLAS, which would flatter normsim).
[[ $bench == 1 ]] && pkgs+=(python3-torch python3-numpy libopenblas0-pthread)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) != 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [[ $build == 1 ]]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j"$(nproc)"
fi
