// Deterministic random numbers for task generation (splitmix64, util/splitmix.h): a seed must
// give the same samples on every platform.
#pragma once
#include <cstdint>

#include "util/hash.h"

namespace bosch {

class TaskRng {
 public:
  explicit TaskRng(uint64_t seed) : s_(seed) {}
  // Steps the state by the gamma and returns mix64 of it, which adds the gamma once more: not
  // plain splitmix64, but every task sample was generated this way, so it stays.
  uint64_t next() { return mix64(s_ += kSplitmixGamma); }
  // Uniform in [0, n), n > 0 (the modulo bias is far below anything measurable here).
  uint64_t below(uint64_t n) { return next() % n; }
  double uniform01() { return unit_double(next()); }

 private:
  uint64_t s_;
};

}  // namespace bosch
