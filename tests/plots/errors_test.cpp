// Bad input fails with a message naming what is wrong and how to fix it, the documented exit status
// (2 usage/input, 1 gnuplot), and no half-written figure.
#include <catch2/catch.hpp>
#include <fstream>

#include "app/plot_command.hpp"
#include "plots/render_folder.hpp"
#include "results_fixture.hpp"

namespace fs = std::filesystem;
using namespace normsim::plots;
using normsim::app::plot_usage;
using namespace normsim::plots::test;

namespace {

// No figure file at all (a failed run must not leave some of them behind).
std::size_t figure_files(const fs::path& out) {
  if (!fs::exists(out / "figures")) return 0;
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::recursive_directory_iterator(out / "figures")) ++files;
  return files;
}

}  // namespace

TEST_CASE("usage errors exit with status 2", "[plots][errors]") {
  SECTION("no folder") {
    const auto [status, err] = run_plot_command({});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("no results folder given"));
  }
  SECTION("unknown option") {
    const auto [status, err] = run_plot_command({"out", "--colour", "red"});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("unknown option '--colour'"));
  }
  SECTION("bad size") {
    const auto [status, err] = run_plot_command({"out", "--size", "a4"});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("one-column"));
  }
  SECTION("option without its value") {
    const auto [status, err] = run_plot_command({"out", "--metric"});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("--metric needs a value"));
  }
  SECTION("--help") {
    const auto [status, err] = run_plot_command({"--help"});
    CHECK(status == 0);
    CHECK(plot_usage().find("--size one-column|two-column") != std::string::npos);
  }
}

TEST_CASE("input errors exit with status 2 and write nothing", "[plots][errors]") {
  TempDir dir("input-errors");
  const fs::path out = dir.path() / "out";

  SECTION("a folder that does not exist") {
    const auto [status, err] = run_plot_command({out.string()});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("is not a folder"));
  }
  SECTION("a folder that is not a results folder") {
    fs::create_directories(out);
    const auto [status, err] = run_plot_command({out.string(), "--quiet"});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("not a normsim results folder") && Catch::Contains("run.json"));
  }
  SECTION("summary.csv missing") {
    write_results_folder(out);
    fs::remove(out / "summary.csv");
    const auto [status, err] = run_plot_command({out.string(), "--quiet"});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("summary.csv"));
  }
  SECTION("a metric that is not in the folder") {
    write_results_folder(out);
    const auto [status, err] = run_plot_command({out.string(), "--metric", "act_sq", "--metric", "eff_rank"});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("metric 'eff_rank' is not in") && Catch::Contains("act_sq, grad_sq"));
  }
  SECTION("an unknown format") {
    write_results_folder(out);
    const auto [status, err] = run_plot_command({out.string(), "--format", "pdf,jpeg"});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("unknown format 'jpeg'"));
  }
  SECTION("a malformed summary row names its file and line") {
    write_results_folder(out);
    std::string summary = read_text(out / "summary.csv");
    const auto second_line = summary.find('\n', summary.find('\n') + 1) + 1;  // line 3
    auto mean_start = summary.find(",act_sq,", second_line) + 8;              // then the l and k fields
    mean_start = summary.find(',', summary.find(',', mean_start) + 1) + 1;
    summary.replace(mean_start, summary.find(',', mean_start) - mean_start, "oops");
    std::ofstream(out / "summary.csv") << summary;
    const auto [status, err] = run_plot_command({out.string()});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains("summary.csv:3") && Catch::Contains("'oops'"));
  }
  SECTION("a claim without its data") {
    write_results_folder(out);
    fs::remove_all(out / "claims" / fixture_claim_ids()[1]);
    const auto [status, err] = run_plot_command({out.string()});
    CHECK(status == 2);
    CHECK_THAT(err, Catch::Contains(fixture_claim_ids()[1]) && Catch::Contains("normsim check"));
  }
  CHECK(figure_files(out) == 0);
  CHECK_FALSE(fs::exists(out / "report.html"));
}

TEST_CASE("gnuplot missing or failing exits with status 1 and leaves no figure", "[plots][errors]") {
  TempDir dir("gnuplot-errors");
  const fs::path out = dir.path() / "out";
  write_results_folder(out);

  SECTION("not on PATH") {
    const EnvOverride no_override("NORMSIM_GNUPLOT", std::nullopt);
    const EnvOverride empty_path("PATH", (dir.path() / "no-such-bin").string());
    const auto [status, err] = run_plot_command({out.string(), "--quiet"});
    CHECK(status == 1);
    CHECK_THAT(err, Catch::Contains("gnuplot was not found on PATH") &&
                        Catch::Contains("apt-get install gnuplot-nox"));
    CHECK_FALSE(fs::exists(out / "figures"));
  }
  SECTION("NORMSIM_GNUPLOT pointing nowhere") {
    const EnvOverride bad("NORMSIM_GNUPLOT", (dir.path() / "missing-gnuplot").string());
    const auto [status, err] = run_plot_command({out.string(), "--quiet"});
    CHECK(status == 1);
    CHECK_THAT(err, Catch::Contains("NORMSIM_GNUPLOT"));
  }
  SECTION("a gnuplot that dies half-way through writing") {
    // It writes part of every output a script names, then fails: none of it may reach OUT/figures.
    const fs::path fake = dir.path() / "fake-gnuplot";
    std::ofstream(fake) << "#!/bin/sh\nstem=${1%.gp}\nprintf '%%PDF-1.5 trunc' > \"$stem.pdf\"\n"
                           "echo 'line 40: fake failure' >&2\nexit 1\n";
    fs::permissions(fake, fs::perms::owner_all);
    const EnvOverride use_fake("NORMSIM_GNUPLOT", fake.string());
    const auto [status, err] = run_plot_command({out.string(), "--quiet", "--metric", "act_sq"});
    CHECK(status == 1);
    CHECK_THAT(err, Catch::Contains("gnuplot failed") && Catch::Contains("fake failure"));
    CHECK(figure_files(out) == 0);
    CHECK_FALSE(fs::exists(out / "report.md"));
  }
}
