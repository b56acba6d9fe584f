// `normsim run` under mpirun or srun with several ranks: the grid's unfinished units are shared among the
// ranks, each finished unit is saved to OUT/parts/ by the rank that ran it, and rank 0 gathers the records
// and writes exactly the files a single process would (docs/mpi.md).
#pragma once
#include <ostream>
#include <string>

#include "sim/run/config_file.hpp"
#include "sim/run/sweep.hpp"
#include "vocab/enums.hpp"

namespace normsim::mpi {

struct RankOutcome {
  bool root = false;        // rank 0: `report` is the whole sweep's; the CLI goes on (summary, figures)
  sim::SweepReport report;  // rank 0 only
  sim::PreparedOut out;     // rank 0: OUT stays locked while the CLI writes theory.csv and the figures
};

// Initializes MPI, runs the sweep on every rank of MPI_COMM_WORLD, finalizes MPI; once per process.
// `backend` is make_backend's name; each rank binds one GPU first (mpi/launch.hpp).
// Failures: rank 0 throws what the single-process CLI would meet: the exception itself when it arose on
// rank 0 before any unit ran (sim::SweepError for OUT, sim::BackendUnavailable), otherwise an exception of
// the same kind whose message names the failing rank and host and the units that are now missing. The
// other ranks never throw and should exit 0 whatever happened: the job's exit status is rank 0's, and a
// rank exiting non-zero would make the launcher end the job before rank 0 has said why. A rank that dies
// outright (a crash, a node lost) ends the whole job through the MPI launcher; every unit finished by then
// is in OUT/parts/, and --resume lists the missing units and runs only those.
// Test hooks: after saving n units, NORMSIM_TEST_ABORT_AFTER_UNITS=n makes rank 1 kill itself (SIGKILL),
// NORMSIM_TEST_THROW_AFTER_UNITS=n makes it fail with an exception.
RankOutcome run_distributed(const sim::Grid& grid, vocab::BackendChoice backend, sim::SweepOptions options,
                            std::ostream& err);

}  // namespace normsim::mpi
