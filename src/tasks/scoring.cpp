#include "tasks/scoring.h"

#include <algorithm>
#include <cctype>
#include <memory>

#include "model/answer_logprobs.h"
#include "model/generate.h"
#include "util/error.h"
#include "util/progress.h"

namespace bosch {

ScoreMode parse_score_mode(const std::string& s) {
  if (s == "tf" || s == "teacher-forced") return ScoreMode::teacher_forced;
  if (s == "generate" || s == "gen") return ScoreMode::generate;
  fail("--mode: expected 'tf' (teacher-forced) or 'generate', got '{}'", s);
}

TaskSampleScore score_sample_from_hidden(const Model& m, const float* hidden, const TaskSample& s) {
  check(!s.answers.empty(), "task sample ({}): no answers to score", s.family);
  const int n_prompt = static_cast<int>(s.prompt_ids.size());
  TaskSampleScore out;
  int right = 0;
  double lp = 0;
  for (const auto& a : s.answers) {
    check(!a.ids.empty(), "task sample ({}): answer '{}' has no tokens", s.family, a.text);
    // Rows are absolute positions: the answer's first token is predicted by the row before it.
    AnswerLogprobs as = score_answer_from_hidden(m, hidden, n_prompt + a.begin, a.ids);
    out.answers.push_back({as.all_argmax, as.mean_logprob});
    right += as.all_argmax ? 1 : 0;
    lp += as.mean_logprob;
  }
  out.teacher_forced_score = out.score = static_cast<double>(right) / s.answers.size();
  out.exact = right == static_cast<int>(s.answers.size());
  out.mean_logprob = lp / s.answers.size();
  return out;
}

int first_scored_row(const TaskSample& s) { return static_cast<int>(s.prompt_ids.size()) - 1; }

TaskSampleScore score_sample(const Model& m, const AttentionPlan& plan, const TaskSample& s) {
  check(!s.prompt_ids.empty() && !s.continuation_ids.empty(),
        "task sample ({}): empty prompt or continuation", s.family);
  std::vector<int32_t> seq(s.prompt_ids);
  seq.insert(seq.end(), s.continuation_ids.begin(), s.continuation_ids.end() - 1);
  const int n = static_cast<int>(seq.size());
  std::vector<float> hidden(static_cast<size_t>(n) * m.config().d_model);
  m.embed(seq.data(), n, hidden.data());
  const int L = m.config().n_layers;
  m.forward_layers(0, L - 1, hidden.data(), n, 0, plan);
  // Only the rows that predict the continuation are read: the last layer computes just those.
  m.forward_last_rows(L - 1, hidden.data(), n, first_scored_row(s), plan);
  return score_sample_from_hidden(m, hidden.data(), s);
}

double string_match_all(const std::string& pred, const std::vector<std::string>& refs) {
  if (refs.empty()) return 0;
  auto lower = [](std::string x) {
    for (auto& c : x) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return x;
  };
  std::string p = lower(pred);
  int found = 0;
  for (const auto& r : refs) found += p.find(lower(r)) != std::string::npos ? 1 : 0;
  return static_cast<double>(found) / refs.size();
}

TaskSampleScore score_sample_generate(const Model& m, const Tokenizer& tok, const AttentionPlan& plan,
                                  const TaskSample& s, int max_new_tokens) {
  TaskSampleScore out = score_sample(m, plan, s);
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = max_new_tokens > 0 ? max_new_tokens
                                    : std::max<int>(64, 2 * static_cast<int>(s.continuation_ids.size()));
  const auto refs = s.answer_texts();
  std::vector<int32_t> ids;
  auto on_token = [&](int32_t t) {
    if (tok.is_eog(t)) return false;
    ids.push_back(t);
    // Decoding more cannot remove a match: stop once all answers are there.
    return string_match_all(tok.decode(ids), refs) < 1.0;
  };
  generate(m, plan, s.prompt_ids, p, on_token);
  out.generated = tok.decode(ids);
  out.score = string_match_all(out.generated, refs);
  out.exact = out.score == 1.0;
  return out;
}

std::vector<TaskSampleScore> score_samples(const Model& m, const AttentionPlan& plan,
                                       const std::vector<TaskSample>& samples,
                                       const ScoreOptions& opt) {
  check(opt.mode != ScoreMode::generate || opt.tokenizer != nullptr,
        "generation scoring needs the tokenizer");
  std::vector<TaskSampleScore> out;
  out.reserve(samples.size());
  std::unique_ptr<Progress> progress;
  if (opt.progress) progress = std::make_unique<Progress>(opt.progress_label, samples.size());
  for (const auto& s : samples) {
    out.push_back(opt.mode == ScoreMode::generate
                      ? score_sample_generate(m, *opt.tokenizer, plan, s, opt.max_new_tokens)
                      : score_sample(m, plan, s));
    if (progress) progress->add(1, s.family);
  }
  return out;
}

}  // namespace bosch
