// splitmix64 (Steele, Lea & Flood 2014): the one seed mixer of the project. Task generation,
// the search's xoshiro seeding, the random model writer, sampling and the synthetic KV fill all
// step it, never <random> distributions (whose outputs differ between standard libraries), so a
// seed gives the same numbers on every platform.
#pragma once
#include <cstdint>

namespace bosch {

inline constexpr uint64_t kSplitmixGamma = 0x9e3779b97f4a7c15ull;

// The output function: a bijective mix of one 64-bit word.
inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// One step: advances state by the gamma, returns the mixed new state.
inline uint64_t splitmix64(uint64_t& state) { return splitmix64_mix(state += kSplitmixGamma); }

// A double in [0, 1) from the top 53 bits of x.
inline double unit_double(uint64_t x) { return static_cast<double>(x >> 11) * 0x1.0p-53; }

}  // namespace bosch
