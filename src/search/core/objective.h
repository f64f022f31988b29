// The black-box objective of the BOSCH search. A candidate is a bit vector with one byte per
// (layer, KV head), row-major (layer * n_heads + head), 1 = that head uses sliding-window
// attention. The objective returns a raw score S (higher = better); the search normalises it
// between the all-SWA and the full model and adds the ratio penalty (see evaluator.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bosch::search {

using HeadBits = std::vector<uint8_t>;

// The objective's score of one candidate mask, raw: before the evaluator normalises it (S^).
struct MaskScore {
  double value = 0;         // S: what the search maximises
  double exact_rate = 0;    // fraction of samples answered exactly (0 for objectives without it)
  double mean_logprob = 0;  // mean answer log-probability (0 where not meaningful)
  std::vector<double> per_sample;  // each sample's share of `value` (its mean = value; empty
                                   // for objectives without samples); not journaled
};

// Cost accounting of an objective that runs a model (zeros for synthetic ones).
struct ObjectiveStats {
  int64_t evaluations = 0;        // calls to evaluate()
  int64_t layer_forwards = 0;     // (sample, layer) forwards actually run
  double layer_work = 0;          // the same in whole layers: a last layer run only for the
                                  // scored rows counts as its share of multiply-adds
  int64_t layer_forwards_naive = 0;  // what recomputing every candidate from layer 0 would cost
  // The cost between two snapshots (an objective shared by several searches counts them all).
  ObjectiveStats since(const ObjectiveStats& start) const {
    return {evaluations - start.evaluations, layer_forwards - start.layer_forwards,
            layer_work - start.layer_work, layer_forwards_naive - start.layer_forwards_naive};
  }
};

class Objective {
 public:
  virtual ~Objective() = default;
  virtual int n_layers() const = 0;
  virtual int n_heads() const = 0;  // KV heads per layer
  // Must be deterministic: the same bits always give the same score (resume relies on it).
  virtual MaskScore evaluate(const HeadBits& swa) = 0;
  // Identifies the objective (and its data) in the journal header, so a journal is not resumed
  // against another objective.
  virtual std::string describe() const = 0;
  virtual ObjectiveStats stats() const { return {}; }
};

}  // namespace bosch::search
