// The real objective: teacher-forced scores of calibration samples (tasks/TaskSample) under the
// candidate's attention plan, with a hidden-state cache.
//   S = exact_weight * mean_s(fraction of answers right) + logprob_weight * mean_s(mean answer
//       log-probability) - kl_weight * mean_s(mean over answer tokens of KL(full model || mask))
// (NIAH: exact 1, log-prob 0.01 so near-ties are ordered; text: exact 0, log-prob 1 = -NLL).
//
// Cache: a PrefixStateCache (search/objectives/prefix_state_cache.h) of the samples' hidden states at
// layer inputs, keyed by the bits of the layers below. A candidate starts at the deepest layer
// whose prefix an earlier candidate shared, runs the layers above it (storing their inputs for
// later candidates, budget permitting), and the LM head only on answer rows.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/attention_plan.h"
#include "model/model.h"
#include "search/core/objective.h"
#include "search/objectives/prefix_state_cache.h"
#include "tasks/task_sample.h"

namespace bosch::search {

struct ModelObjectiveOptions {
  SwaShape swa;
  double exact_weight = 1.0;
  double logprob_weight = 0.01;
  // > 0: the answer rows' next-token distributions of the full model are kept (one full
  // forward at construction), and each candidate pays its mean KL divergence from them: a
  // signal that keeps ordering masks after every answer is right (past saturation).
  double kl_weight = 0;
  int64_t cache_bytes = int64_t(8) << 30;  // cached hidden states, all samples together
  bool use_cache = true;                    // false: recompute every candidate from layer 0
  std::string description;                  // what the samples are (journal header)
  // Non-empty: each evaluation shows per-sample progress under this label (a compare's test
  // set: dozens of long samples per mask; a search's own stages show their progress instead).
  std::string progress_label;
};

// One calibration sample's terms of a candidate's MaskScore: `value` is its share of S (MaskScore::per_sample).
struct SampleTerms {
  double exact = 0, logprob = 0, kl = 0, value = 0;
};
// The MaskScore of per-sample results given in sample order. The one place the means are summed,
// so a run that gathers the results of sample shards (search/objectives/distributed_objective.h) gets the
// bits one process gets.
MaskScore combine_samples(const std::vector<SampleTerms>& s, const ModelObjectiveOptions& opt);
// The journal description of a model objective over `samples`.
std::string describe_model_objective(const Model& m, const std::vector<TaskSample>& samples,
                                     const ModelObjectiveOptions& opt);

class ModelObjective : public Objective {
 public:
  ModelObjective(const Model& m, std::vector<TaskSample> samples, ModelObjectiveOptions opt);
  int n_layers() const override { return L_; }
  int n_heads() const override { return H_; }
  MaskScore evaluate(const HeadBits& swa) override {
    return combine_samples(evaluate_samples(swa), opt_);
  }
  // Each sample's result, in sample order (counted in stats() as one evaluation).
  std::vector<SampleTerms> evaluate_samples(const HeadBits& swa);
  std::string describe() const override;
  ObjectiveStats stats() const override { return stats_; }

  const PrefixStateCache& cache() const { return cache_; }

 private:
  const Model& m_;
  std::vector<TaskSample> samples_;
  ModelObjectiveOptions opt_;
  int L_, H_, d_;
  struct StateLayout {  // sample i: n_tokens[i] rows from offset[i] (floats) of a state buffer
    std::vector<int> n_tokens;
    std::vector<int64_t> offset;
    int64_t floats = 0;
  };
  static StateLayout state_layout(const std::vector<TaskSample>& samples, int d_model);
  StateLayout layout_;  // before embedded_ and cache_, which are sized from it
  // kl_weight > 0: per sample, the hidden rows that predict answer tokens and the full model's
  // log-probabilities there ([rows, vocab], samples one after another).
  std::vector<std::vector<int>> answer_rows_;
  std::vector<int64_t> ref_offset_;
  std::vector<float> ref_logprobs_;
  void log_softmax_rows(const float* hidden, const std::vector<int>& rows, std::vector<float>& out) const;
  double mean_kl(size_t sample, const float* hidden) const;
  std::vector<float> embedded_;  // input of layer 0, all samples
  PrefixStateCache cache_;
  ObjectiveStats stats_;
  Workspace ws_;  // the forward passes' scratch, kept across evaluations
};

}  // namespace bosch::search
