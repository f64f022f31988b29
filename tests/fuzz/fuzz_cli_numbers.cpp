// The CLI's number checks (src/cli/options.h, issue #40): for any text, a check that accepts it
// must leave a value std::from_chars reads exactly (whole text, in range, finite), and a check
// that refuses it must say why. A wrong acceptance (nan, a wrapped -1, an octal 010) aborts.
#include <charconv>
#include <cmath>
#include <limits>

#include "cli/options.h"
#include "fuzz_util.h"

using namespace bosch;

namespace {

[[noreturn]] void finding(const char* what, const std::string& text) {
  std::fprintf(stderr, "fuzz: %s accepted '%s'\n", what, text.c_str());
  std::abort();
}

template <class T>
bool reads_exactly(const std::string& text, T& v) {
  const char* b = text.data();
  const char* e = b + text.size();
  if (b != e && *b == '+') ++b;  // from_chars takes no '+'
  const auto r = std::from_chars(b, e, v);
  return r.ec == std::errc() && r.ptr == e;
}

// Independent of from_chars: the characters a decimal integer or number may hold.
bool only(const std::string& text, const char* allowed) {
  return !text.empty() && text.find_first_not_of(allowed) == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] {
    if (cli::check_signed_text(text, -1000, 1000).empty()) {
      int64_t v = 0;
      if (!only(text, "-0123456789") || !reads_exactly(text, v) || v < -1000 || v > 1000) finding("check_signed_text [-1000, 1000]", text);
    }
    if (cli::check_unsigned_text(text, std::numeric_limits<uint64_t>::max()).empty()) {
      uint64_t v = 0;
      if (!only(text, "0123456789") || !reads_exactly(text, v)) finding("check_unsigned_text", text);
    }
    if (cli::check_float_text(text, 1e6).empty()) {
      double v = 0;
      if (!only(text, "-+.0123456789eE") || !reads_exactly(text, v) || !std::isfinite(v) || std::fabs(v) > 1e6) finding("check_float_text 1e6", text);
    }
  });
  return 0;
}
