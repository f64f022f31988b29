#include "cli/options.h"

#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <type_traits>

#include "util/checked.h"

namespace bosch::cli {

namespace {

// Decimal only (from_chars: no 0x, no octal, no leading '+'), within [lo, hi].
template <class I>
std::string check_integer_text(const std::string& text, I lo, I hi) {
  if (std::is_unsigned_v<I> && !text.empty() && text[0] == '-')
    return fmt::format("'{}' is negative; expected an integer in [0, {}]", excerpt(text, 40), hi);
  I v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec == std::errc::invalid_argument || p != end)
    return fmt::format("expected a decimal integer, got '{}'", excerpt(text, 40));
  if (ec == std::errc::result_out_of_range || v < lo || v > hi)
    return fmt::format("'{}' is outside [{}, {}]", excerpt(text, 40), lo, hi);
  return {};
}

}  // namespace

std::string check_signed_text(const std::string& text, int64_t lo, int64_t hi) {
  return check_integer_text<int64_t>(text, lo, hi);
}

std::string check_unsigned_text(const std::string& text, uint64_t hi) {
  return check_integer_text<uint64_t>(text, 0, hi);
}

std::string check_float_text(const std::string& text, double max_abs) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);  // no hex floats, no leading '+'
  if (text.empty() || ec == std::errc::invalid_argument || p != end)
    return fmt::format("expected a number, got '{}'", excerpt(text, 40));
  if (ec == std::errc::result_out_of_range || !std::isfinite(v) || std::fabs(v) > max_abs)
    return fmt::format("expected a finite number, got '{}'", excerpt(text, 40));
  return {};
}

}  // namespace bosch::cli
