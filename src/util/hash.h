// Hashes that derive seeds from names and numbers (task samples, splits, salts). Like the RNG
// (util/splitmix.h) they are fixed functions: changing one changes every generated sample.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/splitmix.h"

namespace bosch {

// splitmix64 of x as a pure function (the value one step from state x).
inline uint64_t mix64(uint64_t x) { return splitmix64_mix(x + kSplitmixGamma); }
inline uint64_t hash_combine(uint64_t a, uint64_t b) { return mix64(a ^ mix64(b + 0x632be59bd9b4e019ull)); }
// FNV-1a 64 over bytes, continuing from h (start from kFnvOffset): checksums and identities
// that must stay stable across versions (journal lines, model identity).
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
inline uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  auto p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
inline uint64_t hash_string(std::string_view s) { return mix64(fnv1a(kFnvOffset, s.data(), s.size())); }

}  // namespace bosch
