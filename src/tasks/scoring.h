// Scoring a TaskSample against a model under an attention plan.
//
// Teacher-forced (the fast path the search calls thousands of times): ONE prefill of
// prompt + continuation (minus its last token), LM head only on answer rows. Answer i is right
// when every one of its tokens is the argmax (greedy decoding, lowest id on ties, would emit
// it given the prompt and the answers before it); its log-probability is the mean over its
// tokens. Sample score = fraction of answers right (0 or 1 with one answer).
// Generation: greedy decoding from the prompt, scored with RULER's string_match_all (fraction
// of answers contained, case-insensitively, in the output).
#pragma once
#include <string>
#include <vector>

#include "model/attention_plan.h"
#include "model/model.h"
#include "tasks/task_sample.h"
#include "tokenizer/tokenizer.h"

namespace bosch {

enum class ScoreMode { teacher_forced, generate };
ScoreMode parse_score_mode(const std::string& s);  // "tf" | "teacher-forced" | "generate"

// One answer of a sample (AnswerResult) and the whole sample (TaskSampleScore); the search
// turns these into its own scores of a mask (search/core/objective.h: MaskScore).
struct AnswerResult {
  bool correct = false;     // teacher-forced: all tokens argmax
  double mean_logprob = 0;  // mean log p over the answer's tokens
};

struct TaskSampleScore {
  double score = 0;         // fraction of answers right in the chosen mode (the metric)
  bool exact = false;       // score == 1
  double mean_logprob = 0;  // mean over answers of their mean token log-prob (teacher-forced)
  double teacher_forced_score = 0;  // the teacher-forced fraction (equals score in tf mode)
  std::vector<AnswerResult> answers;
  std::string generated;    // generate mode: the decoded output
};

// Teacher-forced score of one sample.
TaskSampleScore score_sample(const Model& m, const AttentionPlan& plan, const TaskSample& s);
// The same from hidden states after the last layer (final norm not applied) for the tokens
// prompt_ids + continuation_ids without the last one: for callers that cache lower layers.
TaskSampleScore score_sample_from_hidden(const Model& m, const float* hidden, const TaskSample& s);
// The first hidden row score_sample_from_hidden reads (the one predicting the first continuation
// token): a last layer run from it on (Model::forward_last_rows) is all scoring needs.
int first_scored_row(const TaskSample& s);
// Greedy generation + string_match_all; also fills the teacher-forced fields.
// max_new_tokens <= 0: max(64, 2 * continuation tokens). Stops at end-of-generation tokens or
// once every answer has appeared.
TaskSampleScore score_sample_generate(const Model& m, const Tokenizer& tok, const AttentionPlan& plan,
                                  const TaskSample& s, int max_new_tokens = 0);

// RULER string_match_all for one prediction: fraction of refs found in pred (ASCII
// case-insensitive substring match).
double string_match_all(const std::string& pred, const std::vector<std::string>& refs);

struct ScoreOptions {
  ScoreMode mode = ScoreMode::teacher_forced;
  const Tokenizer* tokenizer = nullptr;  // required for generate
  int max_new_tokens = 0;
  std::string progress_label = "scoring";
  bool progress = true;
};
// Scores samples in order, with progress and ETA on stderr.
std::vector<TaskSampleScore> score_samples(const Model& m, const AttentionPlan& plan,
                                       const std::vector<TaskSample>& samples,
                                       const ScoreOptions& opt = {});

}  // namespace bosch
