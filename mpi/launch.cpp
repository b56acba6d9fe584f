// Launcher environment and GPU binding of mpi/launch.hpp.
#include "mpi/launch.hpp"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string_view>
#include <vector>

namespace normsim::mpi {

namespace {

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  const std::string_view s(v);
  int x = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return x;
}

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> parts;
  while (!s.empty()) {
    const auto comma = s.find(',');
    if (const auto part = s.substr(0, comma); !part.empty()) parts.emplace_back(part);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return parts;
}

// The NVIDIA GPUs this process can open: /dev/nvidia0, /dev/nvidia1, ... (not nvidiactl, nvidia-uvm).
int gpu_device_files() {
  static const std::regex gpu("nvidia[0-9]+");
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev", ec))
    n += std::regex_match(e.path().filename().string(), gpu);
  return n;
}

}  // namespace

bool launched_with_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_STEP_NUM_TASKS"})
    if (env_int(name).value_or(0) > 1) return true;
  return false;
}

std::optional<int> world_rank_from_env() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (auto r = env_int(name)) return r;
  return std::nullopt;
}

std::optional<int> local_rank_from_env() {
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK", "SLURM_LOCALID"})
    if (auto r = env_int(name); r && *r >= 0) return r;
  return std::nullopt;
}

std::string bind_gpu(int local_rank) {
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) {
    const std::string visible = env;  // setenv below may invalidate env
    const auto devices = split_commas(visible);
    if (devices.empty()) return "";
    if (devices.size() == 1) return "CUDA_VISIBLE_DEVICES=" + devices.front() + " (given)";
    const std::string& mine = devices[static_cast<std::size_t>(local_rank) % devices.size()];
    ::setenv("CUDA_VISIBLE_DEVICES", mine.c_str(), 1);
    return "CUDA_VISIBLE_DEVICES=" + mine + " (of " + visible + ")";
  }
  const int count = gpu_device_files();
  if (count == 0) return "";
  const std::string mine = std::to_string(local_rank % count);
  ::setenv("CUDA_VISIBLE_DEVICES", mine.c_str(), 1);
  return "CUDA_VISIBLE_DEVICES=" + mine + " (of " + std::to_string(count) + " GPUs)";
}

}  // namespace normsim::mpi
