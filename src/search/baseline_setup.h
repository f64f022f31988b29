// Shared setup of `bosch baseline` and `bosch compare`: the model, its calibration samples and
// objective (the same as `bosch search` builds: search/calibration.h + ModelObjective), and
// the held-out NIAH test samples (split test: no key or value in common with calibration).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "masks/mask_file.h"
#include "model/model.h"
#include "search/baseline.h"
#include "search/calibration.h"
#include "search/model_objective.h"
#include "tasks/task_sample.h"
#include "tokenizer/tokenizer.h"

namespace bosch::search {

struct ExperimentOptions {
  std::string model;  // path (resolved by the caller)
  CalibrationOptions calib;
  int window = 64, sinks = 4;
  double logprob_weight = -1;  // < 0: the calibration's default
  double cache_gb = 8;
  bool chat = true;
  uint64_t seed = 0;
  std::string duo_dir;
  int razor_period = 0;
};

struct Experiment {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  MaskModelInfo info;
  Calibration calibration;                  // samples of the calibration split
  std::unique_ptr<ModelObjective> objective;  // over calibration.samples (copied)
  ModelObjectiveOptions objective_options;
  BaselineInputs baseline_inputs() const;   // pointers into this Experiment
};

// Loads the model and tokenizer; builds the calibration samples and objective only when
// `need_calibration` (methods that only read the model skip generating them).
Experiment make_experiment(const ExperimentOptions& o, bool need_calibration);
// True for methods that need calibration samples or the objective.
bool needs_calibration(const std::string& method);

// Error unless `objective` is niah or niah:FAMILIES (compare needs a held-out test split).
void check_has_test_split(const std::string& objective);
// NIAH samples of the TEST split for `suite` ("niah" or "niah:families"), with the calibration
// haystack and chat settings. Error for non-NIAH objectives (no held-out split defined).
std::vector<TaskSample> niah_test_samples(const Tokenizer& tok, const ExperimentOptions& o,
                                          const std::vector<int>& lengths, int depths, int samples,
                                          uint64_t seed);

}  // namespace bosch::search
