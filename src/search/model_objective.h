// The real objective: teacher-forced scores of calibration samples (tasks/TaskSample) under the
// candidate's attention plan, with a hidden-state cache.
//   S = exact_weight * mean_s(fraction of answers right) + logprob_weight * mean_s(mean answer
//       log-probability)
// (NIAH: exact 1, log-prob 0.01 so near-ties are ordered; text: exact 0, log-prob 1 = -NLL).
//
// Cache policy. The cache holds, per sample, the hidden states at the input of layers
// 0, k, 2k, ... (k = checkpoint stride; 1 unless the memory limit forces more) for the BASE
// plan, the search's committed assignment (set_base). The input of layer j depends only on
// layers < j, so for a candidate whose first layer differing from the base is f, the stored
// input of the highest checkpoint j <= f is exact for the candidate too: it runs layers
// j..L-1 only, and the LM head only on answer rows. Changing the base to one that first
// differs at layer f invalidates the checkpoints above f; they are refilled lazily as a
// by-product of the next candidate runs (layers below a candidate's first change are base
// layers). So no evaluation ever recomputes layers below its first change that a checkpoint
// covers, and no separate refill pass exists.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "search/objective.h"
#include "tasks/task_sample.h"

namespace bosch::search {

struct ModelObjectiveOptions {
  int window = 64, sinks = 4;
  double exact_weight = 1.0;
  double logprob_weight = 0.01;
  int64_t cache_bytes = int64_t(8) << 30;  // hidden-state checkpoints, all samples together
  bool use_cache = true;                    // false: recompute every candidate from layer 0
  std::string description;                  // what the samples are (journal header)
};

class ModelObjective : public Objective {
 public:
  ModelObjective(const Model& m, std::vector<TaskSample> samples, ModelObjectiveOptions opt);
  int n_layers() const override { return L_; }
  int n_heads() const override { return H_; }
  RawScore evaluate(const HeadBits& swa) override;
  void set_base(const HeadBits& swa) override;
  std::string describe() const override;
  ObjectiveStats stats() const override { return stats_; }

  int checkpoint_stride() const { return stride_; }
  int64_t cache_bytes() const;

 private:
  int first_difference(const HeadBits& a, const HeadBits& b) const;  // layer, L when equal
  const Model& m_;
  std::vector<TaskSample> samples_;
  ModelObjectiveOptions opt_;
  int L_, H_, d_, stride_ = 1;
  HeadBits base_;
  int valid_upto_ = 0;  // checkpoints at layers <= valid_upto_ hold base-plan states
  // states_[sample][checkpoint] = input of layer checkpoint * stride_, [n_tokens * d_model]
  std::vector<std::vector<std::vector<float>>> states_;
  std::vector<int> n_tokens_;
  ObjectiveStats stats_;
};

}  // namespace bosch::search
