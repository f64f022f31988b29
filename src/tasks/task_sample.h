// One evaluation sample: a prompt (token ids, ready for a prefill) and the continuation the
// model should emit after it. The continuation holds every answer, in order, as text
//   " {answer_1}, {answer_2}, ..."     (one answer: " {answer}")
// and each answer has a token span in it. Scoring teacher-forces the whole continuation in one
// prefill of prompt + continuation; answer i is judged on its own tokens (including its leading
// space), given the prompt and the answers before it. The ", " separators are fed but not judged.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tasks/splits.h"

namespace bosch {

struct TaskAnswer {
  std::string text;          // the answer itself, e.g. "8272917"
  std::vector<int32_t> ids;  // its tokens = continuation_ids[begin, begin + ids.size())
  int begin = 0;
};

struct TaskSample {
  std::string family;        // "single_noise", "multikey", "passkey", ...
  Split split = Split::test;
  int length = 0;            // requested length: prompt_ids + continuation_ids fit within it
  double depth = 0;          // 0..1, where the (first) needle sits in the haystack
  uint64_t seed = 0;         // the sample's own seed (regenerates exactly this sample)
  std::string prompt;        // text of prompt_ids (chat template included when used)
  std::vector<int32_t> prompt_ids;  // BOS included when the tokenizer adds one
  std::string continuation;
  std::vector<int32_t> continuation_ids;
  std::vector<TaskAnswer> answers;
  std::vector<std::string> keys, values;  // every needle's key and value (distractors too)

  size_t n_tokens() const { return prompt_ids.size() + continuation_ids.size(); }
  std::vector<std::string> answer_texts() const;
};

// JSONL record: family, split, length, depth, seed, prompt, prompt_ids, continuation,
// continuation_ids, answers [{text, ids, begin}], keys, values, n_prompt_tokens.
nlohmann::json sample_to_json(const TaskSample& s);
TaskSample sample_from_json(const nlohmann::json& j);  // Error naming the missing field

}  // namespace bosch
