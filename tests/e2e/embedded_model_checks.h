// What the embedded models' gate tests (test_default_model, test_deep_model) share: the 24
// test-split NIAH samples they score (8 families x 3 depths at 1024 tokens) and the mean exact
// match of a plan on them.
#pragma once
#include <vector>

#include "model/model.h"
#include "tasks/niah.h"
#include "tasks/prompt_fit.h"
#include "tasks/scoring.h"
#include "tokenizer/tokenizer.h"

namespace bosch::tests {

inline std::vector<TaskSample> gate_samples(const Tokenizer& tok) {
  NiahOptions o;
  o.lengths = {1024};
  o.depths = depth_grid(3);
  o.samples = 1;
  o.split = Split::test;
  o.chat = chat_wrap_for(tok, true);
  return generate_niah(tok, o);
}

inline double exact_match(const Model& m, const AttentionPlan& plan, const std::vector<TaskSample>& samples) {
  ScoreOptions opt;
  opt.progress = false;
  double sum = 0;
  for (const auto& s : score_samples(m, plan, samples, opt)) sum += s.score;
  return sum / static_cast<double>(samples.size());
}

}  // namespace bosch::tests
