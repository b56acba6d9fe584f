// Atomic file replacement (see atomic_file.hpp).
#include "atomic_file.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <system_error>

#include "plot_error.hpp"

namespace normsim::plots {

namespace fs = std::filesystem;

fs::path temporary_sibling(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  // A leading dot keeps it out of listings and globs like *.pdf while it exists.
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
  std::string name = ".";
  name += path.filename().string();
  name += ".tmp-";
  name += std::to_string(::getpid());
  name += '-';
  name += std::to_string(counter++);
  return path.parent_path() / name;
}

void write_file_atomically(const fs::path& path, std::string_view content) {
  const fs::path temporary = temporary_sibling(path);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw environment_error("cannot write " + path.string() +
                              " (check that the folder exists, is writable and the disk is not full)");
    }
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw environment_error("cannot move the new " + path.filename().string() + " into place at " +
                            path.string() + ": " + error.message());
  }
}

}  // namespace normsim::plots
