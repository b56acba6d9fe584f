#!/usr/bin/env bash
# Everything about the CUDA backend that needs a GPU, on a bare GPU machine (nvcc, cmake, g++ and a Python
# with torch; no Eigen, Boost or other headers, no network), in one budget (docs/gpu.md "Device steps"):
#   bash scripts/gpu_validate.sh --fetch-deps    on the development machine (Debian, network): the header
#                                                packages the build needs, into .gpu-deps/ (~12 MB, ignored
#                                                by git); take the checkout with it to the GPU machine
#   bash scripts/gpu_validate.sh --cpu-reference on the development machine, after a Release build in build/
#                                                (BUILD_DIR): the claims' verdicts on the CPU backend, into
#                                                .gpu-deps/cpu-check/ with a digest of the code; the device's
#                                                `check` step then compares with them instead of spending ~100 s
#                                                of device time recomputing them (it does when the digest differs)
#   bash scripts/gpu_validate.sh [STEP...]       on the GPU machine, from the checkout: every step (or those
#                                                named) within GPU_BUDGET seconds (default 480)
# Steps, in order (each under its own limit inside the budget; one skipped when too little is left):
#   build      Release, CUDA for this device's architecture; normsim, test_gpu, the benchmark and, when the
#              Python has pybind11 and its headers, the Python module (GPU_TARGETS="..." builds only the
#              targets named). Headers from /usr or .gpu-deps/.
#   tests      test_cuda_libraries (cuBLAS and cuSOLVER open on first use), then test_gpu: every kernel
#              against its CPU twin, the backend against the CPU backend
#   check      `normsim check` on the CPU backend and on the GPU; scripts/compare_verdicts.py compares them
#   bench      bench/gpu_bench.cpp: W1, W2, W2bf16 and W2tf32 against cuBLAS and PyTorch eager in the same run
#   quickbench bench/gpu_bench.cpp's `quick`: W1, W2bf16 and W2tf32 only, the workloads issue 29's speed
#              targets are judged on (not in the default list; `bash scripts/gpu_validate.sh build quickbench`
#              is a short device check, about 2.5 minutes on an H200 with 16 cores)
#   variants   bench/gpu_bench.cpp's --variants on W1 and W2bf16: each variant of gpu/tuning.hpp against the
#              defaults, rounds interleaved (not in the default list; `bash scripts/gpu_validate.sh build
#              tests variants`)
#   wholeproc  issue 31's CPU figure on this machine: `normsim run bench/w1.toml --backend cpu` as a whole
#              process (weights kept, then redrawn), 3 runs each, against the in-process W1 of
#              normsim_cpu_w1_bench, 2 threads, with the page faults and the machine's THP setting (not in
#              the default list; needs normsim_cpu_w1_bench among the built targets)
#   sweep      issue 29's sweep target: bench/w1_sweep.toml (48 configurations) as a whole process on the
#              CUDA backend and on the CPU backend on all cores, and their ratio (not in the default list)
#   memcheck   compute-sanitizer memcheck on the kernel tests and the Gram norms
#   wide16     width 16384 x depth 1000 x 16 tokens end to end: wall time, peak memory
#   racecheck initcheck   compute-sanitizer on the kernel tests
#   bmemcheck  memcheck on the backend tests
#   wide256    width 16384 x depth 1000 x 256 tokens (activations checkpointed)
# Each step writes docs/gpu_validation/STEP.log, STEP.rc (exit status; 124 = stopped at its limit) and
# STEP.commit (the code it ran: NORMSIM_COMMIT, else the checkout's HEAD), so a summary that keeps an earlier
# run's step says whose it is;
# docs/gpu_validation.md is rewritten after every step from all logs present (NORMSIM_COMMIT names the
# code where the copy's git is not the checkout's). Exits 1 when a step failed.
set -u
T0=${T0:-$(date +%s)}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 2
deps_dir="$here/.gpu-deps"
packages=(libboost1.74-dev libboost-math1.74-dev libtomlplusplus-dev libtomlplusplus3 catch2 libeigen3-dev
  librandom123-dev nlohmann-json3-dev libcli11-dev pkgconf pkgconf-bin libpkgconf3)

# What the claims' verdicts depend on: every tracked or untracked, not ignored file outside docs/ and scripts/,
# by content.
code_digest() {
  git ls-files -co --exclude-standard -- . ':!docs' ':!scripts' ':!.gpu-deps' | LC_ALL=C sort | xargs -d '\n' sha256sum |
    sha256sum | cut -c1-16
}

# The non-PyTorch claims' ids (ids) and the PyTorch claims' (torch_ids).
claim_ids() {
  local f
  ids=() torch_ids=()
  for f in experiments/claims/*.toml; do
    if grep -q '^\[torch\]' "$f"; then torch_ids+=("$(basename "$f" .toml)"); else ids+=("$(basename "$f" .toml)"); fi
  done
}

if [ "${1:-}" = --cpu-reference ]; then
  exe=${BUILD_DIR:-build}/normsim ref="$deps_dir/cpu-check"
  [ -x "$exe" ] || { echo "no $exe: build normsim (Release) first, or set BUILD_DIR"; exit 2; }
  claim_ids
  rm -rf "$ref" && mkdir -p "$deps_dir" || exit 2
  "$exe" check --force --backend cpu --no-plots --quiet --out "$ref" "${ids[@]}" || exit 1
  # Only what the comparison reads travels to the device (the per-claim tables are ~60 MB).
  find "$ref" -mindepth 1 -maxdepth 1 ! -name verdicts.json ! -name report.md -exec rm -rf {} +
  code_digest >"$ref/code_digest"
  echo "CPU verdicts of ${#ids[@]} claims in $ref (code $(cat "$ref/code_digest"))"
  exit 0
fi

if [ "${1:-}" = --fetch-deps ]; then
  mkdir -p "$deps_dir" && cd "$deps_dir" || exit 2
  apt-get download "${packages[@]}" 2>&1 | grep -v 'Download is performed unsandboxed' || true
  n=$(ls -1 ./*.deb 2>/dev/null | wc -l)
  echo "$n packages in $deps_dir"
  [ "$n" -ge ${#packages[@]} ] || exit 1
  exit 0
fi

BUDGET=${BUDGET:-${GPU_BUDGET:-480}}
build=${build:-${BUILD_DIR:-/tmp/normsim-build-gpu}}
logs="$here/docs/gpu_validation"
summary="$here/docs/gpu_validation.md"
all=(build tests check bench memcheck wide16 racecheck initcheck bmemcheck wide256)
reported=("${all[@]}" quickbench variants wholeproc sweep)  # the summary's steps: the default list and those run only when named
declare -A limit=([build]=180 [tests]=150 [check]=150 [bench]=150 [quickbench]=120 [variants]=150 [wholeproc]=90 [sweep]=120 [memcheck]=90 [wide16]=150 [racecheck]=60
  [initcheck]=60 [bmemcheck]=240 [wide256]=300)
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$logs"
left() { echo $((BUDGET - ($(date +%s) - T0))); }

# The header-only packages (and toml++'s library) of .gpu-deps/, unpacked under the build folder (never into
# /) and searched first; without .gpu-deps/, what /usr has must do.
unpack_deps() {
  if ! ls "$deps_dir"/*.deb >/dev/null 2>&1; then
    [ -f /usr/include/eigen3/Eigen/Dense ] && return 0
    echo "no Eigen in /usr and no .gpu-deps/: run 'bash scripts/gpu_validate.sh --fetch-deps' first"
    return 3
  fi
  local prefix="$build/deps"
  mkdir -p "$prefix"
  for f in "$deps_dir"/*.deb; do dpkg -x "$f" "$prefix" || return 3; done
  sed -i "s|^prefix=/usr\$|prefix=$prefix/usr|" "$prefix"/usr/lib/x86_64-linux-gnu/pkgconfig/tomlplusplus.pc
  export CMAKE_PREFIX_PATH="$prefix/usr" PKG_CONFIG_PATH="$prefix/usr/lib/x86_64-linux-gnu/pkgconfig"
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  command -v pkg-config >/dev/null || export PATH="$PATH:$prefix/usr/bin"
}

do_build() {
  local cap py=() gen=()
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  command -v ninja >/dev/null && gen=(-G Ninja)
  # The Python that has torch (first on PATH), with pybind11 from pip when Debian's is absent.
  if python3 -c 'import pybind11' 2>/dev/null; then
    py=(-DPython_EXECUTABLE="$(command -v python3)" -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)")
  fi
  cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DNORMSIM_MPI=OFF -DNORMSIM_CUDA_MOCK=OFF -DNORMSIM_WERROR=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="$cap" "${py[@]}" || return $?
  local targets=(normsim test_gpu test_cuda_libraries normsim_gpu_bench normsim_cpu_w1_bench)
  cmake --build "$build" --target help | grep -q normsim_python && targets+=(normsim_python)
  # GPU_TARGETS: only these (a short check: "test_gpu test_cuda_libraries normsim_gpu_bench" for
  # `tests quickbench`).
  [ -n "${GPU_TARGETS:-}" ] && read -r -a targets <<<"$GPU_TARGETS"
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" || return $?
  echo "compiler warnings (not errors on this foreign compiler): $(grep -c 'warning:' "$logs/build.log")"
}

# Issue 31: W1 as a user runs it against the benchmark's in-process figure, on a machine other than the
# development VM (whose first-touch page faults cost more than the run: docs/benchmarks.md).
whole_process() {
  echo "machine: $(nproc) cores; THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null);" \
    "$(grep -c hypervisor /proc/cpuinfo | sed 's/^0$/no hypervisor flag/;s/^[1-9].*/a hypervisor flag (a VM)/')"
  local i set
  for set in 'recompute="false"' 'recompute="true"'; do
    for i in 1 2 3; do
      /usr/bin/time -f "whole process W1 ($set): %e s wall, %U s user, %S s system, %R page faults" \
        "$build/normsim" run bench/w1.toml --backend cpu --threads 2 --set "$set" --quiet --no-plots --force \
        --out /tmp/normsim-w1 || return 1
    done
  done
  "$build/bench/normsim_cpu_w1_bench" --w1-only --no-torch --repeat 3 --threads 2
}

# Issue 29 item 3: the W1 sweep on the device against the CPU backend on every core, whole processes.
sweep_ratio() {
  local b t=()
  for b in cuda cpu; do
    rm -rf "/tmp/normsim-sweep-$b"
    local t0 t1
    t0=$(date +%s.%N)
    "$build/normsim" run bench/w1_sweep.toml --backend "$b" --no-plots --quiet --out "/tmp/normsim-sweep-$b" ||
      return 1
    t1=$(date +%s.%N)
    t+=("$(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }")")
    echo "W1 sweep (48 configurations), $b backend ($(nproc) cores for cpu): ${t[-1]} s whole process"
  done
  echo "W1 sweep: the CUDA backend $(awk "BEGIN { printf \"%.2f\", ${t[1]} / ${t[0]} }")x the CPU backend (target 10x)"
}

sanitize() {  # sanitize TOOL TEST-SPEC...: compute-sanitizer TOOL on test_gpu's matching cases
  local tool=$1
  shift
  compute-sanitizer --tool "$tool" --error-exitcode 1 "$build/tests/gpu/test_gpu" "$@"
}

# The simulator's claims on the CPU backend and on the GPU, compared claim by claim; the PyTorch claims
# (measured by the bridge whatever the backend) once, when this build has the Python module.
do_check() {
  local out=/tmp/normsim-gpu-check ids=() torch_ids=() rc=0 cpu ref="$deps_dir/cpu-check"
  rm -rf "$out"
  claim_ids
  if [ -f "$ref/verdicts.json" ] && [ "$(cat "$ref/code_digest" 2>/dev/null)" = "$(code_digest)" ]; then
    cpu=$ref/verdicts.json
    echo "cpu verdicts: the development machine's ($ref, code $(cat "$ref/code_digest"), the same as here)"
  else
    "$build/normsim" check --force --backend cpu --no-plots --quiet --out "$out/cpu" "${ids[@]}"
    echo "cpu check exit $? ($(($(date +%s) - T0)) s into the validation; no reference of this code in $ref)"
    cpu=$out/cpu/verdicts.json
  fi
  "$build/normsim" check --force --backend auto --no-plots --out "$out/gpu" "${ids[@]}"
  echo "gpu check exit $?"
  grep -A4 '^Measured by' "$out/gpu/report.md"
  python3 scripts/compare_verdicts.py "$cpu" "$out/gpu/verdicts.json" || rc=1
  if ls "$build"/python/normsim/_core*.so >/dev/null 2>&1; then
    "$build/normsim" check --force --no-plots --out "$out/torch" "${torch_ids[@]}"
    echo "torch claims exit $?"
  else
    echo "torch claims not run: no Python module in this build (${torch_ids[*]})"
  fi
  return $rc
}

run_step() {
  case $1 in
    build) do_build ;;
    tests) "$build/tests/gpu/test_cuda_libraries" && "$build/tests/gpu/test_gpu" --durations no ;;
    check) do_check ;;
    bench) "$build/bench/normsim_gpu_bench" all ;;
    quickbench) "$build/bench/normsim_gpu_bench" quick ;;
    variants) "$build/bench/normsim_gpu_bench" w1 w2bf16 --variants ;;
    wholeproc) whole_process ;;
    sweep) sweep_ratio ;;
    memcheck) sanitize memcheck "[kernel],[twin]" ;;
    racecheck | initcheck) sanitize "$1" "[kernel]" ;;
    bmemcheck) sanitize memcheck "[backend]" ;;
    wide16) rm -rf /tmp/normsim-wide16 && /usr/bin/time -v "$build/normsim" run bench/wide_deep.toml \
      --backend cuda --no-plots --out /tmp/normsim-wide16 ;;
    wide256) "$build/normsim" run bench/wide_deep_256.toml --backend cuda --dry-run &&
      rm -rf /tmp/normsim-wide256 && /usr/bin/time -v "$build/normsim" run bench/wide_deep_256.toml \
        --backend cuda --no-plots --out /tmp/normsim-wide256 ;;
    *) echo "unknown step $1 (steps: ${all[*]})"; return 2 ;;
  esac
}

write_summary() {
  local s
  {
    echo "# GPU validation (scripts/gpu_validate.sh)"
    echo
    echo "Rewritten by scripts/gpu_validate.sh on $(date -u '+%Y-%m-%d %H:%M UTC'), commit" \
      "${code_commit}, budget ${BUDGET} s."
    echo
    echo '```'
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1
    nvcc --version 2>&1 | tail -n 1
    echo '```'
    echo
    echo "| step | exit status | seconds | code | log |"
    echo "|---|---|---|---|---|"
    for s in "${reported[@]}"; do
      [ -f "$logs/$s.rc" ] && echo "| $s | $(cat "$logs/$s.rc") | $(cat "$logs/$s.seconds" 2>/dev/null) |" \
        "$(cat "$logs/$s.commit" 2>/dev/null || echo earlier) | gpu_validation/$s.log |"
    done
    echo
    echo "## Figures"
    echo '```'
    for s in "${reported[@]}"; do
      [ -f "$logs/$s.log" ] || continue
      grep -hE 'test cases|assertions| variant |whole process|W1 normsim cpu|W1 sweep|^machine:|ERROR SUMMARY|GFLOP|TFLOP|compiler warnings|torch|SKIPPED|bit-identical|GPU plan|REFUSED|Elapsed \(wall|Maximum resident|verdicts|standard errors|differ|exit [0-9]|claims in|^- `|error' \
        "$logs/$s.log" | head -60 | sed "s/^/$s: /"
    done
    echo '```'
  } >"$summary"
}

if [ "${1:-}" = --one-step ]; then  # one step, run by the loop below under its limit
  run_step "$2"
  exit $?
fi

# The code this run validates: the summary's header and each step's STEP.commit.
code_commit=${NORMSIM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
unpack_deps >"$logs/deps.log" 2>&1 || { cat "$logs/deps.log" >&2; exit 3; }
export T0 BUDGET build CMAKE_PREFIX_PATH PKG_CONFIG_PATH LD_LIBRARY_PATH PATH
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=("${all[@]}")
failed=0
for s in "${steps[@]}"; do
  lim=${limit[$s]:-120}
  l=$(left)
  [ "$lim" -gt $((l - 5)) ] && lim=$((l - 5))
  if [ "$lim" -lt 20 ]; then
    echo "== $s skipped: ${l} s of the ${BUDGET} s budget left" >&2
    continue
  fi
  echo "== $s (limit ${lim} s, $(($(date +%s) - T0)) s in)" >&2
  t=$(date +%s)
  timeout -k 5 "$lim" bash "$0" --one-step "$s" >"$logs/$s.log" 2>&1
  rc=$?
  echo "$rc" >"$logs/$s.rc"
  echo "$(($(date +%s) - t))" >"$logs/$s.seconds"
  echo "$code_commit" >"$logs/$s.commit"
  echo "   exit $rc in $(cat "$logs/$s.seconds") s ($logs/$s.log)" >&2
  [ "$rc" = 0 ] || failed=1
  write_summary
  [ "$s" = build ] && [ "$rc" != 0 ] && { tail -40 "$logs/build.log" >&2; exit 1; }
done
echo "summary: $summary ($(($(date +%s) - T0)) s)" >&2
exit $failed
