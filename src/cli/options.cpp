#include "cli/options.h"

#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace bosch::cli {

namespace {

std::string shown(const std::string& text) { return text.size() > 40 ? text.substr(0, 40) + "..." : text; }

}  // namespace

std::string check_signed_text(const std::string& text, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);  // decimal only: no 0x, no octal
  if (text.empty() || ec == std::errc::invalid_argument || p != end)
    return fmt::format("expected a decimal integer, got '{}'", shown(text));
  if (ec == std::errc::result_out_of_range || v < lo || v > hi)
    return fmt::format("'{}' is outside [{}, {}]", shown(text), lo, hi);
  return {};
}

std::string check_unsigned_text(const std::string& text, uint64_t hi) {
  if (!text.empty() && text[0] == '-') return fmt::format("'{}' is negative; expected an integer in [0, {}]", shown(text), hi);
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec == std::errc::invalid_argument || p != end)
    return fmt::format("expected a decimal integer, got '{}'", shown(text));
  if (ec == std::errc::result_out_of_range || v > hi) return fmt::format("'{}' is outside [0, {}]", shown(text), hi);
  return {};
}

std::string check_float_text(const std::string& text, double max_abs) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);  // no hex floats, no leading '+'
  if (text.empty() || ec == std::errc::invalid_argument || p != end)
    return fmt::format("expected a number, got '{}'", shown(text));
  if (ec == std::errc::result_out_of_range || !std::isfinite(v) || std::fabs(v) > max_abs)
    return fmt::format("expected a finite number, got '{}'", shown(text));
  return {};
}

}  // namespace bosch::cli
