// Token-level, teacher-forced scoring of one answer after a prompt: one prefill of
// prompt + answer, LM head only on the rows that predict answer tokens. The sample-level score
// of the tasks (fraction of answers right, tasks/scoring.h) is built from this.
#pragma once
#include <cstdint>
#include <vector>

#include "model/attention_plan.h"
#include "model/model.h"

namespace bosch {

struct AnswerLogprobs {
  std::vector<float> token_logprobs;  // log p(answer[i] | prefix)
  bool all_argmax = false;            // greedy decoding would reproduce the answer exactly
  double mean_logprob = 0;
};
AnswerLogprobs score_answer(const Model& m, const AttentionPlan& plan,
                            const std::vector<int32_t>& prompt, const std::vector<int32_t>& answer);
// The same from hidden states after the last layer (for callers that cache layers).
AnswerLogprobs score_answer_from_hidden(const Model& m, const float* hidden, int n_prompt,
                                        const std::vector<int32_t>& answer);

}  // namespace bosch
