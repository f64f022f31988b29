#include "tasks/markov_text.h"

#include <cctype>

#include "tasks/word_lists.h"

namespace bosch {

MarkovText::MarkovText(uint64_t table_seed) : seed_(table_seed) {
  const int v = static_cast<int>(markov_vocabulary().size());
  TaskRng rng(table_seed);
  successors_.resize(static_cast<size_t>(v) * kSuccessors);
  for (auto& s : successors_) s = static_cast<int>(rng.below(v));
}

int MarkovText::next_word(int prev2, int prev1, double r) const {
  // Second order: the successor set depends on prev1, their weights on (prev2, prev1).
  const int* succ = &successors_[static_cast<size_t>(prev1) * kSuccessors];
  double w[kSuccessors], total = 0;
  for (int j = 0; j < kSuccessors; ++j) {
    uint64_t h = hash_combine(hash_combine(seed_, prev2 + 1), prev1 * kSuccessors + j);
    w[j] = 1.0 + static_cast<double>(h % 16);
    total += w[j];
  }
  double x = r * total;
  for (int j = 0; j < kSuccessors; ++j) {
    if (x < w[j]) return succ[j];
    x -= w[j];
  }
  return succ[kSuccessors - 1];
}

std::string MarkovText::sentence(TaskRng& rng) const {
  const auto& vocab = markov_vocabulary();
  int n_words = 6 + static_cast<int>(rng.below(10));
  int p2 = -1, p1 = static_cast<int>(rng.below(vocab.size()));
  std::string s(vocab[p1]);
  s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  for (int i = 1; i < n_words; ++i) {
    int w = next_word(p2, p1, rng.uniform01());
    s += ' ';
    s += vocab[w];
    p2 = p1;
    p1 = w;
  }
  s += '.';
  return s;
}

}  // namespace bosch
