#!/usr/bin/env bash
# Installs everything normsim needs to build, test and plot on Debian 12, then builds it and makes
# `import normsim` work for Debian's python3 (a .pth file pointing at build/python).
# Usage: bash scripts/setup.sh [--bench] [--no-build]
#   --bench     accepted for older instructions (OpenBLAS is now always installed)
#   --no-build  install packages only
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
for a in "$@"; do
  case "$a" in
    --bench) ;;  # OpenBLAS is installed by default now
    --no-build) build=0 ;;
    *) echo "setup.sh: unknown option '$a'" >&2; exit 2 ;;
  esac
done
pkgs=(cmake make g++ git pkg-config libeigen3-dev libboost-math-dev catch2 libcli11-dev librandom123-dev
      libtomlplusplus-dev nlohmann-json3-dev gnuplot-nox libopenmpi-dev openmpi-bin clang-format
      python3-dev pybind11-dev python3-numpy python3-pandas python3-matplotlib python3-torch python3-tqdm
      python3-xarray python3-venv python3-pip libopenblas0-openmp fonts-liberation2 poppler-utils ccache)
# fonts-liberation2: the figures' pinned font (Liberation Sans); poppler-utils: pdffonts and pdftotext, with
# which the plots tests read the font name and text size back from a drawn PDF.
# python3-torch serves normsim.torch and the benchmark's PyTorch reference; libopenblas0-openmp puts
# OpenBLAS behind libblas.so.3 for it (Debian's default reference BLAS made a W1-sized PyTorch pass take 45 s
# instead of 4.2 s, and would flatter normsim in the benchmark). The OpenMP build, not the pthreads one:
# it runs in torch's own OpenMP pool, where the pthreads build adds its own threads to torch's, so that
# torch.set_num_threads(2) oversubscribed the cores and the bridge's benchmark stack took 4.8 s instead of
# 1.4 s (docs/python.md, "BLAS"). python3-venv and python3-pip: `pip install .`
# into a venv (docs/python.md "Install", tests/python/test_install.py). ccache: scripts/test.sh compiles
# through it, so that the test of `pip install .` finds the Release build's objects in its cache.
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
  # import normsim for Debian's python3, wherever this checkout is (docs/python.md).
  site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  SUDO=""; [[ $(id -u) != 0 ]] && SUDO="sudo"
  $SUDO mkdir -p "$site"
  echo "$(pwd)/build/python" | $SUDO tee "$site/normsim.pth" >/dev/null
fi
