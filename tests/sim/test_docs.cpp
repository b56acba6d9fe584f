// The metric reference in docs/metrics.md holds exactly what `normsim list metrics --markdown` prints, so
// the documentation cannot drift from the table in vocab/metrics.def.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "test_util.hpp"

namespace {
// The block of docs/<page> between "<!-- BEGIN normsim <args> -->" and its END line, and what `normsim
// <args>` prints.
std::pair<std::string, std::string> committed_and_printed(const std::string& page, const std::string& args) {
  const std::string doc = normsim::test::read_text(std::string(NORMSIM_SOURCE_DIR) + "/docs/" + page);
  const std::string begin = "<!-- BEGIN normsim " + args + " -->\n";
  const std::string end = "<!-- END normsim " + args + " -->";
  const auto b = doc.find(begin), e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  std::string printed;
  FILE* p = popen((std::string(NORMSIM_BINARY_DIR) + "/normsim " + args).c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) printed.append(buf, n);
  REQUIRE(pclose(p) == 0);
  return {doc.substr(b + begin.size(), e - b - begin.size()), printed};
}
}  // namespace

TEST_CASE("docs/metrics.md holds the program's metric table") {
  const auto [committed, printed] = committed_and_printed("metrics.md", "list metrics --markdown");
  CHECK(committed == printed);
}

// Every preset's rules and sources as `normsim list parametrizations` prints them (vocab/
// builtin_parametrizations.cpp), so the page cannot drift from the data.
TEST_CASE("list_parametrizations_doc") {
  const auto [committed, printed] =
      committed_and_printed("parametrizations.md", "list parametrizations --markdown");
  INFO("regenerate the block with: build/normsim list parametrizations --markdown");
  CHECK(committed == printed);
}

// The Markdown of a page without its code: fenced blocks and inline code spans dropped.
std::string prose_of(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.rfind("```", 0) == 0) continue;
    bool code = false;
    for (char c : line) {
      if (c == '`')
        code = !code;
      else if (!code)
        out += c;
    }
    out += '\n';
  }
  return out;
}

// Every relative link of the committed Markdown (README, docs/, experiments/) names a file of the repository:
// figures copied by hand or a report moved to another folder broke such links before.
TEST_CASE("relative links in the Markdown docs name files that exist") {
  namespace fs = std::filesystem;
  const fs::path root(NORMSIM_SOURCE_DIR);
  std::vector<fs::path> pages{root / "README.md", root / "experiments" / "README.md"};
  for (const auto& entry : fs::recursive_directory_iterator(root / "docs"))
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  int links = 0;
  for (const fs::path& page : pages) {
    const std::string text = prose_of(normsim::test::read_text(page));
    for (auto at = text.find("]("); at != std::string::npos; at = text.find("](", at + 2)) {
      const auto close = text.find(')', at);
      std::string target = text.substr(at + 2, close - at - 2);
      target = target.substr(0, target.find('#'));
      if (target.empty() || target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0)
        continue;
      INFO(page.string() << " links " << target);
      CHECK(fs::exists(page.parent_path() / target));
      ++links;
    }
  }
  CHECK(links > 20);
}
