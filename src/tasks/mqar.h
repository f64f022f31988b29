// Training text. "mqar" (multi-query associative recall): many key-value needles in a
// haystack, then many questions, each answered inline in the same text:
//   "... One of the special magic numbers for calm-otter is: 8272917. ... The special magic
//    number for calm-otter mentioned in the provided text is: 8272917. ..."
// The questions use the NIAH answer prefix so training matches the evaluation format.
// answer_spans are byte offsets [begin, end) of the answers after each question.
// Keys and values come from the requested split (train for training), so training text never
// contains a calib/test needle (see tasks/splits.h).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tasks/haystack.h"
#include "tasks/splits.h"
#include "tasks/task_sample.h"
#include "tokenizer/tokenizer.h"

namespace bosch {

struct TrainText {
  std::string text;
  std::vector<std::pair<size_t, size_t>> answer_spans;  // byte offsets into text
  size_t n_tokens = 0;                                  // with BOS when the tokenizer adds one
};

struct MqarOptions {
  int n_pairs = 16;    // needles
  int n_queries = 8;   // questions (distinct keys among the needles)
};

// Text of at most `length` tokens (filled with haystack sentences up to it).
TrainText make_mqar_text(const Tokenizer& tok, int length, Split split, uint64_t seed,
                         const Haystack& haystack, const MqarOptions& opt = {});
// A NIAH sample as training text: prompt + continuation, spans on the answers.
TrainText train_text_from_sample(const TaskSample& s);
// {"text": ..., "answer_spans": [[b, e], ...]}
nlohmann::json train_text_to_json(const TrainText& t);

}  // namespace bosch
