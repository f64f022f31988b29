#include "search/objectives/calibration.h"

#include "model/forward_memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "search/objectives/objective_spec.h"
#include "tasks/longbench.h"
#include "tasks/niah.h"
#include "tasks/prompt_fit.h"
#include "tasks/scoring.h"
#include "util/progress.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace bosch::search {

namespace {

Calibration niah_calibration(const Tokenizer& tok, const CalibrationOptions& o,
                             const std::string& suite) {
  Calibration c;
  c.samples = generate_niah(tok, niah_options(suite, o.lengths, o.depths, o.samples, o.seed, Split::calib,
                                              o.haystack, chat_wrap_for(tok, o.chat)));
  c.description = fmt::format("{} calib lengths {} depths {} samples {} seed {} haystack {}", suite,
                              fmt::join(o.lengths, ","), o.depths, o.samples, o.seed, o.haystack);
  return c;
}

Calibration text_calibration(const Tokenizer& tok, const CalibrationOptions& o,
                             const std::string& path) {
  const std::vector<int32_t> ids = tok.encode(read_file(path, kMaxTextBytes, "text objective"), tok.adds_bos());
  const int prefix = o.swa.window + o.swa.sinks;
  Calibration c;
  c.exact_weight = 0, c.logprob_weight = 1;
  size_t pos = 0;
  for (int len : o.lengths) {
    check(len > prefix + 1, "--lengths {}: the text objective needs chunks longer than window + "
          "sinks = {} (only later tokens can be affected by SWA)", len, prefix);
    for (int i = 0; i < o.samples; ++i) {
      check(pos + len <= ids.size(), "{} text:{}: the file has {} tokens, too few for {} "
            "chunks of lengths {}", o.option, path, ids.size(), o.samples, fmt::join(o.lengths, ","));
      TaskSample s;
      s.family = "text";
      s.split = Split::calib;
      s.length = len;
      s.seed = pos;
      s.prompt_ids.assign(ids.begin() + pos, ids.begin() + pos + prefix);
      s.continuation_ids.assign(ids.begin() + pos + prefix, ids.begin() + pos + len);
      s.answers.push_back({"", s.continuation_ids, 0});
      c.samples.push_back(std::move(s));
      pos += len;
    }
  }
  c.description = fmt::format("text {} lengths {} chunks {} (-NLL after {} tokens)", path,
                              fmt::join(o.lengths, ","), o.samples, prefix);
  return c;
}

Calibration longbench_calibration(const Tokenizer& tok, const CalibrationOptions& o,
                                  const std::string& dir) {
  Calibration c;
  const int len = o.lengths.at(0);
  for (const auto& path : longbench::expand_data_paths({dir})) {
    const auto file = longbench::read_dataset_file(path, o.samples);
    for (const auto& s : file.samples) {
      check(!s.answers.empty(), "{}: sample {} has no answer", path, s.id);
      std::vector<int32_t> answer = tok.encode(" " + s.answers[0], false);
      if (answer.size() > 32) answer.resize(32);  // judge the first tokens of long answers
      const int budget = std::max(16, len - static_cast<int>(answer.size()));
      TaskSample t;
      t.family = std::string("longbench_") + file.task->name;
      t.split = Split::calib;
      t.length = len;
      t.prompt_ids = longbench::build_prompt(tok, *file.task, s, budget, o.chat).ids;
      t.continuation_ids = answer;
      t.answers.push_back({s.answers[0], answer, 0});
      c.samples.push_back(std::move(t));
    }
  }
  c.description = fmt::format("longbench {} length {} samples/file {}", dir, len, o.samples);
  return c;
}

// Drops the samples the full model does not answer exactly.
void keep_solved(const Model& m, Calibration& c) {
  const size_t before = c.samples.size();
  const AttentionPlan full = m.full_plan();
  std::vector<TaskSample> kept;
  Progress progress("calibration: full-model check", before);
  for (auto& s : c.samples) {
    if (score_sample(m, full, s).exact) kept.push_back(std::move(s));
    progress.add();
  }
  progress.finish();
  check(!kept.empty(), "--calib-solved-only: the full model answers none of the {} calibration samples ({}); "
        "choose families or lengths the model can do", before, c.description);
  c.samples = std::move(kept);
  c.description += fmt::format(" | solved by the full model: {} of {}", c.samples.size(), before);
}

}  // namespace

std::vector<int> resolve_lengths(const Tokenizer& tok, const ObjectiveSpec& parsed, const CalibrationOptions& o) {
  if (!o.lengths.empty()) return o.lengths;
  if (parsed.kind == ObjectiveKind::niah) {
    const int room = 2 * (o.swa.window + o.swa.sinks);
    return {niah_auto_length(tok, parse_niah_suite(parsed.spec), Split::calib, chat_wrap_for(tok, o.chat), room,
                             o.max_length)};
  }
  return {std::min(1024, o.max_length)};
}

Calibration make_calibration(const Tokenizer& tok, const CalibrationOptions& opt, const Model* model) {
  return make_calibration(tok, parse_objective_spec(opt.objective, opt.option), opt, model);
}

Calibration make_calibration(const Tokenizer& tok, const ObjectiveSpec& parsed, const CalibrationOptions& opt,
                             const Model* model) {
  CalibrationOptions o = opt;
  o.lengths = resolve_lengths(tok, parsed, opt);
  if (model) check_forward_memory(model->config(), o.lengths, "--lengths");  // before minutes of sample making
  const std::string& spec = parsed.spec;
  Calibration c;
  if (parsed.kind == ObjectiveKind::niah) c = niah_calibration(tok, o, spec);
  else if (parsed.kind == ObjectiveKind::text) c = text_calibration(tok, o, parsed.arg);
  else if (parsed.kind == ObjectiveKind::longbench) c = longbench_calibration(tok, o, parsed.arg);
  else fail("{} {}: a synthetic objective has no calibration samples (it needs no model)", o.option, spec);
  if (o.solved_only) {
    check(c.exact_weight > 0, "--calib-solved-only: the objective {} has no exact answers to solve", spec);
    check(model != nullptr, "--calib-solved-only: internal error: no model to check the samples with");
    keep_solved(*model, c);
  }
  c.lengths = o.lengths;
  return c;
}

}  // namespace bosch::search
