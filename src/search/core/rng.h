// Deterministic random numbers for the search: xoshiro256** seeded through splitmix64 from one
// explicit seed. Integer-only helpers (no std::uniform_int_distribution, whose output differs
// between standard libraries), so a seed gives the same search on every platform.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "util/splitmix.h"

namespace bosch::search {

using bosch::splitmix64;

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t sm = seed;
    for (auto& w : s_) w = splitmix64(sm);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n) by rejection (no modulo bias). n > 0.
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = next(); while (x >= limit);
    return x % n;
  }
  template <class T>
  void shuffle(std::vector<T>& v) {  // Fisher-Yates
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }
  // k distinct elements of v, in random order.
  template <class T>
  std::vector<T> sample(std::vector<T> v, size_t k) {
    for (size_t i = 0; i < k && i < v.size(); ++i) std::swap(v[i], v[i + below(v.size() - i)]);
    v.resize(std::min(k, v.size()));
    return v;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace bosch::search
