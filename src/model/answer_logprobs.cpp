#include "model/answer_logprobs.h"

#include <cmath>

#include "kernels/ops.h"
#include "util/error.h"

namespace bosch {

AnswerLogprobs score_answer_from_hidden(const Model& m, const float* hidden, int n_prompt,
                                        const std::vector<int32_t>& answer) {
  const int V = m.config().vocab_size;
  const int na = static_cast<int>(answer.size());
  check(n_prompt >= 1, "scoring needs a non-empty prompt");
  check(na >= 1, "scoring needs a non-empty answer");
  // Row r predicts the token at r + 1: answer[i] is predicted by row n_prompt - 1 + i.
  std::vector<int> rows(na);
  for (int i = 0; i < na; ++i) rows[i] = n_prompt - 1 + i;
  std::vector<float> logits(static_cast<size_t>(na) * V);
  m.logits(hidden, rows.data(), na, logits.data());
  AnswerLogprobs s;
  s.all_argmax = true;
  s.token_logprobs.resize(na);
  double sum = 0;
  for (int i = 0; i < na; ++i) {
    const float* row = &logits[static_cast<size_t>(i) * V];
    const int32_t target = answer[i];
    check(target >= 0 && target < V, "answer token {} is outside the vocabulary of {}", target, V);
    double lse = log_sum_exp(row, V);
    s.token_logprobs[i] = static_cast<float>(row[target] - lse);
    sum += s.token_logprobs[i];
    // Greedy picks the lowest id among equal maxima (same rule as sample_token).
    for (int t = 0; t < V; ++t) {
      if (row[t] > row[target] || (row[t] == row[target] && t < target)) {
        s.all_argmax = false;
        break;
      }
    }
  }
  s.mean_logprob = sum / na;
  return s;
}

AnswerLogprobs score_answer(const Model& m, const AttentionPlan& plan, const std::vector<int32_t>& prompt,
                            const std::vector<int32_t>& answer) {
  std::vector<int32_t> seq(prompt);
  seq.insert(seq.end(), answer.begin(), answer.end());
  // The last answer token is never an input that predicts anything we score.
  seq.pop_back();
  const int n = static_cast<int>(seq.size());
  std::vector<float> hidden(static_cast<size_t>(n) * m.config().d_model);
  m.embed(seq.data(), n, hidden.data());
  m.forward_layers(0, m.config().n_layers, hidden.data(), n, 0, plan);
  return score_answer_from_hidden(m, hidden.data(), static_cast<int>(prompt.size()), answer);
}

}  // namespace bosch
