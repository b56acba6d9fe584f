// The CUDA backend's host code on the mock device (gpu/mock): what can be checked without a GPU beyond
// test_gpu_backend.cpp's agreement with the CPU backend: memory planning against the stream-ordered pool.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu/blas.hpp"
#include "gpu/cuda_backend.hpp"
#include "gpu/device_handles.hpp"
#include "gpu/device_probe.hpp"
#include "gpu/device_stats.hpp"
#include "gpu/memory_plan.hpp"
#include "gpu/mock/mock_device.hpp"
#include "gpu/ops.hpp"
#include "gpu/register.hpp"
#include "gpu/stat_ops.hpp"
#include "gpu/stream_statistics.hpp"
#include "sim/backend.hpp"
#include "sim/metric_set.hpp"
#include "sim/metrics.hpp"
#include "sim/placement.hpp"
#include "sim/stack.hpp"
#include "sim/stream_metrics.hpp"
#include "vocab/names.hpp"

namespace gpu = normsim::gpu;
namespace sim = normsim::sim;
namespace vocab = normsim::vocab;

namespace {

sim::Config mlp_config() {
  sim::Config c;
  c.placement = vocab::Placement::pre;
  c.sublayer = vocab::Sublayer::mlp;
  c.width = 36;
  c.tokens = 11;
  c.depth = 4;
  c.seed = 7;
  c.precision = normsim::vocab::Precision::float32;
  return c;
}

// Restores the default mock device when a test ends, however it ends.
struct MockDeviceScope {
  explicit MockDeviceScope(const gpu::mock::MockDevice& d) { gpu::mock::configure(d); }
  ~MockDeviceScope() { gpu::mock::configure({}); }
};

}  // namespace

TEST_CASE("the mock device reports itself", "[mock]") {
  std::string why;
  CHECK(gpu::cuda_device_count(&why) == 1);
  CHECK(gpu::cuda_device_name().find("mock") != std::string::npos);
}

// The pool keeps what a run freed (release threshold: max); cudaMemGetInfo then reports that much less free
// memory. A planner reading it alone gave the second run a smaller batch than the first.
TEST_CASE("the memory plan is the same on every call although the pool keeps freed memory", "[mock][plan]") {
  const sim::Config c = mlp_config();
  const gpu::MemoryPlan unlimited =
      gpu::plan_memory(sim::StackShape(c), sizeof(float), normsim::vocab::Recompute::no, 1e18, 4);
  gpu::mock::MockDevice small;
  small.total_bytes = std::size_t(2.2 * unlimited.per_sample_bytes() / 0.85);  // room for 2 of 4 samples
  const MockDeviceScope scope(small);
  gpu::CudaOptions keep;
  keep.recompute = normsim::vocab::Recompute::no;
  gpu::CudaBackend backend(1, keep);
  const std::vector<int> samples = {0, 1, 2, 3};
  backend.run(c, samples);
  const gpu::CudaRunInfo first = backend.last_run();
  CHECK(first.batch_samples == 2);
  CHECK(first.batches == 2);
  CHECK(gpu::mock::pool_reserved_bytes() > gpu::mock::pool_used_bytes());  // the pool kept freed memory
  for (int again = 0; again < 2; ++again) {
    backend.run(c, samples);
    CHECK(backend.last_run().batch_samples == first.batch_samples);
    CHECK(backend.last_run().budget_bytes == first.budget_bytes);
  }
}

TEST_CASE("plan_memory: recompute replaces the stack's weights by one matrix of scratch", "[plan]") {
  sim::Config c = mlp_config();
  c.depth = 64;
  const sim::StackShape s(c);
  const gpu::MemoryPlan keep = gpu::plan_memory(s, 4, normsim::vocab::Recompute::no, 1e18, 8);
  const gpu::MemoryPlan redraw = gpu::plan_memory(s, 4, normsim::vocab::Recompute::yes, 1e18, 8);
  CHECK_FALSE(keep.recompute);
  CHECK(redraw.recompute);
  CHECK(keep.weight_bytes == 4.0 * 64 * 2 * 36 * 144);  // 64 sublayers of W1 (36 x 144) and W2 (144 x 36)
  CHECK(redraw.weight_bytes == 4.0 * 36 * 144);
  CHECK(keep.batch_samples == 8);
  // auto: keep the weights while that runs as many samples at once; redraw when that fits more.
  CHECK_FALSE(
      gpu::plan_memory(s, 4, normsim::vocab::Recompute::auto_, 8 * keep.per_sample_bytes(), 8).recompute);
  const gpu::MemoryPlan more =
      gpu::plan_memory(s, 4, normsim::vocab::Recompute::auto_, 8 * keep.per_sample_bytes() - 1, 8);
  CHECK(more.recompute);
  CHECK(more.batch_samples == 8);
  const gpu::MemoryPlan tight =
      gpu::plan_memory(s, 4, normsim::vocab::Recompute::auto_, keep.per_sample_bytes() - 1, 8);
  CHECK(tight.recompute);
  CHECK(tight.batch_samples * tight.per_sample_bytes() <= keep.per_sample_bytes() - 1);
}

TEST_CASE("built_for: SASS runs on the same major and a newer minor, PTX on anything newer", "[probe]") {
  CHECK(gpu::built_for(8, 0, "80,90"));
  CHECK(gpu::built_for(8, 6, "80,90"));   // A10, RTX 30xx: sm_80 SASS
  CHECK(gpu::built_for(10, 0, "80,90"));  // compute_90 PTX, compiled by the driver
  CHECK_FALSE(gpu::built_for(7, 5, "80,90"));
  CHECK_FALSE(gpu::built_for(7, 0, "80,90"));
  CHECK(gpu::built_for(8, 9, "80-real,90-real"));
  CHECK_FALSE(gpu::built_for(10, 0, "80-real,90-real"));
  CHECK_FALSE(gpu::built_for(8, 6, "90-virtual"));
  CHECK(gpu::built_for(12, 0, "90-virtual"));
  CHECK_FALSE(gpu::built_for(9, 0, "native"));  // never passed through: CMake resolves it at configure time
}

// NORMSIM_CUDA_SYNC picks how the host waits for the device (issue 29 item 6: the wide runs' system time);
// unset, the driver's default stays; another value is a usage error naming the variable.
TEST_CASE("NORMSIM_CUDA_SYNC sets the device's host-wait flags before the context exists", "[probe]") {
  CHECK(gpu::host_wait_flags(nullptr) == cudaDeviceScheduleAuto);
  CHECK(gpu::host_wait_flags("auto") == cudaDeviceScheduleAuto);
  CHECK(gpu::host_wait_flags("spin") == cudaDeviceScheduleSpin);
  CHECK(gpu::host_wait_flags("yield") == cudaDeviceScheduleYield);
  CHECK(gpu::host_wait_flags("blocking") == cudaDeviceScheduleBlockingSync);
  CHECK_THROWS_WITH(gpu::host_wait_flags("busy"),
                    Catch::Contains("NORMSIM_CUDA_SYNC") && Catch::Contains("'busy'"));
  unsigned flags = 99;
  ::setenv("NORMSIM_CUDA_SYNC", "blocking", 1);
  REQUIRE(gpu::cuda_device_usable(nullptr));
  REQUIRE(cudaGetDeviceFlags(&flags) == cudaSuccess);
  CHECK(flags == cudaDeviceScheduleBlockingSync);
  ::unsetenv("NORMSIM_CUDA_SYNC");
  REQUIRE(cudaSetDeviceFlags(cudaDeviceScheduleAuto) == cudaSuccess);
}

// --backend auto on a machine where the CUDA backend cannot run: the CPU backend, with the real cause.
TEST_CASE("make_backend auto falls back to the CPU with the cause; cuda fails with it", "[probe]") {
  gpu::mock::register_as_cuda_backend();
  struct Case {
    gpu::mock::MockDevice device;
    const char* cause;
  };
  std::vector<Case> cases(4);
  cases[0].device.major = 7, cases[0].device.minor = 0, cases[0].cause = "compute capability 7.0";
  cases[1].device.driver_error = cudaErrorInsufficientDriver,
  cases[1].cause = "driver version is insufficient";
  cases[2].device.context_error = cudaErrorMemoryAllocation, cases[2].cause = "context on device 0 failed";
  cases[3].device.count = 0, cases[3].cause = "no CUDA-capable device";
  for (const Case& k : cases) {
    const MockDeviceScope scope(k.device);
    INFO(k.cause);
    std::string why;
    const auto backend = sim::make_backend(normsim::vocab::BackendChoice::auto_, 1, &why);
    CHECK(backend->name() == "cpu");
    CHECK(why.find(k.cause) != std::string::npos);
    try {
      sim::make_backend(normsim::vocab::BackendChoice::cuda, 1);
      FAIL("make_backend(\"cuda\") should have thrown");
    } catch (const sim::BackendUnavailable& e) {
      CHECK(std::string(e.what()).find(k.cause) != std::string::npos);
    }
  }
  std::string why;
  // The default mock device is usable, so auto takes the backend registered as CUDA's: this build's, which
  // names itself the reference device.
  CHECK(sim::make_backend(normsim::vocab::BackendChoice::auto_, 1, &why)->name() == "reference");
  CHECK(why.empty());
}

// Recompute: weight memory does not grow with depth (the plan), and the backend really does not store the
// stack's weights (the mock's measured peak).
TEST_CASE("recompute: weight memory independent of depth, in the plan and in the peak", "[plan][mock]") {
  sim::Config c = mlp_config();
  c.width = 64, c.tokens = 4;
  double scratch = -1;
  for (const int depth : {4, 16, 64}) {
    c.depth = depth;
    const auto redraw = gpu::plan_memory(sim::StackShape(c), 4, normsim::vocab::Recompute::yes, 1e18, 1);
    if (scratch < 0) scratch = redraw.weight_bytes;
    CHECK(redraw.weight_bytes == scratch);  // one 64 x 256 matrix, whatever the depth
    CHECK(gpu::plan_memory(sim::StackShape(c), 4, normsim::vocab::Recompute::no, 1e18, 1).weight_bytes ==
          depth * 2 * scratch);
  }
  c.depth = 16;
  std::size_t peak[2];
  for (const bool recompute : {false, true}) {
    gpu::CudaOptions o;
    o.recompute = recompute ? vocab::Recompute::yes : vocab::Recompute::no;
    gpu::CudaBackend b(1, o);
    b.run(c, std::vector<int>{0, 1});
    peak[recompute] = b.peak_memory_bytes();
  }
  // Keeping holds 2 samples x 16 sublayers x 2 matrices at the end of the forward; redrawing one scratch.
  const double weights = 2 * 16 * 2 * scratch;
  CHECK(double(peak[0]) - double(peak[1]) >= 0.9 * (weights - 2 * scratch));
}

// Issue 29 item 3: the cuBLAS and cuSOLVER handles are the process's, made once: runs after the first
// (other backends, configurations, a TF32 run, eff_rank's solver) create none, and a TF32 run leaves the
// handle in the default math mode for the next.
TEST_CASE("runs reuse the process's cuBLAS and cuSOLVER handles", "[mock]") {
  sim::Config c = mlp_config();
  c.metrics.insert(sim::metric::eff_rank);
  gpu::CudaBackend(1).run(c, std::vector<int>{0});
  const int made = gpu::handles_created();
  CHECK(made >= 1);
  CHECK(made <= 2);
  for (const vocab::Precision p :
       {vocab::Precision::float32, vocab::Precision::tf32, vocab::Precision::float64}) {
    c.precision = p;
    gpu::CudaBackend(1).run(c, std::vector<int>{0, 1});
  }
  CHECK(gpu::handles_created() == made);
  cublasMath_t mode{};
  CHECK(cublasGetMathMode(gpu::process_blas_handle(), &mode) == CUBLAS_STATUS_SUCCESS);
  CHECK(mode == CUBLAS_DEFAULT_MATH);
}

// Issue 15: what cannot fit one sample on the device is refused before anything runs, with the figures.
TEST_CASE("the CUDA backend refuses a sample larger than the device", "[plan][mock]") {
  sim::Config c = mlp_config();
  gpu::CudaBackend b(1);
  CHECK(b.refusal(c, 0).empty());
  c.width = 8192, c.depth = 64, c.tokens = 4096;  // activations alone: tens of GB, the mock has 8 GiB
  const std::string why = b.refusal(c, 0);
  CHECK(why.find("one sample needs") != std::string::npos);
  CHECK(why.find("the reference device (emulating a GPU's memory) allows") != std::string::npos);
  // sgd keeps every matrix's loss gradient until the updated pass (here 256 sublayers x 2 x 512 x 10240
  // floats of factors, 10.7 GB): a stack that fits checkpointed does not fit with it, and the message says
  // so.
  c = mlp_config();
  c.width = 2048, c.tokens = 512, c.depth = 256;
  CHECK(b.refusal(c, 0).empty());
  c.update = vocab::Update::sgd;
  const std::string update_why = b.refusal(c, 0);
  CHECK(update_why.find("'update'") != std::string::npos);
  CHECK(update_why.find("kept for the update") != std::string::npos);
  // A precision the vocabulary lacks (bf16) no longer reaches a backend: the config's edge refuses it
  // (tests/sim/test_config_errors.cpp's unknown values), since precision is an enum past it.
}

// What the backend refuses it refuses when run without asking first (check's measurements and Python call
// run directly): before the CUDA backend had training steps, run ignored its own refusal of them and gave
// records of step 0 alone, and the coordinate-check claims NaN statistics, on an H200 (2026-11-28).
TEST_CASE("the CUDA backend's run refuses what its refusal names", "[plan][mock]") {
  sim::Config c = mlp_config();
  c.width = 8192, c.depth = 64, c.tokens = 4096;  // larger than the mock's 8 GiB (the case above)
  gpu::CudaBackend b(1);
  REQUIRE_THAT(b.refusal(c, 1), Catch::Contains("one sample needs"));
  CHECK_THROWS_AS(b.run(c, std::vector<int>{0}), sim::BackendUnavailable);
  CHECK_THROWS_WITH(b.run(c, std::vector<int>{0}),
                    Catch::Contains("the reference device (emulating a GPU's memory) allows"));
}

// The twin is the kernel's specification: (s, a, b, j) moves to (s, b, a, j); swapping back restores.
TEST_CASE("swap_middle_axes: heads split from tokens and merged back", "[twin]") {
  const int S = 2, T = 5, H = 3, dh = 4;
  std::vector<float> x(S * T * H * dh), y(x.size()), back(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(i);
  gpu::cpu::swap_middle_axes(x.data(), y.data(), S, T, H, dh);
  const int s = 1, t = 3, h = 2, j = 1;
  CHECK(y[((s * H + h) * T + t) * dh + j] == x[((s * T + t) * H + h) * dh + j]);
  gpu::cpu::swap_middle_axes(y.data(), back.data(), S, H, T, dh);
  CHECK(back == x);
}

namespace {

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> z(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = z(gen);
  return v;
}

}  // namespace

// eff_rank's Grams held and solved in groups (gpu/stream_statistics.hpp): with 2 slots, 5 streams are solved
// in three eigensolver calls (when the slots fill, twice, then finish()'s one) instead of five; a stream's
// eff_rank is written by its group's solve (NaN before it) and is exactly the one it gets solved alone (the
// same Gram, the same solver per matrix), and sim::effective_rank's (test_stat_twins.cpp's tolerance: the
// same doubles summed in another order).
TEST_CASE("eff_rank's Grams solved in groups give each stream its own eff_rank", "[mock][stats]") {
  const int S = 3, T = 5, d = 7, streams = 5;
  CHECK(gpu::gram_slots(T, d, 2) == 2);
  CHECK(gpu::gram_slots(64, 512, 65) == 65);   // W1: every stream in one solve
  CHECK(gpu::gram_slots(512, 4096, 97) == 2);  // W2: 2 MiB per 512 x 512 Gram
  CHECK(gpu::gram_slots(4096, 8192, 97) == 1);
  const gpu::Blas blas;
  const sim::MetricSet eff_rank = sim::MetricSet::of({"eff_rank"});
  gpu::StreamStatistics<float> grouped(blas.handle(), S, T, d, eff_rank, 2),
      alone(blas.handle(), S, T, d, eff_rank, 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<gpu::DeviceBuffer<float>> x;
  std::vector<gpu::DeviceBuffer<double>> rank_grouped, rank_alone;
  gpu::DeviceBuffer<double> fields(std::size_t(gpu::kStreamFields) * S);
  long solves_grouped = 0, solves_alone = 0;
  for (int i = 0; i < streams; ++i) {
    x.push_back(gpu::DeviceBuffer<float>::from_host(random_floats(std::size_t(S) * T * d, unsigned(i + 1))));
    rank_grouped.push_back(gpu::DeviceBuffer<double>::from_host(std::vector<double>(S, nan)));
    rank_alone.push_back(gpu::DeviceBuffer<double>::from_host(std::vector<double>(S, nan)));
    gpu::mock::reset_counters();
    grouped.stream(x.back().get(), nullptr, fields.get(), rank_grouped.back().get());
    solves_grouped += gpu::mock::counters().library_calls - 1;  // less the Gram's GEMM
    gpu::mock::reset_counters();
    alone.stream(x.back().get(), nullptr, fields.get(), rank_alone.back().get());
    solves_alone += gpu::mock::counters().library_calls - 1;
  }
  CHECK(std::isnan(rank_grouped[4].to_host()[0]));  // held: solved by finish()
  CHECK_FALSE(std::isnan(rank_grouped[3].to_host()[0]));
  gpu::mock::reset_counters();
  grouped.finish();
  alone.finish();
  CHECK(solves_grouped + gpu::mock::counters().library_calls == 3);
  CHECK(solves_alone == 5);
  for (int i = 0; i < streams; ++i) {
    const std::vector<float> h = x[std::size_t(i)].to_host();
    const std::vector<double> got = rank_grouped[std::size_t(i)].to_host();
    CHECK(got == rank_alone[std::size_t(i)].to_host());
    for (int s = 0; s < S; ++s) {
      sim::MatD m(T, d);
      for (int t = 0; t < T; ++t)
        for (int c = 0; c < d; ++c) m(t, c) = double(h[(std::size_t(s) * T + t) * d + c]);
      const double want = sim::effective_rank(m);
      CHECK(std::abs(got[std::size_t(s)] - want) <= 1e-13 + 1e-12 * want);
    }
  }
}

namespace {

// Device work per sublayer, counted through the mock: the difference between depths 8 and 4, over 4.
struct PerLayer {
  double launches, library_calls, syncs, blocking_copies;
};
PerLayer count_per_layer(sim::Config c) {
  gpu::CudaOptions keep;
  keep.recompute = normsim::vocab::Recompute::no;
  gpu::CudaBackend backend(1, keep);
  const std::vector<int> samples = {0, 1};
  gpu::mock::Counters at[2];
  for (int i = 0; i < 2; ++i) {
    c.depth = 4 * (i + 1);
    gpu::mock::reset_counters();
    backend.run(c, samples);
    at[i] = gpu::mock::counters();
  }
  const auto per = [](long a, long b) { return double(b - a) / 4; };
  return {per(at[0].launches, at[1].launches), per(at[0].library_calls, at[1].library_calls),
          per(at[0].syncs, at[1].syncs), per(at[0].blocking_copies, at[1].blocking_copies)};
}

}  // namespace

// docs/gpu.md "Launches and synchronizations": statistics on the device leave no host synchronization and
// no blocking copy inside the layer loop (one copy and one sync per batch); the launch bounds are the
// counts measured when this test was written (MLP 32 launches and 10 library calls, attention 55 and 24
// per sublayer, statistics included), so a change that adds launches has to say so here and in the docs.
// Since: +2 launches per weight-gradient norm taken through Grams (its operands widened to double, issue
// 29): MLP 36 (2 weights), attention 63 (4); then -2 per such norm (scaled_widen scales and widens in one
// pass) and -1 library call per stream (eff_rank's Grams solved together, gram_slots): MLP 32 and 9,
// attention 55 and 23.
TEST_CASE("per sublayer: no synchronization, no blocking copy, a bounded number of launches",
          "[mock][sync]") {
  sim::Config c = mlp_config();
  const PerLayer mlp = count_per_layer(c);
  c.sublayer = vocab::Sublayer::attention;
  c.heads = 4;
  const PerLayer attention = count_per_layer(c);
  for (const PerLayer& p : {mlp, attention}) {
    CHECK(p.syncs == 0);
    CHECK(p.blocking_copies == 0);
  }
  INFO("mlp: " << mlp.launches << " launches, " << mlp.library_calls << " cuBLAS/cuSOLVER calls; attention: "
               << attention.launches << ", " << attention.library_calls);
  CHECK(mlp.launches <= 32);
  CHECK(attention.launches <= 55);
  CHECK(mlp.library_calls <= 9);
  CHECK(attention.library_calls <= 23);
}

// The backward runs only when a backward metric is asked for or the update steps on the loss, as on the CPU
// backend (sim/cpu/cpu_backend.cpp). Counted per MLP sublayer through the mock's cuBLAS calls: the forward's
// two GEMMs (W1, W2), two more for random's updated pass, and more again with any backward.
TEST_CASE("no backward pass unless a backward metric or a step on the loss needs it", "[mock][update]") {
  sim::Config c = mlp_config();
  c.metrics = sim::MetricSet::of({"act_sq"});
  CHECK(count_per_layer(c).library_calls == 2);
  c.update = vocab::Update::random;
  c.metrics = sim::MetricSet::of({"act_sq", "output_change"});
  CHECK(count_per_layer(c).library_calls == 4);
  c.metrics = sim::MetricSet::of({"act_sq", "grad_sq", "output_change"});
  CHECK(count_per_layer(c).library_calls > 4);
  c.update = vocab::Update::sgd;
  c.metrics = sim::MetricSet::of({"act_sq", "output_change"});
  CHECK(count_per_layer(c).library_calls > 4);
}

// Without a backward pass the stack runs unit by unit and keeps no checkpoint, so activation memory does not
// grow with depth: in the plan, and in the mock's measured peak, which grows only by the per-layer scalars
// ((K + 2) x kLayerFields doubles per sample, 22 KB from depth 16 to 64 here), where a run with a backward
// keeps the whole tape (measured: 58 KB more per sublayer and sample at width 64, 32 tokens).
TEST_CASE("without a backward pass, activation memory does not grow with depth", "[plan][mock]") {
  sim::Config c = mlp_config();
  c.width = 64, c.tokens = 32, c.recompute = normsim::vocab::Recompute::yes;
  for (const bool backward : {false, true}) {
    c.metrics = sim::MetricSet::of(backward ? std::vector<std::string>{"act_sq", "grad_sq"}
                                            : std::vector<std::string>{"act_sq", "cos_next"});
    double planned[2], peak[2];
    for (int i = 0; i < 2; ++i) {
      c.depth = i == 0 ? 16 : 64;
      const gpu::MemoryPlan plan =
          gpu::plan_memory(sim::StackShape(c), 4, normsim::vocab::Recompute::yes, 1e18, 2);
      CHECK(plan.forward_only == !backward);
      planned[i] = plan.activation_bytes;
      gpu::CudaBackend b(1, gpu::CudaOptions{});
      b.run(c, std::vector<int>{0, 1});
      peak[i] = double(b.peak_memory_bytes());
    }
    INFO((backward ? "with" : "without") << " a backward pass: peak " << peak[0] << " -> " << peak[1]);
    if (backward) {
      CHECK(planned[1] > planned[0]);
      CHECK(peak[1] - peak[0] > 1e6);
    } else {
      CHECK(planned[1] == planned[0]);
      CHECK(peak[1] - peak[0] <= 2.0 * 48 * gpu::kLayerFields * 8);
    }
  }
}

// Issue 13's target: width 16384 x depth 1000 x tokens 256 (pre-LN MLP, float32) on one 80 GB GPU. The whole
// tape is ~168 GB per sample, so the planner must checkpoint the activations and redraw the weights; what it
// plans must fit the budget, and --dry-run (plan_summary) says so.
TEST_CASE("width 16384 x depth 1000 x tokens 256 plans to fit a fake 80 GB device", "[mock][plan]") {
  gpu::mock::MockDevice big;
  big.total_bytes = std::size_t(80e9);
  const MockDeviceScope scope(big);
  sim::Config c = mlp_config();
  c.width = 16384, c.depth = 1000, c.tokens = 256, c.samples = 8;
  const gpu::CudaBackend backend(1, gpu::CudaOptions{});
  const double budget = 0.85 * 80e9;
  const gpu::MemoryPlan whole =
      gpu::plan_memory(sim::StackShape(c), 4, normsim::vocab::Recompute::yes, 1e18, 1);
  REQUIRE(whole.per_sample_bytes() > budget);  // the target needs checkpointing
  const gpu::MemoryPlan plan =
      gpu::plan_memory(sim::StackShape(c), 4, normsim::vocab::Recompute::auto_, budget, c.samples);
  CHECK(plan.recompute);
  CHECK(plan.checkpoint_every > 1);
  CHECK(plan.checkpoint_every < c.depth);
  CHECK(plan.batch_samples >= 1);
  CHECK(plan.batch_samples * plan.per_sample_bytes() <= budget);
  // No other segment length needs less memory (the planner's choice is the minimum it claims).
  for (const int every : {1, 5, 20, 32, 100, 1000})
    CHECK(gpu::checkpointed_activation_elements(sim::StackShape(c), every) >=
          gpu::checkpointed_activation_elements(sim::StackShape(c), plan.checkpoint_every));
  const std::string summary = backend.plan_summary(c);
  INFO(summary);
  CHECK(summary.find("checkpointed every " + std::to_string(plan.checkpoint_every)) != std::string::npos);
  CHECK(summary.find("DOES NOT FIT") == std::string::npos);
  CHECK(backend.refusal(c, 1).empty());
}

namespace {

// A mock device on which one sample of c fits only with its activations checkpointed: room for the
// checkpointed plan (1.2 x, the estimate errs high) but not for the whole tape.
gpu::mock::MockDevice device_forcing_checkpoints(const sim::Config& c) {
  const sim::StackShape s(c);
  const gpu::MemoryPlan whole = gpu::plan_memory(s, 4, normsim::vocab::Recompute::yes, 1e18, 1);
  gpu::MemoryPlan tight = whole;
  tight.activation_bytes = double(gpu::checkpointed_activation_elements(s, 2)) * 4;
  gpu::mock::MockDevice d;
  d.total_bytes = std::size_t(1.2 * tight.per_sample_bytes() / 0.85);
  REQUIRE(0.85 * double(d.total_bytes) < whole.per_sample_bytes());
  return d;
}

// Runs c on an unlimited mock device (the whole tape kept) and on one that forces checkpointed activations;
// the mock's kernels and GEMM are deterministic, so the records must be identical. Returns the first.
std::vector<sim::SampleRecord> require_checkpoints_change_nothing(const sim::Config& c) {
  const std::vector<int> samples = {0, 2};
  const auto whole = gpu::CudaBackend(1, gpu::CudaOptions{}).run(c, samples);
  const MockDeviceScope scope(device_forcing_checkpoints(c));
  gpu::CudaBackend small(1, gpu::CudaOptions{});
  const auto cut = small.run(c, samples);
  CHECK(small.last_run().checkpoint_every > 0);
  CHECK(small.last_run().checkpoint_every < c.depth);
  REQUIRE(cut.size() == whole.size());
  for (std::size_t s = 0; s < cut.size(); ++s) {
    CHECK(cut[s].nonfinite.has_value() == whole[s].nonfinite.has_value());
    CHECK(cut[s].nonfinite_statistics == whole[s].nonfinite_statistics);
    for (std::size_t m = 0; m < cut[s].values.size(); ++m)
      for (std::size_t l = 0; l < cut[s].values[m].size(); ++l) {
        const double a = cut[s].values[m][l], b = whole[s].values[m][l];
        INFO("metric " << sim::metric_table()[m].name << " layer " << l << ": " << a << " vs " << b);
        CHECK(((std::isnan(a) && std::isnan(b)) || a == b));
      }
  }
  return whole;
}

}  // namespace

// Activation checkpointing runs, and changes nothing: every placement (Admin's omega replayed, B2T and
// SpanNorm's units kept whole: two sublayers, or a decoder layer of three) on a device too small for the
// whole tape gives the records of
// an unlimited device, where the whole tape is kept. The mock's kernels and GEMM are deterministic, so the
// only difference allowed is none; the actual allocations must also fit the small device (the plan errs
// high), or the run fails with "CUDA out of memory".
TEST_CASE("checkpointed activations give the records of the whole tape", "[mock][plan][checkpoint]") {
  for (const vocab::Sublayer kind : {vocab::Sublayer::transformer, vocab::Sublayer::decoder})
    for (const sim::Placement* p : sim::all_placements()) {
      sim::Config c = mlp_config();
      c.placement = p->id();
      c.sublayer = kind;
      c.heads = 4;
      c.depth = 12;
      c.recompute = normsim::vocab::Recompute::yes;
      INFO(normsim::vocab::name(p->id()) << " " << normsim::vocab::name(kind));
      require_checkpoints_change_nothing(c);
    }
}

// The Jacobian probes rebuild the whole tape for each reverse pass: where one sample needs checkpointed
// activations, they are refused before anything runs, naming the key and the ways out.
TEST_CASE("the CUDA backend refuses the Jacobian probes where the tape is checkpointed", "[mock][jacobian]") {
  sim::Config c = mlp_config();
  c.metrics.insert(sim::metric::block_identity_dev);
  c.recompute = normsim::vocab::Recompute::yes;
  gpu::CudaBackend b(1);
  CHECK(b.refusal(c, 0).empty());
  const MockDeviceScope scope(device_forcing_checkpoints(c));
  gpu::CudaBackend small(1);
  const std::string why = small.refusal(c, 0);
  CHECK(why.find("key 'metrics'") != std::string::npos);
  CHECK(why.find("--backend cpu") != std::string::npos);
  CHECK_THROWS_AS(small.run(c, std::vector<int>{0}), sim::BackendUnavailable);
}

// Issue 12 with checkpointed activations: the updated pass runs in the first pass's segments (Admin's omega
// replayed, B2T's units whole) and gives the records of the whole tape, bit for bit (the mock is
// deterministic); the plan counts the kept streams and gradients, so the run fits the small device.
TEST_CASE("checkpointed activations give the whole tape's output_change",
          "[mock][plan][checkpoint][update]") {
  for (const vocab::Update u : {vocab::Update::random, vocab::Update::sgd, vocab::Update::adam})
    for (const vocab::Placement p : {vocab::Placement::pre, vocab::Placement::admin, vocab::Placement::b2t}) {
      sim::Config c = mlp_config();
      c.placement = p;
      c.sublayer = vocab::Sublayer::transformer;
      c.heads = 4;
      c.depth = 12;
      c.recompute = normsim::vocab::Recompute::yes;
      c.update = u;
      c.metrics.insert(sim::metric::output_change);
      INFO(vocab::name(p) << " " << vocab::name(u));
      for (const sim::SampleRecord& r : require_checkpoints_change_nothing(c))
        CHECK(r.values[sim::metric::output_change][c.depth] > 0);
    }
}

// With the edge matrices (sim/edges.hpp): the checkpointed segments rebuild the embedding from its input u
// in the first one and apply the readout in the last, as the whole tape does; sgd moves both edges.
TEST_CASE("checkpointed activations with an embedding and a readout", "[mock][plan][checkpoint][edges]") {
  for (const vocab::Update u : {vocab::Update::none, vocab::Update::sgd})
    for (const int vocab_size : {0, 23}) {
      sim::Config c = mlp_config();
      c.sublayer = vocab::Sublayer::transformer;
      c.heads = 4;
      c.depth = 12;
      c.recompute = normsim::vocab::Recompute::yes;
      c.input_width = vocab_size > 0 ? 0 : 17, c.vocab = vocab_size, c.output_width = 5;
      c.update = u;
      if (u != vocab::Update::none) c.metrics.insert(sim::metric::output_change);
      INFO(vocab::name(u) << " vocab " << vocab_size);
      for (const sim::SampleRecord& r : require_checkpoints_change_nothing(c))
        if (u != vocab::Update::none) CHECK(r.values[sim::metric::output_change][0] > 0);  // W_emb moved
    }
}

// The plan counts what the update keeps: the first pass's K + 1 streams, and for sgd/adam each weight's
// loss gradient as the smaller of its product (n m) and its factors (T (n + m)).
TEST_CASE("plan_memory: the update's streams and gradients are counted", "[plan][update]") {
  sim::Config c = mlp_config();  // width 36, hidden 144, tokens 11: W1's factors 11 x 180 < 36 x 144
  const std::size_t T = 11, d = 36, H = 144, K = 4;
  CHECK(gpu::update_elements(sim::StackShape(c)) == 0);
  c.update = vocab::Update::random;
  const std::size_t streams = (K + 1) * T * d, in_flight = d * H;
  CHECK(gpu::update_elements(sim::StackShape(c)) == streams + in_flight);
  c.update = vocab::Update::sgd;
  CHECK(gpu::gradient_by_factors(11, 36, 144));
  CHECK_FALSE(gpu::gradient_by_factors(40, 36, 36));
  CHECK(gpu::update_elements(sim::StackShape(c)) == streams + in_flight + K * 2 * T * (d + H));
  const gpu::MemoryPlan none =
      gpu::plan_memory(sim::StackShape(mlp_config()), 4, normsim::vocab::Recompute::yes, 1e18, 1);
  const gpu::MemoryPlan sgd =
      gpu::plan_memory(sim::StackShape(c), 4, normsim::vocab::Recompute::yes, 1e18, 1);
  CHECK(sgd.per_sample_bytes() - none.per_sample_bytes() ==
        Approx(4.0 * double(gpu::update_elements(sim::StackShape(c)))));
}

// The training loop (gpu/batch_training.hpp) keeps step 0's streams and loss input to compare with, and the
// optimizer's state (gpu/gpu_optimizer.hpp): Adam's D, m and v of every trained matrix and one gradient in
// flight, SGD's step gradient and its sum. A stack that fits without steps (its weights redrawn) is refused
// with Adam's three copies of them, naming the key and the figures.
TEST_CASE("plan_memory: the training loop's optimizer state is counted and refused where it does not fit",
          "[plan][steps]") {
  sim::Config c = mlp_config();  // width 36, hidden 144, tokens 11, depth 4; no bias, no edge matrix
  c.update = vocab::Update::adam, c.steps = 2;
  const std::size_t T = 11, d = 36, H = 144, K = 4, weights = K * 2 * d * H;
  CHECK(gpu::optimizer_elements(sim::StackShape(c)) == 3 * weights + d * H);
  CHECK(gpu::update_elements(sim::StackShape(c)) == (K + 1) * T * d + T * d + 3 * weights + d * H);
  c.update = vocab::Update::sgd;
  CHECK(gpu::optimizer_elements(sim::StackShape(c)) == 2 * weights);
  c.steps = 0;
  CHECK(gpu::optimizer_elements(sim::StackShape(c)) == 0);
  c = mlp_config();
  c.width = 2048, c.tokens = 16, c.depth = 64;  // 8.6 GB of float weights per sample, the mock has 8 GiB
  gpu::CudaBackend b(1);
  CHECK(b.refusal(c, 0).empty());  // redrawn
  c.update = vocab::Update::adam, c.steps = 2;
  const std::string why = b.refusal(c, 0);
  CHECK(why.find("'steps'") != std::string::npos);
  CHECK(why.find("the optimizer's state") != std::string::npos);
  CHECK(why.find("the reference device (emulating a GPU's memory) allows") != std::string::npos);
}

// Training steps on a device too small for the whole tape: every step's first pass runs in checkpointed
// segments (the backward rebuilding each from its checkpoint with W_s, recording the step's gradients once
// per matrix), and with fresh batches the batch-0 pass too. The mock is deterministic: the records of every
// step are those of the whole tape, bit for bit.
TEST_CASE("checkpointed activations give the whole tape's training steps",
          "[mock][plan][checkpoint][steps]") {
  for (const vocab::Update u : {vocab::Update::sgd, vocab::Update::adam})
    for (const vocab::Batches batches : {vocab::Batches::fixed, vocab::Batches::fresh}) {
      sim::Config c = mlp_config();
      c.placement = vocab::Placement::post;
      c.depth = 12;
      c.tokens = 48, c.mlp_ratio = 1.0;  // activations above the optimizer's state, so checkpoints can fit
      c.update = u, c.steps = 2, c.batches = batches, c.update_lr = 0.01;
      c.input_width = 9, c.output_width = 5;
      for (const char* m : {"output_change", "logit_mean_abs", "logit_change", "dwx_w1", "rel_dw_out"})
        c.metrics.insert(sim::metric_id(m));
      INFO(vocab::name(u) << " " << vocab::name(batches));
      const auto records = require_checkpoints_change_nothing(c);
      REQUIRE(records.size() == 2 * 3);
      CHECK(records[2].values[sim::metric::output_change][c.depth] > 0);
      CHECK(records[2].values[sim::metric::dwx_w1][3] > 0);
    }
}
