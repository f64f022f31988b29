// Evaluations for the search: memo, journal, normalisation, counters.
//  - Memo: a mask requested twice is evaluated once (exact key: the bits themselves).
//  - Charging: an evaluation is "fresh" the first time this run requests that mask; stage
//    budgets count fresh evaluations. On resume, masks found in the journal are fresh too (they
//    are charged exactly as in the uninterrupted run) but are replayed, not recomputed, so the
//    resumed run takes the same decisions and ends with the same mask.
//  - Replay is strict: the n-th fresh mask must be the journal's n-th entry, otherwise the
//    journal came from a different search and resuming fails with an Error.
//  - Score: S^ = (S - S_allswa) / (S_full - S_allswa) (denominator 1 when the two are equal),
//    loss = -S^ + alpha * (ratio(z) - rho)^2. The search minimises the loss.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "search/core/journal.h"
#include "search/core/objective.h"

namespace bosch {
class Progress;
}

namespace bosch::search {

struct EvaluatorOptions {
  double target_ratio = 0.5;  // rho
  double alpha = 1.0;         // ratio penalty weight
  std::string journal_path;   // "" = no journal
  bool resume = false;        // replay journal_path (which must exist) and append to it
  nlohmann::json config;      // search configuration, stored in / checked against the header
};

struct Evaluation {
  MaskScore raw;
  double score = 0;    // S^
  double loss = 0;     // -S^ + alpha * (ratio - rho)^2
  bool fresh = false;  // first request of this mask in this (logical) run
};

class Evaluator {
 public:
  Evaluator(Objective& obj, EvaluatorOptions opt);
  ~Evaluator();

  int n_layers() const { return obj_.n_layers(); }
  int n_heads() const { return obj_.n_heads(); }
  size_t n_bits() const { return static_cast<size_t>(n_layers()) * n_heads(); }
  Objective& objective() { return obj_; }
  const EvaluatorOptions& options() const { return opt_; }

  // Evaluates the full and the all-SWA model (the first two evaluations of every run).
  void init_references();
  double s_full() const { return s_full_; }
  double s_allswa() const { return s_allswa_; }

  Evaluation evaluate(const HeadBits& bits);
  double loss_of(const MaskScore& raw, const HeadBits& bits) const;
  double normalise(double raw) const;

  void set_stage(const std::string& name) { stage_ = name; }
  void set_progress(Progress* p) { progress_ = p; }

  int64_t fresh() const { return fresh_; }          // distinct masks requested (charged)
  int64_t computed() const { return computed_; }    // actually run through the objective
  int64_t replayed() const { return replayed_; }    // taken from the resumed journal
  int64_t memo_hits() const { return memo_hits_; }
  size_t journal_entries_pending() const { return replay_.size() - replay_next_; }
  double objective_seconds() const { return objective_seconds_; }

 private:
  Objective& obj_;
  EvaluatorOptions opt_;
  Journal journal_;
  std::vector<JournalEntry> replay_;
  size_t replay_next_ = 0;
  std::unordered_map<std::string, MaskScore> memo_;
  std::string stage_ = "search";
  Progress* progress_ = nullptr;
  double s_full_ = 0, s_allswa_ = 0, denom_ = 1;
  bool refs_ = false;
  int64_t fresh_ = 0, computed_ = 0, replayed_ = 0, memo_hits_ = 0;
  double objective_seconds_ = 0;
};

int count_ones(const HeadBits& bits);
// SWA heads per layer of a flat mask (layer-major, n_heads per layer).
std::vector<int> layer_counts(const HeadBits& bits, int n_heads);

}  // namespace bosch::search
