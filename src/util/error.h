// Errors: every failure the user can cause is a bosch::Error whose message names the file,
// the field and what was expected. Bad input never aborts the process.
#pragma once
#include <fmt/format.h>
#include <stdexcept>
#include <string>

namespace bosch {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class... Args>
[[noreturn]] inline void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

// check(cond, "...{}...", args): throws bosch::Error when cond is false.
template <class... Args>
inline void check(bool cond, fmt::format_string<Args...> f, Args&&... args) {
  if (!cond) throw Error(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace bosch
