// Deterministic random numbers for task generation. Hand-written (splitmix64) instead of
// <random> distributions, whose outputs differ between standard libraries: a seed must give
// the same samples on every platform.
#pragma once
#include <cstdint>
#include <string_view>

namespace bosch {

inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline uint64_t hash_combine(uint64_t a, uint64_t b) { return mix64(a ^ mix64(b + 0x632be59bd9b4e019ull)); }
inline uint64_t hash_string(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then mixed
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return mix64(h);
}

class TaskRng {
 public:
  explicit TaskRng(uint64_t seed) : s_(seed) {}
  uint64_t next() { return mix64(s_ += 0x9e3779b97f4a7c15ull); }
  // Uniform in [0, n), n > 0 (the modulo bias is far below anything measurable here).
  uint64_t below(uint64_t n) { return next() % n; }
  double uniform01() { return (next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s_;
};

}  // namespace bosch
