// Helpers every test layer uses (included as "../test_support.h"): the bosch binary under test,
// the message of an expected bosch::Error, a fresh scratch directory, and running the CLI.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "util/error.h"

namespace bosch::tests {

// A file of the project's own test data (tests/data/REL): every fixture a test needs is carried
// in the repository, so a fresh clone runs every test.
inline std::string test_data(const std::string& rel) { return std::string(BOSCH_SOURCE_DIR) + "/tests/data/" + rel; }
// stories260K (tests/data/stories260K: a real pretrained Llama, MIT) and its published greedy text.
inline std::string stories_model() { return test_data("stories260K/stories260K.gguf"); }
inline std::string stories_greedy() { return test_data("stories260K/stories260K.greedy.txt"); }

// The release binary: $BOSCH_BIN (ctest sets it) or the build directory's.
inline std::string bosch_bin() {
  const char* e = std::getenv("BOSCH_BIN");
  return e ? e : std::string(BOSCH_BINARY_DIR) + "/bosch";
}

// The message of the bosch::Error that f throws; a test failure when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no bosch::Error";
  return "";
}

// An empty directory under the system temp dir, unique to this process and `name`.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("bosch_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

struct CliResult {
  int rc;           // exit status, -1 when killed by a signal
  std::string out;  // stdout and stderr together
};

// Runs `bosch ARGS` quietly (no progress lines) and returns its exit status and output.
inline CliResult run_cli(const std::string& args) {
  const std::string cmd = "BOSCH_QUIET=1 " + bosch_bin() + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed: " + cmd};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

}  // namespace bosch::tests
