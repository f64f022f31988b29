// Every command-line option is declared through add_opt, which attaches a strict check of the
// option's text chosen by its C++ type: CLI11 2.1 reads floats with strtold (nan and inf pass
// every CLI::Range, since NaN compares false), integers with base 0 (010 is octal, 0x10 hex),
// and unsigned ones with strtoull (-1 becomes 2^64 - 1, overflow saturates). Checks run in
// order, so a Range added after add_opt only ever sees a finite, exactly representable value.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace bosch::cli {

// "" when `text` is a decimal integer in [lo, hi] (signed) or [0, hi] (unsigned), else the
// message CLI11 prints after the option's name.
std::string check_signed_text(const std::string& text, int64_t lo, int64_t hi);
std::string check_unsigned_text(const std::string& text, uint64_t hi);
// "" when `text` is a finite number (decimal or scientific) within +-max_abs.
std::string check_float_text(const std::string& text, double max_abs);

template <class T>
struct OptionValue {
  using type = T;
};
template <class T>
struct OptionValue<std::vector<T>> {
  using type = T;  // CLI11 checks each element
};

template <class T>
CLI::Validator number_check() {
  using V = typename OptionValue<T>::type;
  if constexpr (std::is_same_v<V, bool> || !std::is_arithmetic_v<V>) {
    return CLI::Validator([](std::string&) { return std::string(); }, "");
  } else if constexpr (std::is_floating_point_v<V>) {
    return CLI::Validator([](std::string& s) { return check_float_text(s, std::numeric_limits<V>::max()); },
                          "");
  } else if constexpr (std::is_signed_v<V>) {
    return CLI::Validator(
        [](std::string& s) {
          return check_signed_text(s, std::numeric_limits<V>::min(), std::numeric_limits<V>::max());
        },
        "");
  } else {
    return CLI::Validator([](std::string& s) { return check_unsigned_text(s, std::numeric_limits<V>::max()); },
                          "");
  }
}

// app.add_option(name, field, help) with the type's number check.
template <class T>
CLI::Option* add_opt(CLI::App& app, std::string name, T& field, std::string help = "") {
  CLI::Option* o = app.add_option(std::move(name), field, std::move(help));
  if constexpr (!std::is_same_v<typename OptionValue<T>::type, bool> &&
                std::is_arithmetic_v<typename OptionValue<T>::type>)
    o->check(number_check<T>());
  return o;
}

}  // namespace bosch::cli
