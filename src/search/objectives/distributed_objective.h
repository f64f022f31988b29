// The model objective spread over MPI ranks (util/mpi_comm.h), SPMD lockstep: every rank runs
// the same search and asks for the same masks in the same order; each evaluates only its shard
// of the samples (a contiguous range, balanced by tokens, with its own prefix state cache),
// rank 0 gathers the per-sample results in rank order, i.e. in global sample order, combines
// them exactly as one process does (combine_samples) and sends the MaskScore to every rank. Every
// rank thus takes the same decisions, and scores, journal and mask are bit-identical to one
// process for any number of ranks.
//
// Per evaluation, payload: rank r > 0 sends 4 doubles per sample of its shard + 3 (its cost
// counters) to rank 0; rank 0 sends 6 + N doubles (the score, the summed counters, N per-sample
// shares) to each other rank.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "search/objectives/model_objective.h"

namespace bosch::search {

// Shard boundaries: rank r holds samples [b[r], b[r+1]) (b has n_ranks + 1 entries; a shard is
// empty when there are fewer samples than ranks), cut where the running count of tokens
// comes closest to r / n_ranks of the total.
std::vector<size_t> shard_bounds(const std::vector<TaskSample>& samples, int n_ranks);

class DistributedObjective : public Objective {
 public:
  // This rank's shard of `samples` (every rank passes all of them, built the same way).
  DistributedObjective(const Model& m, const std::vector<TaskSample>& samples, ModelObjectiveOptions opt);
  int n_layers() const override { return L_; }
  int n_heads() const override { return H_; }
  MaskScore evaluate(const HeadBits& swa) override;
  std::string describe() const override { return description_; }
  ObjectiveStats stats() const override { return stats_; }  // all ranks together

  size_t local_samples() const { return bounds_[rank_ + 1] - bounds_[rank_]; }
  const std::vector<size_t>& bounds() const { return bounds_; }
  // Payload bytes all ranks send for one evaluation.
  long long bytes_per_evaluation() const;
  // "N MPI ranks, A-B samples each, X payload bytes sent per evaluation".
  std::string summary() const;

 private:
  std::unique_ptr<ModelObjective> shard_;  // null when this rank's shard is empty
  ModelObjectiveOptions opt_;
  int L_, H_, rank_, n_ranks_;
  size_t n_samples_;
  std::vector<size_t> bounds_;
  std::string description_;
  ObjectiveStats stats_;
  // BOSCH_MPI_TEST_KILL=RANK:EVAL[:stop] (tests): that rank dies (SIGKILL) or hangs (SIGSTOP)
  // when asked for its EVAL-th evaluation (from 0).
  int64_t kill_at_ = -1;
  int kill_signal_ = 0;
};

// The calibration (or test) objective of this process: a ModelObjective over every sample for one
// process, a DistributedObjective when the run has several MPI ranks.
std::unique_ptr<Objective> make_model_objective(const Model& m, const std::vector<TaskSample>& samples,
                                                const ModelObjectiveOptions& opt);

}  // namespace bosch::search
