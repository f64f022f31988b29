// Calibration samples for the search objective (`--objective`):
//   niah[:families]   NIAH samples of the calibration split (tasks/niah.h); exact match +
//                     a small weight on the answer log-probability
//   text:FILE         consecutive chunks of FILE; score = mean log-probability (-NLL) of the
//                     tokens after the first window+sinks tokens of each chunk (the positions
//                     where SWA can differ from full attention), for models that cannot do NIAH
//   longbench:DIR     LongBench JSONL files; teacher-forced first gold answer after the
//                     official prompt (middle-truncated to the length), exact match + log-prob
#pragma once
#include <string>
#include <vector>

#include "model/attention_plan.h"
#include "model/model.h"
#include "search/objectives/objective_spec.h"
#include "tasks/task_sample.h"
#include "tokenizer/tokenizer.h"

namespace bosch::search {

struct CalibrationOptions {
  std::string objective = "niah";
  // Empty = auto: niah, the shortest power of two that holds every family's prompt plus
  // 2 * (window + sinks) haystack tokens (so needles can sit outside the window); text and
  // longbench, min(1024, max_length).
  std::vector<int> lengths;
  int max_length = 1 << 20;  // the model's context (auto lengths stay within it)
  int depths = 3;        // niah: depth grid size
  int samples = 1;       // niah: per (family, length, depth); text/longbench: total per file
  uint64_t seed = 0;
  std::string haystack = "markov";
  bool chat = true;
  SwaShape swa;  // text: the unscored prefix
  // Keep only the samples the full model answers exactly (niah, longbench). Where the full
  // model fails, a mask can only "help" by chance, and a search on few samples then chases
  // that noise; S^ on solved samples measures what a mask keeps of what the model can do.
  bool solved_only = false;
  std::string option = "--objective";  // how error messages name the spec (--test-objective)
};

struct Calibration {
  std::vector<TaskSample> samples;
  std::vector<int> lengths;  // the lengths used (auto resolved)
  double exact_weight = 1.0, logprob_weight = 0.01;
  std::string description;
};

// The lengths `opt` asks for, auto resolved (see CalibrationOptions::lengths); `parsed` is
// opt.objective parsed.
std::vector<int> resolve_lengths(const Tokenizer& tok, const ObjectiveSpec& parsed, const CalibrationOptions& opt);

// `model` is needed only with solved_only (it scores the samples with full attention).
Calibration make_calibration(const Tokenizer& tok, const CalibrationOptions& opt,
                             const Model* model = nullptr);
// The same with opt.objective already parsed (an Experiment's spec): the string is not read again.
Calibration make_calibration(const Tokenizer& tok, const ObjectiveSpec& parsed, const CalibrationOptions& opt,
                             const Model* model = nullptr);

}  // namespace bosch::search
