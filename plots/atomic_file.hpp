// Writing a file so that readers see either the old file or the whole new one, never a part: write a
// temporary file beside it, then rename it over the target (rename is atomic within one file system).
#pragma once

#include <filesystem>
#include <string_view>

namespace normsim::plots {

// Throws an environment PlotError (and leaves no temporary behind) if the file cannot be written.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// A temporary name beside `path`, unique within this process and across processes.
std::filesystem::path temporary_sibling(const std::filesystem::path& path);

}  // namespace normsim::plots
