#!/usr/bin/env bash
# Everything about the CUDA backend that needs a GPU, on a machine with an NVIDIA GPU of compute capability
# >= 8.0 (docs/gpu.md "Device steps"):
#   bash scripts/gpu_validate.sh                 all steps, in order (about 30-45 min on an H100)
#   bash scripts/gpu_validate.sh STEP...         some of them (each fits a 10-minute slot), e.g. build tests
# Steps (each writes docs/gpu_validation/STEP.log and STEP.rc, its exit status):
#   build      Release build, CUDA on, sm_80 and sm_90 (BUILD_DIR, default build-gpu)
#   tests      test_gpu: every kernel against its CPU twin, the backend against the CPU backend
#   memcheck racecheck initcheck synccheck
#              compute-sanitizer on the kernel tests and on one backend test case ("ERROR SUMMARY: 0")
#   bench      bench/gpu_bench.cpp: W1 and W2 GFLOP/s, fraction of cuBLAS SGEMM and TF32 measured in the
#              same run, ratio to PyTorch eager (bench/gpu_torch.py, when python3 has CUDA torch)
#   wide16     width 16384 x depth 1000 x 16 tokens end to end (bench/wide_deep.toml): wall time, peak memory
#   wide256    width 16384 x depth 1000 x 256 tokens: the --dry-run plan, then the run (activations
#              checkpointed, bench/wide_deep_256.toml)
# After any step, docs/gpu_validation.md is rewritten from every log present: device, driver, date, each
# step's exit status and its figures. Exits 1 when a step run now failed. Commit the logs and the summary.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build-gpu}
logs="$here/docs/gpu_validation"
summary="$here/docs/gpu_validation.md"
all=(build tests memcheck racecheck initcheck synccheck bench wide16 wide256)
mkdir -p "$logs"
cd "$here" || exit 2

sanitize() {  # sanitize TOOL: compute-sanitizer TOOL on the kernel tests and one backend case
  local extra=()
  [ "$1" = memcheck ] && extra=(--leak-check full)
  compute-sanitizer --tool "$1" "${extra[@]}" --error-exitcode 1 "$build/tests/gpu/test_gpu" "[kernel]" &&
    compute-sanitizer --tool "$1" "${extra[@]}" --error-exitcode 1 "$build/tests/gpu/test_gpu" \
      "CUDA backend: recompute, batching and the mse loss do not change results"
}

run_step() {
  case $1 in
    build) cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DNORMSIM_MPI=OFF &&
      cmake --build "$build" -j"$(nproc)" ;;
    tests) ctest --test-dir "$build" -R '^test_gpu' --output-on-failure ;;
    memcheck | racecheck | initcheck | synccheck) sanitize "$1" ;;
    bench) "$build/bench/normsim_gpu_bench" all ;;
    wide16) rm -rf out/gpu_validate_wide16 &&
      /usr/bin/time -v "$build/normsim" run bench/wide_deep.toml --backend cuda --no-plots \
        --out out/gpu_validate_wide16 ;;
    wide256) "$build/normsim" run bench/wide_deep_256.toml --backend cuda --dry-run && rm -rf out/gpu_validate_wide256 &&
      /usr/bin/time -v "$build/normsim" run bench/wide_deep_256.toml --backend cuda --no-plots \
        --out out/gpu_validate_wide256 ;;
    *) echo "unknown step $1 (steps: ${all[*]})" ; return 2 ;;
  esac
}

write_summary() {
  {
    echo "# GPU validation (scripts/gpu_validate.sh)"
    echo
    echo "Rewritten by scripts/gpu_validate.sh on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)."
    echo
    echo '```'
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1
    nvcc --version 2>&1 | tail -n 2
    echo '```'
    echo
    echo "| step | exit status | log |"
    echo "|---|---|---|"
    for s in "${all[@]}"; do
      [ -f "$logs/$s.rc" ] && echo "| $s | $(cat "$logs/$s.rc") | gpu_validation/$s.log |"
    done
    echo
    echo "## Figures"
    echo '```'
    for s in "${all[@]}"; do
      [ -f "$logs/$s.log" ] || continue
      grep -hE 'tests passed|test cases|ERROR SUMMARY|GFLOP|torch|SKIPPED|bit-identical|GPU plan|REFUSED|Elapsed \(wall|Maximum resident|samples with NaN' "$logs/$s.log" | sed "s/^/$s: /"
    done
    echo '```'
  } >"$summary"
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=("${all[@]}")
failed=0
for s in "${steps[@]}"; do
  echo "== $s" >&2
  run_step "$s" >"$logs/$s.log" 2>&1
  rc=$?
  echo "$rc" >"$logs/$s.rc"
  echo "   exit $rc ($logs/$s.log)" >&2
  [ "$rc" = 0 ] || failed=1
  write_summary
done
echo "summary: $summary" >&2
exit $failed
