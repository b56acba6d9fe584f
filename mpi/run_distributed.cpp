// The distributed sweep of mpi/run_distributed.hpp. Phases, each ending where every rank agrees on success:
// setup (rank 0 checks OUT, every rank starts its backend), plan (rank 0 prepares OUT and finds finished
// units, the plan is broadcast), run (each rank its share, saving every unit as it finishes), gather
// (every rank sends its units to rank 0, which writes the final files).
//
// Scheduling: static, greedy longest-processing-time by estimated cost (mpi/schedule.hpp), not handed out
// by rank 0 while running. Reasons: every rank computes, rank 0 included (a dispenser on rank 0 would have
// to answer requests between, or during, its own units, or idle a GPU); no message flows while units run,
// so a slow rank never holds up another's next unit, and a crash loses only the units in flight; and
// which rank ran which unit is a pure function of the grid, which makes runs and failures reproducible.
// The price is imbalance when the cost model misjudges a config; units of a few samples
// (--unit-samples) keep it small. Results do not depend on the schedule: each unit's records are a pure
// function of (config, samples), whatever rank or device ran them.
//
// MPI errors keep MPI's default handler (abort the job): a half-finished collective cannot be recovered
// from, and everything finished is already saved for --resume.
#include "mpi/run_distributed.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <set>
#include <thread>
#include <utility>

#include "io/atomic_file.hpp"
#include "mpi/launch.hpp"
#include "mpi/messages.hpp"
#include "mpi/schedule.hpp"
#include "sim/run/results.hpp"

namespace normsim::mpi {

namespace {

namespace fs = std::filesystem;

constexpr int kTagReport = 1, kTagUnit = 2;
// Messages travel in pieces of at most this many bytes (MPI counts are int).
constexpr std::uint64_t kChunkBytes = std::uint64_t{1} << 30;

class MpiSession {
 public:
  MpiSession() {
    int provided = 0;
    // Only the main thread calls MPI; the CPU backend's OpenMP threads never do.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession() { MPI_Finalize(); }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int n = 0;
  MPI_Get_processor_name(name, &n);
  return std::string(name, static_cast<std::size_t>(n));
}

// This rank's index among the ranks sharing its node.
int node_local_rank() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

// Waits for `request` while sleeping, where blocking MPI calls spin: a rank that is done waits for the
// others without taking a core from them (CPU ranks may share a node).
void wait_idle(MPI_Request& request) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void send_bytes(const std::string& bytes, int dest, int tag) {
  const std::uint64_t n = bytes.size();
  MPI_Send(&n, 1, MPI_UINT64_T, dest, tag, MPI_COMM_WORLD);
  for (std::uint64_t at = 0; at < n; at += kChunkBytes) {
    MPI_Request request;
    MPI_Isend(bytes.data() + at, static_cast<int>(std::min(kChunkBytes, n - at)), MPI_BYTE, dest, tag,
              MPI_COMM_WORLD, &request);
    wait_idle(request);
  }
}

std::string recv_bytes(int source, int tag) {
  std::uint64_t n = 0;
  MPI_Request request;
  MPI_Irecv(&n, 1, MPI_UINT64_T, source, tag, MPI_COMM_WORLD, &request);
  wait_idle(request);
  std::string bytes(n, '\0');
  for (std::uint64_t at = 0; at < n; at += kChunkBytes) {
    MPI_Irecv(bytes.data() + at, static_cast<int>(std::min(kChunkBytes, n - at)), MPI_BYTE, source, tag,
              MPI_COMM_WORLD, &request);
    wait_idle(request);
  }
  return bytes;
}

void bcast_string(std::string& s, int root) {
  std::uint64_t n = s.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
  s.resize(n);
  MPI_Bcast(s.data(), static_cast<int>(n), MPI_CHAR, root, MPI_COMM_WORLD);
}

// Every rank's backend name, as rank 0 sees them: the distinct names, sorted, joined by '+' (as run.json's
// backend); "" on the other ranks.
std::string gather_backend_names(const std::string& mine, int rank, int size) {
  constexpr int kWidth = 32;
  char own[kWidth] = {};
  mine.copy(own, kWidth - 1);
  std::vector<char> all(static_cast<std::size_t>(kWidth) * static_cast<std::size_t>(size));
  MPI_Gather(own, kWidth, MPI_CHAR, all.data(), kWidth, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) return "";
  std::set<std::string> names;
  for (int r = 0; r < size; ++r) names.insert(std::string(all.data() + std::size_t(r) * kWidth));
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : "+") + n;
  return joined;
}

void bcast_ints(std::vector<int>& v) {
  std::uint64_t n = v.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  v.resize(n);
  MPI_Bcast(v.data(), static_cast<int>(n), MPI_INT, 0, MPI_COMM_WORLD);
}

struct Failure {
  FailureKind kind = FailureKind::none;
  int rank = -1;
  std::string message;       // "rank R on HOST: what" once agreed on
  std::exception_ptr local;  // the exception itself, on the rank where it arose
  explicit operator bool() const { return kind != FailureKind::none; }
};

// Inside a catch block: the exception being handled, classified.
Failure capture(int rank, const std::string& host) {
  Failure f{FailureKind::runtime, rank, "", std::current_exception()};
  try {
    throw;
  } catch (const sim::SweepError& e) {
    f.kind = FailureKind::usage;
    f.message = e.what();
  } catch (const sim::BackendUnavailable& e) {
    f.kind = FailureKind::backend;
    f.message = e.what();
  } catch (const std::exception& e) {
    f.message = e.what();
  } catch (...) {
    f.message = "unknown error";
  }
  f.message = "rank " + std::to_string(rank) + " on " + host + ": " + f.message;
  return f;
}

// Collective: the failure of the lowest failing rank (or none), known to every rank.
Failure agree(const Failure& local, int rank, int size) {
  MPI_Request all_here;
  MPI_Ibarrier(MPI_COMM_WORLD, &all_here);
  wait_idle(all_here);
  const auto mine = static_cast<int>(local.kind);
  std::vector<int> kinds(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, 1, MPI_INT, kinds.data(), 1, MPI_INT, MPI_COMM_WORLD);
  const auto first = std::find_if(kinds.begin(), kinds.end(), [](int k) { return k != 0; });
  if (first == kinds.end()) return {};
  Failure f{static_cast<FailureKind>(*first), static_cast<int>(first - kinds.begin()), "", nullptr};
  if (rank == f.rank) {
    f.message = local.message;
    f.local = local.local;
  }
  bcast_string(f.message, f.rank);
  return f;
}

[[noreturn]] void throw_failure(const Failure& f) {
  switch (f.kind) {
    case FailureKind::usage:
      throw sim::SweepError(f.message);
    case FailureKind::backend:
      throw sim::BackendUnavailable(f.message);
    default:
      throw std::runtime_error(f.message);
  }
}

// Ends a failed distributed run: rank 0 throws (the original exception where it has it and `rethrow`);
// the others return quietly (run_distributed.hpp says why).
RankOutcome fail(const Failure& f, int rank, bool rethrow) {
  if (rank == 0) {
    if (rethrow && f.local) std::rethrow_exception(f.local);
    throw_failure(f);
  }
  return {false, {}, {}};
}

std::string unit_list(const std::vector<sim::Unit>& units, bool all) {
  constexpr std::size_t kShown = 8;
  std::string s;
  for (std::size_t i = 0; i < units.size() && (all || i < kShown); ++i)
    s += (i ? ", " : "") + units[i].part_name();
  if (!all && units.size() > kShown) s += ", ... (--verbose lists all)";
  return s;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

// Rank 0's view of the whole run, for run.json (of run_json's JSON type).
template <class Json>
Json mpi_json(int size, const std::vector<RankReport>& reports) {
  Json ranks = Json::array();
  for (std::size_t r = 0; r < reports.size(); ++r)
    ranks.push_back({{"rank", r},
                     {"host", reports[r].host},
                     {"backend", reports[r].backend},
                     {"device", reports[r].device},
                     {"units", reports[r].units},
                     {"seconds", reports[r].seconds}});
  return {{"ranks", size}, {"schedule", "static, greedy LPT by estimated cost"}, {"per_rank", ranks}};
}

}  // namespace

RankOutcome run_distributed(const sim::Grid& grid, vocab::BackendChoice backend_name,
                            sim::SweepOptions options, std::ostream& err) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string started = sim::utc_now_iso8601();
  // The GPU is chosen before anything can initialize CUDA (a CUDA-aware MPI_Init may).
  const bool wants_gpu =  // the reference device, like the CPU backend, runs on the host
      backend_name == vocab::BackendChoice::cuda || backend_name == vocab::BackendChoice::auto_;
  const std::optional<int> env_local_rank = local_rank_from_env();
  std::string device;
  if (wants_gpu && env_local_rank) device = bind_gpu(*env_local_rank);

  MpiSession mpi;
  const int rank = mpi.rank(), size = mpi.size();
  const std::string host = processor_name();
  if (wants_gpu && !env_local_rank) device = bind_gpu(node_local_rank());
  options.progress_bar = false;  // ranks would draw over each other; --verbose prints lines instead

  // Setup: nothing is written unless OUT can be used and every rank has its backend (as in one process).
  std::unique_ptr<sim::Backend> backend;
  Failure local;
  try {
    if (rank == 0) sim::check_out(grid, options);
    backend = sim::make_backend(backend_name, options.threads);
    options.threads = sim::resolved_threads(options.threads);
    sim::check_backend_can_run(grid, *backend, std::max(options.unit_samples, 0));
  } catch (...) {
    local = capture(rank, host);
  }
  if (const Failure f = agree(local, rank, size)) return fail(f, rank, true);
  const std::string backends = gather_backend_names(backend->name(), rank, size);

  // Plan: rank 0 prepares OUT and loads the finished units (on --resume); every rank learns the unit size
  // and which units are left.
  int unit_samples = 0;
  const sim::GridId id = sim::grid_id(grid);
  sim::PreparedOut prepared;             // rank 0: OUT locked until the run ends
  std::vector<sim::UnitResult> results;  // rank 0: every unit's result, gathered here
  std::vector<int> pending;              // indices into `units` of the units to run
  int finished = 0;                      // --resume on this grid's finished run: nothing to do
  try {
    if (rank == 0) {
      options.backend = backends;  // every rank's: a resume must run where the run started
      prepared = sim::lock_and_prepare_out(grid, options);
      unit_samples = prepared.unit_samples;
      finished = prepared.finished;
      const auto units = sim::make_units(grid, unit_samples);
      for (std::size_t i = 0; i < units.size() && !finished; ++i) {
        if (options.resume)
          if (auto r = sim::load_part(options.out, units[i], id)) {
            results.push_back(std::move(*r));
            continue;
          }
        pending.push_back(static_cast<int>(i));
      }
    }
  } catch (...) {
    local = capture(rank, host);
  }
  if (const Failure f = agree(local, rank, size)) return fail(f, rank, true);
  MPI_Bcast(&unit_samples, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(&finished, 1, MPI_INT, 0, MPI_COMM_WORLD);
  bcast_ints(pending);
  const auto units = sim::make_units(grid, unit_samples);
  if (finished) {  // its files stand: nothing runs or is rewritten (sim::run_prepared does the same)
    sim::SweepReport done;
    done.units_total = done.units_resumed = units.size();
    if (rank == 0)
      err << sim::kRunPrefix << options.out.string()
          << " holds this grid's finished run (run.json): nothing to resume\n";
    return {rank == 0, done, std::move(prepared)};
  }
  std::vector<sim::Unit> pending_units;
  for (int i : pending) pending_units.push_back(units[static_cast<std::size_t>(i)]);
  std::vector<double> costs;
  for (const auto& u : pending_units) costs.push_back(unit_cost(grid, u));
  const auto schedule = lpt_schedule(costs, size);

  sim::SweepReport report;
  report.units_total = units.size();
  report.units_resumed = units.size() - pending.size();
  if (rank == 0) {
    if (options.resume)
      err << sim::kRunPrefix << "resuming " << options.out.string() << ": " << report.units_resumed << " of "
          << units.size() << " units done" << (pending.empty() ? "" : ", missing: ")
          << unit_list(pending_units, options.verbose) << "\n";
    if (options.verbose) {
      double total = 0;
      for (double c : costs) total += c;
      for (int r = 0; r < size; ++r) {
        double cost = 0;
        for (int j : schedule[static_cast<std::size_t>(r)]) cost += costs[static_cast<std::size_t>(j)];
        err << sim::kRunPrefix << "rank " << r << ": " << schedule[static_cast<std::size_t>(r)].size()
            << " units, " << static_cast<int>(std::lround(total > 0 ? 100 * cost / total : 0))
            << "% of the estimated cost\n";
      }
    }
    err << std::flush;
  }

  // Run: this rank's share, each unit saved the moment it is done.
  std::vector<sim::UnitResult> computed;
  double seconds = 0;
  const char* kill_env = rank == 1 ? std::getenv("NORMSIM_TEST_ABORT_AFTER_UNITS") : nullptr;
  const char* throw_env = rank == 1 ? std::getenv("NORMSIM_TEST_THROW_AFTER_UNITS") : nullptr;
  const std::size_t kill_after = kill_env ? std::strtoul(kill_env, nullptr, 10) : 0;
  const std::size_t throw_after = throw_env ? std::strtoul(throw_env, nullptr, 10) : 0;
  try {
    // OUT/parts/ exists where rank 0 runs; a rank on a node that does not share OUT saves its parts locally.
    if (rank != 0) fs::create_directories(options.out / "parts");
    const auto& share = schedule[static_cast<std::size_t>(rank)];
    for (int j : share) {
      sim::UnitResult r = sim::run_unit(*backend, grid, pending_units[static_cast<std::size_t>(j)]);
      sim::save_part(options.out, r, id);
      seconds += r.seconds;
      if (options.verbose)
        err << sim::kRunPrefix << "rank " << rank << ": " << r.unit.part_name() << " done in "
            << seconds_text(r.seconds) << " (" << computed.size() + 1 << "/" << share.size() << ")\n"
            << std::flush;
      computed.push_back(std::move(r));
      if (kill_env && computed.size() >= kill_after) std::raise(SIGKILL);
      if (throw_env && computed.size() >= throw_after)
        throw std::runtime_error("NORMSIM_TEST_THROW_AFTER_UNITS");
    }
  } catch (...) {
    local = capture(rank, host);
  }

  // Gather: every rank reports, then sends the units it finished (all of them, even after a failure, so
  // that rank 0 can say which are missing).
  RankReport mine{local.kind,
                  local.message,
                  host,
                  backend->name(),
                  backend->device() + (device.empty() ? "" : " [" + device + "]"),  // with the GPU binding
                  computed.size(),
                  seconds,
                  backend->peak_memory_bytes(),
                  sim::peak_rss_bytes()};
  if (rank != 0) {
    send_bytes(encode_report(mine), 0, kTagReport);
    for (const auto& r : computed) send_bytes(sim::encode_unit(r, id), 0, kTagUnit);
    computed.clear();
  }
  std::vector<RankReport> reports;
  Failure final;
  if (rank == 0) {
    reports.push_back(std::move(mine));
    for (auto& r : computed) results.push_back(std::move(r));
    try {
      // Rank `source` sends the first `units` of its share, in order: each is checked against its unit.
      for (int source = 1; source < size; ++source) {
        reports.push_back(decode_report(recv_bytes(source, kTagReport)));
        const auto& share = schedule[static_cast<std::size_t>(source)];
        if (reports.back().units > share.size())
          throw std::runtime_error("rank " + std::to_string(source) + " sends more units than it ran");
        for (std::uint64_t k = 0; k < reports.back().units; ++k)
          results.push_back(sim::decode_unit(recv_bytes(source, kTagUnit),
                                             pending_units[static_cast<std::size_t>(share[k])], id,
                                             "message from rank " + std::to_string(source)));
      }
    } catch (const std::exception& e) {
      // Another rank's bytes make no sense (a different binary?): nothing can be trusted, stop the job.
      err << sim::kRunPrefix << "error: " << e.what() << "\n" << std::flush;
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const auto failed = std::find_if(reports.begin(), reports.end(),
                                     [](const RankReport& r) { return r.failure != FailureKind::none; });
    if (failed != reports.end()) {
      std::set<std::pair<int, int>> finished;
      for (const auto& r : results) finished.insert({r.unit.config, r.unit.begin});
      std::vector<sim::Unit> missing;
      for (const auto& u : units)
        if (!finished.contains({u.config, u.begin})) missing.push_back(u);
      final.kind = failed->failure;
      final.message = failed->message + "\n" + std::string(sim::kRunPrefix) + std::to_string(missing.size()) +
                      " of " + std::to_string(units.size()) + " units are missing (" +
                      unit_list(missing, options.verbose) + "); the finished ones are saved in " +
                      (options.out / "parts").string() + ": run again with --resume to complete the run";
    } else {
      try {
        std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) {
          return std::pair(a.unit.config, a.unit.begin) < std::pair(b.unit.config, b.unit.begin);
        });
        for (const auto& r : results) {
          for (const auto& w : sim::nonfinite_warnings(r)) err << w << "\n";
          for (const auto& s : r.records)
            report.nonfinite_samples += s.nonfinite || !s.nonfinite_statistics.empty();
        }
        sim::RunInfo info;
        std::set<std::string> backends, devices;
        for (const auto& r : reports) {
          backends.insert(r.backend);
          devices.insert(r.device);
          info.peak_memory_bytes = std::max<std::size_t>(info.peak_memory_bytes, r.peak_memory_bytes);
          info.peak_rss_bytes = std::max<std::size_t>(info.peak_rss_bytes, r.peak_rss_bytes);
          report.units_run += r.units;
        }
        for (const auto& b : backends) info.backend += (info.backend.empty() ? "" : "+") + b;
        for (const auto& d : devices) info.device += (info.device.empty() ? "" : "; ") + d;
        info.threads = options.threads;  // rank 0's; run.json's mpi.per_rank says where each rank ran
        info.started = started;
        info.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        sim::write_final(options.out, grid, results, info, options.extra_files);
        // run.json once more, with where each rank ran; write_final's info.config_seconds is recomputed
        // here, the same sums.
        info.config_seconds.assign(grid.configs.size(), 0.0);
        for (const auto& r : results)
          info.config_seconds[static_cast<std::size_t>(r.unit.config)] += r.seconds;
        auto run = sim::run_json(grid, info);
        run["mpi"] = mpi_json<decltype(run)>(size, reports);
        io::write_file_atomic(options.out / "run.json", run.dump(2) + "\n");
      } catch (...) {
        final = capture(rank, host);
      }
    }
  }
  if (const Failure f = agree(final, rank, size)) return fail(f, rank, false);
  return {rank == 0, report, std::move(prepared)};
}

}  // namespace normsim::mpi
