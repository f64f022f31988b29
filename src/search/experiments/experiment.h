// Every experiment of `bosch search`, `bosch baseline` and `bosch compare`, built from one parsed
// objective spec (objective_spec.h): the model, its tokenizer, the calibration samples and the
// objective the search and the objective-based baselines evaluate (search/objectives/calibration.h +
// ModelObjective); for synthetic specs the objective alone, without a model. Compare's held-out
// test objective and method list come from here too (its run: compare_run.h), so the CLI only
// parses flags.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "masks/mask_file.h"
#include "model/model.h"
#include "search/baselines/baseline.h"
#include "search/stages/bosch_search.h"
#include "search/objectives/calibration.h"
#include "search/objectives/model_objective.h"
#include "search/objectives/objective_spec.h"
#include "tasks/task_sample.h"
#include "tokenizer/tokenizer.h"

namespace bosch::search {

struct ExperimentOptions {
  std::string model;  // path (resolved by the caller); unused for synthetic objectives
  CalibrationOptions calib;
  SwaShape swa;
  double logprob_weight = -1;  // < 0: the calibration's default
  double kl_weight = 0;        // > 0: S also pays the answer rows' KL divergence from the full model
  double cache_gb = 8;
  bool chat = true;
  uint64_t seed = 0;
  std::string duo_dir;
  int razor_period = 0;
};

struct Experiment {
  ObjectiveSpec spec;
  std::unique_ptr<Model> model;               // null for synthetic objectives
  std::unique_ptr<Tokenizer> tokenizer;
  MaskModelInfo info;                         // synthetic: arch "synthetic", identity = describe()
  Calibration calibration;                    // samples of the calibration split
  std::unique_ptr<Objective> objective;       // over calibration.samples (copied; this rank's shard
                                              // of them under MPI: distributed_objective.h)
  ModelObjectiveOptions objective_options;
  std::unique_ptr<Objective> synthetic;       // synthetic specs: the objective itself
  // The objective a search evaluates (the model's or the synthetic one); Error when none was built.
  Objective& search_objective();
  BaselineInputs baseline_inputs() const;     // pointers into this Experiment
};

// `s` for a search of experiment `o`: with o.seed, the one seed of a run (--seed; ExperimentOptions
// owns it, the search takes a copy here and nowhere else).
SearchOptions seeded_search(const ExperimentOptions& o, SearchOptions s);

// Loads the model and tokenizer (unless the spec is synthetic); builds the calibration samples
// and objective only when `need_calibration` (methods that only read the model skip them).
// `spec` is o.calib.objective parsed, for callers that needed it before (the first form parses).
Experiment make_experiment(const ExperimentOptions& o, bool need_calibration);
Experiment make_experiment(const ExperimentOptions& o, const ObjectiveSpec& spec, bool need_calibration);
// True for methods that need calibration samples or the objective.
bool needs_calibration(const std::string& method);

// bosch-plus's default starts (besides its own single-head sweep).
inline constexpr const char* kDefaultStarts = "locality,razor,retrieval,apl,qada";
// bosch-plus's starts: the static rankings named in `list` ("none" or comma-separated names of
// locality, razor, retrieval, apl, qada, proxy), computed on the experiment's model. retrieval
// needs needles: left out of the default list for a text objective, an Error when named.
std::vector<NamedRanking> start_rankings(Experiment& e, const std::string& list, uint64_t seed);

// Compare's methods for `methods` ("all" or names): "all" leaves out what the objective cannot
// support (retrieval without needles; every method reading weights for the simulator, which
// gets bosch-multi instead); naming such a method is an Error.
std::vector<std::string> compare_methods(const ObjectiveSpec& spec, const std::string& methods, bool have_duo);

// Compare's held-out data: the NIAH test split of the calibration families (test_objective
// empty) or the text/longbench data the user names (never the calibration data itself).
struct TestSetOptions {
  std::string objective;     // "" = the NIAH test split
  std::vector<int> lengths;  // empty = the calibration lengths
  int depths = 5, samples = 1;
  uint64_t seed = 0;
};
void check_test_objective(const ObjectiveSpec& calib, const std::string& test_objective);
struct TestSet {
  std::vector<TaskSample> samples;
  ModelObjectiveOptions options;  // the calibration's, with the test data's default weights (never
                                  // the calibration's --logprob-weight/--kl-weight: the test metric
                                  // must not depend on the objective being compared), no cache
  std::vector<int> lengths;
  bool exact_metric = true;       // false: scored by mean log-probability (text)
};
TestSet make_test_set(const Experiment& e, const ExperimentOptions& o, const TestSetOptions& t);

// NIAH samples of the TEST split for `calib` (o.calib.objective parsed: niah or niah:families),
// with the calibration haystack and chat settings. Error for other objectives (no held-out split).
std::vector<TaskSample> niah_test_samples(const Tokenizer& tok, const ObjectiveSpec& calib,
                                          const ExperimentOptions& o, const std::vector<int>& lengths,
                                          int depths, int samples, uint64_t seed);

}  // namespace bosch::search
