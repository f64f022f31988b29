// PCRE2 in UTF + UCP mode (\d, \w, \b and \s follow Unicode properties, as in Python's `re` on
// str and in the Rust `regex` crate), JIT-compiled where the platform allows. The one wrapper
// around PCRE2: the tokenizers' split patterns and the LongBench metrics both use it.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace bosch {

class Regex {
 public:
  struct Match {
    size_t begin, end;              // the whole match, byte offsets into the subject
    size_t group_begin, group_end;  // group 1; the whole match when there is no group 1
  };
  // `what` names the pattern in errors (`split regex /'s|.../`); throws Error when it does not
  // compile.
  Regex(const std::string& pattern, std::string what);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Calls fn for each non-overlapping match of subject (valid UTF-8), left to right, empty
  // matches included; after an empty match the search resumes one code point further (as
  // Python's re.finditer and the Hugging Face pre-tokenizers do).
  void for_each_match(std::string_view subject, const std::function<void(const Match&)>& fn) const;

  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_, what_;
  void* code_ = nullptr;  // pcre2_code_8*
  bool jit_ = false;
};

// The compiled pattern from a process-wide cache (thread-safe, kept until exit): for code that
// matches a handful of fixed patterns many times.
const Regex& cached_regex(const std::string& pattern, const std::string& what);

}  // namespace bosch
