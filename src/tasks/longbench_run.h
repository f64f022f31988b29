// Runs LongBench (v1) the way the official pred.py does: fill the dataset's template, middle-
// truncate the prompt to a token budget, wrap it in the chat template (except trec, triviaqa,
// samsum, lsht, lcc, repobench-p), greedy-decode up to dataset2maxlen new tokens, then score
// with eval.py's metrics (longbench_metrics.h).
#pragma once
#include <string>
#include <vector>

#include "model/attention_plan.h"
#include "model/model.h"
#include "tasks/longbench_result.h"
#include "tokenizer/tokenizer.h"

namespace bosch {

struct LongBenchOptions {
  // Directories holding <dataset>.jsonl / <dataset>_e.jsonl files, and/or individual files.
  std::vector<std::string> data;
  // Keep only these datasets (names as in dataset2prompt, e.g. "hotpotqa"); empty = all found.
  std::vector<std::string> datasets;
  // pred.py's max_length (config/model2maxlen.json: 3500 for 4k models, 31500 for 32k ones).
  int max_prompt_tokens = 3500;
  int max_samples = 0;        // per dataset file; 0 = all
  bool chat_template = true;  // apply the model's chat template (where pred.py does)
};

LongBenchResult run_longbench(const Model& m, const Tokenizer& tok, const AttentionPlan& plan,
                              const LongBenchOptions& opt);

namespace longbench {

struct PromptIds {
  std::vector<int32_t> ids;
  bool truncated = false;
};
// pred.py's prompt: template filled; if its tokens (with BOS when the tokenizer adds one)
// exceed `budget`, the text becomes decode(first budget/2 ids) + decode(last budget/2 ids)
// (special tokens skipped); then the chat template when `chat` and the task allows it and the
// tokenizer has one; then tokenized again (BOS prepended when the tokenizer adds one and the
// text does not already start with it).
PromptIds build_prompt(const Tokenizer& tok, const TaskSpec& task, const Sample& s, int budget,
                       bool chat);

// Decoded generation with BOS / end-of-generation ids removed (skip_special_tokens=True).
std::string decode_skip_special(const Tokenizer& tok, const std::vector<int32_t>& ids);

}  // namespace longbench
}  // namespace bosch
