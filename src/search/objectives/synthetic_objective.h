// Synthetic objectives with a planted answer, for tests and `bosch search --objective
// synthetic:...` smoke runs (no model needed). Each head has a hidden cost of turning it into
// SWA (its "retrieval importance"); pair terms entangle heads so that the cost of two heads
// together differs from the sum of their costs, which defeats static one-head-at-a-time
// rankings but not a search that evaluates joint assignments.
//   S(z) = - sum_{i: z_i = 1} unary_i - sum_{(i,j): z_i = z_j = 1} pair_ij
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "search/core/objective.h"

namespace bosch::search {

struct PairTerm {
  int a = 0, b = 0;  // flat head indices (layer * n_heads + head)
  double cost = 0;   // added when both are SWA (negative = converting both is cheaper)
};

class SyntheticObjective : public Objective {
 public:
  SyntheticObjective(int n_layers, int n_heads, std::vector<double> unary,
                     std::vector<PairTerm> pairs = {});
  int n_layers() const override { return n_layers_; }
  int n_heads() const override { return n_heads_; }
  MaskScore evaluate(const HeadBits& swa) override;
  double value(const HeadBits& swa) const;  // S, without bookkeeping
  std::string describe() const override;
  ObjectiveStats stats() const override { return stats_; }

  // Every mask evaluated, in order (tests check that no mask is evaluated twice).
  const std::vector<HeadBits>& calls() const { return calls_; }
  // Throws std::runtime_error after `n` more evaluations (simulates a kill in tests); < 0: never.
  void fail_after(int64_t n) { fail_after_ = n; }
  double unary(int flat) const { return unary_[flat]; }

 private:
  int n_layers_, n_heads_;
  std::vector<double> unary_;
  std::vector<PairTerm> pairs_;
  std::vector<HeadBits> calls_;
  ObjectiveStats stats_;
  int64_t fail_after_ = -1;
};

// "synthetic:LxH[:SEED]": a random planted instance (layer sensitivities spread over a wide
// range, a few entangled pairs per layer). Throws Error on a malformed spec.
std::unique_ptr<Objective> make_synthetic_objective(const std::string& spec);

}  // namespace bosch::search
