// Shared by the libFuzzer harnesses: the readers take paths, so each input is written to a
// scratch file (in /dev/shm when available) and read back. A harness passes when every input
// either loads or throws bosch::Error; anything else (another exception, a signal, a sanitizer
// report, a leak, a slow or huge input) is a finding.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "util/error.h"

namespace bosch::fuzz {

inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    auto d = base / ("bosch_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string write_scratch(const std::string& name, std::string_view bytes) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// Splits the input at the first NUL byte: (first part, rest or "" when there is no NUL).
inline std::pair<std::string_view, std::string_view> split_at_nul(const uint8_t* data, size_t size) {
  std::string_view s(reinterpret_cast<const char*>(data), size);
  const size_t z = s.find('\0');
  if (z == std::string_view::npos) return {s, {}};
  return {s.substr(0, z), s.substr(z + 1)};
}

// Runs f; bosch::Error is the expected outcome for bad input; any other exception aborts, so
// libFuzzer reports it with the input.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: non-bosch exception: %s\n", e.what());
    std::abort();
  }
}

}  // namespace bosch::fuzz
