// Shared pieces of the task generators: fitting a variable amount of haystack into a token
// budget, wrapping a user message into the chat template, and tokenizing prompt+continuation
// once into the token spans of a TaskSample.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tasks/task_sample.h"
#include "tokenizer/tokenizer.h"

namespace bosch {

// The chat template applied to one user message, split around the message so that a huge
// haystack message is wrapped by concatenation. Disabled: prefix "", suffix "\n".
struct ChatWrap {
  bool enabled = false;
  std::string prefix, suffix = "\n";
  std::string wrap(const std::string& user_message) const { return prefix + user_message + suffix; }
};
// Uses the tokenizer's template when `use_template` and the model has one.
ChatWrap chat_wrap_for(const Tokenizer& tok, bool use_template);

// Largest k >= 0 with fits(k), searched around `estimate` (galloping, then bisection), so a
// long prompt is tokenized O(log distance) times. Assumes fits is monotone (true up to some k);
// the result is always a k for which fits(k) was seen true. Returns -1 when fits(0) is false.
int largest_fitting(int estimate, const std::function<bool(int)>& fits);

// Tokenizes prompt + continuation in one pass (BOS when the tokenizer adds one) and fills
// out.prompt/prompt_ids/continuation/continuation_ids/answers. answer_ranges are byte ranges of
// each answer inside `continuation`; an answer's tokens are those overlapping its range
// extended by the one space before it. A token that straddles the prompt/continuation border
// goes to the continuation (prompt text shortened to match).
void tokenize_sample(const Tokenizer& tok, const std::string& prompt,
                     const std::string& continuation,
                     const std::vector<std::pair<size_t, size_t>>& answer_ranges, TaskSample& out);

}  // namespace bosch
