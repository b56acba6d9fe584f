#!/usr/bin/env bash
# `normsim run` under mpirun with two ranks, compared with one process on the same grid.
#   same:   the two ranks write summary.csv, layers.csv and nonfinite.csv byte-equal to one process's, and
#           a second run into the same folder fails once, with exit status 2.
#   killed: rank 1 is killed after 2 units (NORMSIM_TEST_ABORT_AFTER_UNITS); --resume, under mpirun and in
#           one process, completes the run to the same files without redoing any saved unit.
#   failed: rank 1 fails after 2 units (NORMSIM_TEST_THROW_AFTER_UNITS); rank 0 says so once, with the
#           units that are missing, and --resume completes the run to the same files.
# Usage: mpi_run_test.sh NORMSIM MPIEXEC same|killed|failed
set -euo pipefail
normsim=$1 mpiexec=$2 mode=$3

work=$(mktemp -d "${TMPDIR:-/tmp}/normsim-mpi-$mode.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.err; do [[ -s $f ]] && { echo "--- $f" >&2; cat "$f" >&2; }; done
  exit 1
}

# Two ranks on whatever cores there are (oversubscribed, unbound), over shared memory. Open MPI reads these
# settings from the environment (other MPIs ignore them) and refuses root unless told twice.
mpi=("$mpiexec" -np 2)
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMP_NUM_THREADS=1
# Under AddressSanitizer (CI's second pass), leak checking is off for the ranks: Open MPI's plugins are
# unloaded at MPI_Finalize and what they still hold shows up as leaks of unknown modules that no
# suppression can name. Everything else ASan and UBSan check stays on; the single-process runs keep it all.
mpi=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "${mpi[@]}")

# 24 configs x 4 samples in units of 2: 48 units, mlp, attention and transformer stacks, some of them
# overflowing (placement none, init_gain 1e12) so that nonfinite.csv has rows.
cat >grid.toml <<'TOML'
sublayer = ["mlp", "attention", "transformer"]
placement = ["post", "none"]
init_gain = [1.0, 1e12]
depth = [2, 4]
width = 8
tokens = 4
heads = 2
samples = 4
seed = 11
TOML
run=(run grid.toml --unit-samples 2 --no-plots --quiet)

"$normsim" "${run[@]}" --out one 2>one.err || fail "the single-process run failed"
[[ $(wc -l <one/nonfinite.csv) -gt 1 ]] || fail "the grid was meant to produce NaN or Inf somewhere"
: >one.err  # its warnings about those

same_files() {  # same_files DIR: DIR's result files equal the single-process run's, byte for byte
  for f in summary.csv layers.csv nonfinite.csv; do
    cmp "one/$f" "$1/$f" || fail "$1/$f differs from the single-process run's"
  done
  [[ ! -e "$1/parts" ]] || fail "$1/parts is left after the run finished (its checkpoint has served)"
}

case $mode in
  same)
    "${mpi[@]}" "$normsim" "${run[@]}" --out two 2>two.err || fail "the run under mpirun failed"
    same_files two
    grep -q '"ranks": 2' two/run.json || fail "run.json does not record the two ranks"
    grep -q '"timings"' two/run.json || fail "run.json lost its timings"
    # The device that ran the numbers (the CPU's description here), named as a single-process run does:
    # run.json's first "device" is the top-level one, before the per-rank list.
    device=$(grep -m1 '"device":' two/run.json)
    [[ $device == *'"device": "'?* && $device != *'"device": ""'* ]] ||
      fail "run.json under mpirun names no device ($device)"
    # A second run into the occupied folder: a usage error (status 2), said once, not once per rank.
    status=0
    "${mpi[@]}" "$normsim" "${run[@]}" --out two 2>again.err || status=$?
    [[ $status == 2 ]] || fail "a run into an occupied folder exited $status, expected 2"
    [[ $(grep -c "is not empty" again.err) == 1 ]] || fail "the usage error was not reported exactly once"
    : >again.err
    # A config error (parsed by every rank before MPI starts) is also said once, with exit status 2.
    status=0
    "${mpi[@]}" "$normsim" "${run[@]}" --set width=-1 --out three 2>bad.err || status=$?
    [[ $status == 2 ]] || fail "a bad config under mpirun exited $status, expected 2"
    [[ $(grep -c "key 'width'" bad.err) == 1 ]] || fail "the config error was not reported exactly once"
    : >bad.err
    ;;
  killed)
    status=0
    NORMSIM_TEST_ABORT_AFTER_UNITS=2 "${mpi[@]}" "$normsim" "${run[@]}" --out cut 2>cut.err || status=$?
    [[ $status != 0 ]] || fail "the run with a killed rank exited 0"
    : >cut.err  # mpirun's report of the killed rank is expected
    [[ ! -e cut/run.json ]] || fail "a run with a dead rank wrote run.json"
    saved=$(ls cut/parts | grep -c '\.part$' || true)
    ((saved >= 2 && saved < 48)) || fail "expected some but not all units saved, found $saved"
    cp -a cut cut1
    # The checkpoint records the ranks' backend; a resume on another is refused (status 2), naming it.
    grep -q '"backend": "cpu"' cut/parts/grid.json || fail "the checkpoint does not record the ranks' backend"
    if "$normsim" --version | grep -q "Reference device: yes"; then
      status=0
      "$normsim" "${run[@]}" --backend reference --out cut1 --resume 2>other.err || status=$?
      [[ $status == 2 ]] || fail "a resume on another backend exited $status, expected 2"
      grep -q "it was run on the cpu backend" other.err || fail "the refusal does not name the run's backend"
      : >other.err
    fi

    "${mpi[@]}" "$normsim" run grid.toml --unit-samples 2 --no-plots --verbose --out cut --resume 2>resume.err ||
      fail "--resume under mpirun failed"
    grep -q "resuming cut: $saved of 48 units done, missing: cfg-" resume.err ||
      fail "rank 0 did not report the missing units"
    same_files cut
    # Nothing finished is redone: the ranks are given exactly the 48 - saved missing units (--verbose's
    # "rank R: N units" lines), and the finished run's checkpoint is gone.
    scheduled=$(sed -n 's/.*rank [0-9]*: \([0-9]*\) units,.*/\1/p' resume.err | awk '{ s += $1 } END { print s + 0 }')
    [[ $scheduled == $((48 - saved)) ]] || fail "--resume scheduled $scheduled units, expected $((48 - saved))"
    : >resume.err  # --verbose's lines

    "$normsim" "${run[@]}" --out cut1 --resume 2>resume1.err || fail "--resume in one process failed"
    same_files cut1
    : >resume.err
    ;;
  failed)
    status=0
    NORMSIM_TEST_THROW_AFTER_UNITS=2 "${mpi[@]}" "$normsim" "${run[@]}" --out cut 2>cut.err || status=$?
    [[ $status == 1 ]] || fail "the run with a failing rank exited $status, expected 1"
    [[ ! -e cut/run.json ]] || fail "a run with a failed rank wrote run.json"
    [[ $(grep -c "normsim run: error: rank 1 on .*: NORMSIM_TEST_THROW_AFTER_UNITS" cut.err) == 1 ]] ||
      fail "the failure of rank 1 was not reported exactly once"
    saved=$(ls cut/parts | grep -c '\.part$' || true)
    grep -q "^normsim run: $((48 - saved)) of 48 units are missing (cfg-.*--resume" cut.err ||
      fail "rank 0 did not report the $((48 - saved)) missing units"
    : >cut.err
    "${mpi[@]}" "$normsim" "${run[@]}" --out cut --resume 2>resume.err || fail "--resume under mpirun failed"
    same_files cut
    : >resume.err
    ;;
  *) fail "unknown mode '$mode'" ;;
esac
echo "ok: $mode"
