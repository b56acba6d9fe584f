#!/usr/bin/env bash
# Installs what normsim needs (Debian packages), builds it, and runs the whole test suite.
# This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --no-build
# Through ccache, with paths below the checkout hashed as relative ones: the test of `pip install .`
# (tests/python/test_install.py) builds the extension again in build-pip/, beside build/ at the same depth,
# inherits these variables, and so reuses this build's objects instead of compiling them a second time
# (338 CPU-s of the CI's 2 cores), nvcc's GPU ops included. A cold cache costs the first build nothing
# noticeable.
export CCACHE_BASEDIR="$PWD" CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
