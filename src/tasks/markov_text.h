// "markov" filler language: sentences of words from a built-in vocabulary where each word
// depends on the previous two through a fixed random table (built from table_seed). The table
// is part of the language definition: the embedded default model is trained on it, so
// kMarkovTableSeed must not change. The sentence stream itself comes from the caller's rng.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/task_rng.h"

namespace bosch {

inline constexpr uint64_t kMarkovTableSeed = 0xB05C4'2024ull;

class MarkovText {
 public:
  explicit MarkovText(uint64_t table_seed = kMarkovTableSeed);
  // One sentence: 6..15 words, first letter capitalised, ending in '.'.
  std::string sentence(TaskRng& rng) const;
  // Index of the word following (prev2, prev1) for the random draw r in [0, 1).
  int next_word(int prev2, int prev1, double r) const;

 private:
  static constexpr int kSuccessors = 6;
  uint64_t seed_;
  std::vector<int> successors_;  // [vocab][kSuccessors]
};

}  // namespace bosch
