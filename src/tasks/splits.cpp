#include "tasks/splits.h"

#include <fmt/format.h>

#include "tasks/word_lists.h"
#include "util/error.h"

namespace bosch {

Split parse_split(std::string_view name) {
  if (name == "train") return Split::train;
  if (name == "calib") return Split::calib;
  if (name == "test") return Split::test;
  fail("--split: unknown split '{}' (expected train, calib or test)", name);
}

const char* split_name(Split s) {
  switch (s) {
    case Split::train: return "train";
    case Split::calib: return "calib";
    case Split::test: return "test";
  }
  return "?";
}

Split split_of(std::string_view s) { return static_cast<Split>(hash_string(s) % 3); }

namespace {
template <class Draw>
std::string draw_in_split(Split s, TaskRng& rng, Draw draw) {
  for (;;) {
    std::string v = draw();
    if (split_of(v) == s) return v;
  }
}
}  // namespace

std::string draw_word_key(Split s, TaskRng& rng) {
  return draw_in_split(s, rng, [&] {
    const auto& a = key_adjectives();
    const auto& n = key_nouns();
    return fmt::format("{}-{}", a[rng.below(a.size())], n[rng.below(n.size())]);
  });
}

std::string draw_number(Split s, TaskRng& rng, int digits) {
  return draw_in_split(s, rng, [&] {
    std::string v(1, char('1' + rng.below(9)));
    for (int i = 1; i < digits; ++i) v += char('0' + rng.below(10));
    return v;
  });
}

std::string draw_uuid(Split s, TaskRng& rng) {
  return draw_in_split(s, rng, [&] {
    static const char* hex = "0123456789abcdef";
    std::string v;
    for (int i = 0; i < 32; ++i) {
      if (i == 8 || i == 12 || i == 16 || i == 20) v += '-';
      int d = static_cast<int>(rng.below(16));
      if (i == 12) d = 4;                // version 4
      if (i == 16) d = 8 + (d & 3);      // variant 10xx
      v += hex[d];
    }
    return v;
  });
}

}  // namespace bosch
