// The baselines the BOSCH search must beat, each a named method producing the same mask bits
// (one byte per (layer, KV head), 1 = SWA) with exactly K = round(rho * N) SWA heads.
//   layer level (baseline_layers.h): rand, intr, bme
//   head level, static ranking computed once, then the K lowest-importance heads converted:
//     rand-heads  seeded random order
//     locality    attention-mass share inside the window (+ sinks), full model, calibration
//                 prompts; importance = -share (most local converted first)
//     razor       echo + induction attention on repeated random tokens (least converted first)
//     retrieval   attention on the needle's value while the answer is copied (calibration NIAH)
//     gate        Fisher-style gate sensitivity: squared finite difference of the calibration
//                 log-likelihood when one head's gate is switched to SWA (N + 1 evaluations)
//     ablation    exact calibration objective drop when only that head is SWA (the same N + 1
//                 evaluations as gate; shared when both run)
//     apl, qada, proxy  the BOSCH paper's APL, QADA and PROXY (static_scores.h); its DCAM is
//                 `locality`, FISHER is `gate`, RAZOR is `razor` (aliases accepted)
//     duo         a DuoAttention full_attention_heads.tsv pattern thresholded to the ratio
//                 (masks/mask_export.h plan_from_duo): the lowest values become SWA
// Ties in every ranking are broken by flat index (layer-major), lower converted first.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/attention_plan.h"
#include "search/core/objective.h"
#include "search/baselines/static_scores.h"

namespace bosch {
class Model;
struct TaskSample;
}  // namespace bosch

namespace bosch::search {

// Every baseline name (duo last; it needs a pattern directory).
const std::vector<std::string>& baseline_methods();
bool is_baseline_method(const std::string& name);
// Rankings from attention statistics or forward passes (no objective evaluations), which
// bosch-plus takes as starts: locality, razor, retrieval, apl, qada, proxy.
bool is_static_start_ranking(const std::string& name);
std::string baseline_description(const std::string& name);  // one line for help and reports
// Lower-cased, with aliases resolved (RAND -> rand, fisher -> gate); Error listing the names.
std::string canonical_baseline(const std::string& name);

struct BaselineInputs {
  int n_layers = 0, n_heads = 0;        // KV heads per layer
  SwaShape swa;                         // the SWA the mask will use (locality, razor period)
  uint64_t seed = 0;                    // rand, rand-heads, razor tokens
  const Model* model = nullptr;         // locality, razor, retrieval
  Objective* objective = nullptr;       // gate, ablation (calibration data only)
  const std::vector<TaskSample>* calib = nullptr;  // locality prompts, retrieval
  std::vector<int32_t> razor_prefix;    // e.g. {BOS}
  int razor_period = 0;                 // 0: max(64, 2 * (window + sinks)), capped by the context
  std::string duo_dir;                  // duo: the pattern directory
};

struct BaselineMask {
  std::string method;
  double ratio = 0;
  int k = 0;
  HeadBits bits;
  int64_t evaluations = 0;  // objective evaluations needed to build this mask from scratch
  double seconds = 0;       // time to build it from scratch (incl. the one-time scores)
  nlohmann::json provenance;  // method, scores used, settings
};

// Computes each method's static scores once and reuses them for every ratio.
class BaselineRunner {
 public:
  explicit BaselineRunner(BaselineInputs in);
  BaselineMask run(const std::string& method, double ratio);
  // The importance vector of a ranking method (lowest converted first); computes it if needed.
  const std::vector<double>& importance(const std::string& method);
  const BaselineInputs& inputs() const { return in_; }

 private:
  struct Cached {
    std::vector<double> importance;
    int64_t evaluations = 0;
    double seconds = 0;
    nlohmann::json scores;  // what was measured, for provenance
  };
  const Cached& scores_for(const std::string& method);
  void compute_sweep();
  BaselineInputs in_;
  std::map<std::string, Cached> cache_;
  std::unique_ptr<SingleHeadSweep> sweep_;
  double sweep_seconds_ = 0;
};

}  // namespace bosch::search
