// Random-token samples with two answers each (no tokenizer needed), shared by the objective tests.
#pragma once
#include <vector>

#include "search/core/rng.h"
#include "tasks/task_sample.h"

namespace bosch::search::testing {

// n samples; sample i has prompt_len(i) tokens (a first token `first` when >= 0), then a
// 5-token continuation whose tokens 0-1 and 3-4 are the two answers; every random token is drawn
// uniformly from [lo, vocab).
template <class PromptLen>
std::vector<TaskSample> two_answer_samples(int n, uint64_t seed, int vocab, int lo, int first, PromptLen prompt_len) {
  Rng rng(seed);
  std::vector<TaskSample> out;
  for (int i = 0; i < n; ++i) {
    TaskSample s;
    s.seed = i;
    const int len = prompt_len(i);
    if (first >= 0) s.prompt_ids.push_back(first);
    while (static_cast<int>(s.prompt_ids.size()) < len) s.prompt_ids.push_back(lo + static_cast<int>(rng.below(vocab - lo)));
    for (int t = 0; t < 5; ++t) s.continuation_ids.push_back(lo + static_cast<int>(rng.below(vocab - lo)));
    TaskAnswer a, b;
    a.ids = {s.continuation_ids.begin(), s.continuation_ids.begin() + 2};
    a.begin = 0;
    b.ids = {s.continuation_ids.begin() + 3, s.continuation_ids.end()};
    b.begin = 3;
    s.answers = {a, b};
    out.push_back(s);
  }
  return out;
}

}  // namespace bosch::search::testing
