// Training text for tools/train (`bosch gen --train`): a NIAH sample of the train split as
// plain text with the byte spans of its answers, so the trainer can weight the answer tokens.
// The train split keeps every calib/test key, value and haystack seed out of training text
// (see tasks/splits.h).
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tasks/task_sample.h"

namespace bosch {

struct TrainText {
  std::string text;
  std::vector<std::pair<size_t, size_t>> answer_spans;  // byte offsets [begin, end) into text
  size_t n_tokens = 0;                                  // with BOS when the tokenizer adds one
};

// A NIAH sample as training text: prompt + continuation, spans on the answers.
TrainText train_text_from_sample(const TaskSample& s);
// {"text": ..., "answer_spans": [[b, e], ...]}
nlohmann::json train_text_to_json(const TrainText& t);

}  // namespace bosch
