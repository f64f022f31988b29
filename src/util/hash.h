// Hashes that derive seeds from names and numbers (task samples, splits, salts). Like the RNG
// (util/splitmix.h) they are fixed functions: changing one changes every generated sample.
#pragma once
#include <cstdint>
#include <string_view>

#include "util/splitmix.h"

namespace bosch {

// splitmix64 of x as a pure function (the value one step from state x).
inline uint64_t mix64(uint64_t x) { return splitmix64_mix(x + kSplitmixGamma); }
inline uint64_t hash_combine(uint64_t a, uint64_t b) { return mix64(a ^ mix64(b + 0x632be59bd9b4e019ull)); }
inline uint64_t hash_string(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then mixed
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return mix64(h);
}

}  // namespace bosch
