// A search simulator at the scale of real LLMs (`--objective synthetic:qwen3-8b[:SEED]`): a
// black-box objective with the head grid of a Qwen3 model and the structures that make static
// head rankings fail there (docs/simulator.md states every assumption and how to fit it):
//   retrieval  F query families; each answers through 2..4 redundant PATHS (OR: a backup takes
//              over when the primary is converted, the Hydra effect); a path is an AND chain of
//              1..3 long-range heads in increasing layers (key match feeding a copy head) drawn
//              from a pool of retrieval heads (a share of all heads, middle and upper layers).
//              A path works while all its heads are full; with strengths a_p the family's
//              retrieval succeeds with R_f = floor + (1 - floor) (1 - prod_{working p}(1 - a_p)).
//   local      every head has a cost c_{h,f} of seeing only W tokens (log-normal: most heads are
//              almost free, a few are not; layer- and query-family-dependent)
//   pairs      some heads interact with a head of the same or a neighbouring layer: converting
//              both adds g_ij (mostly > 0: redundant heads; some < 0: compensating heads)
//   success    p_s(z) = R_f(z) * exp(-max(0, sum_{SWA h} c_{h,f} m_{s,h} + sum_{SWA pairs} g_ij))
//              for a sample s of family f, with its own log-normal head factors m_{s,h} (mean 1)
//   samples    sample s has a uniform u_s and is answered iff u_s < p_s(z); its score is that
//              0/1 plus logprob_weight * log p_s(z) (the model objective's NIAH S).
// The calibration objective and the test objective share the hidden structure (instance seed)
// and draw independent samples, so fitting calibration noise shows up on test.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/core/objective.h"

namespace bosch::search {

struct SimulatorParams {
  std::string shape = "custom";  // the model whose head grid this is
  int n_layers = 36, n_heads = 8;
  int families = 4;
  int calib_samples = 64;         // the paper's calibration size
  int test_samples = 512;
  double retrieval_share = 0.08;  // share of heads in the retrieval pool
  int min_paths = 2, max_paths = 4;  // redundant paths per family (OR)
  int max_chain = 3;                 // heads per path (AND), 1..max_chain
  double primary_lo = 0.85, primary_hi = 0.98;  // strength of a family's first path
  double backup_lo = 0.5, backup_hi = 0.9;      // strengths of the others
  double floor = 0.02;            // success with no working path (a guess)
  double local_scale = 0.002;     // median local cost of a head
  double local_sigma = 1.4;       // log-normal spread of local costs across heads
  double layer_sigma = 0.7;       // ... across layers (a few sensitive layers)
  double family_sigma = 0.5;      // ... across query families (query-dependent heads)
  double sample_sigma = 0.5;      // ... across the samples of a family (each prompt leans on its
                                  // own heads, so a finite calibration set is a noisy estimate)
  double pair_share = 0.3;        // heads with an interaction partner
  double pair_lo = -0.5, pair_hi = 1.5;  // g_ij as a multiple of c_i + c_j
  double logprob_weight = 0.01;
  nlohmann::json to_json() const;
};

// "qwen3-1.7b" (28 x 8 KV heads), "qwen3-8b" (36 x 8), "qwen3-14b" (40 x 8), "qwen3-30b-a3b"
// (48 x 4); Error listing them otherwise.
SimulatorParams simulator_shape(const std::string& name);
const std::vector<std::string>& simulator_shapes();

// The hidden structure of one instance (drawn from the instance seed).
struct SimulatedModel {
  struct Path {
    std::vector<int> heads;  // flat indices, increasing layer
    double strength = 0;
  };
  struct Pair {
    int a = 0, b = 0;
    double cost = 0;
  };
  SimulatorParams params;
  uint64_t seed = 0;
  std::vector<std::vector<Path>> paths;  // per family
  std::vector<std::vector<double>> local;  // per family, per head
  std::vector<Pair> pairs;
  std::vector<int> retrieval_pool;  // flat indices
  static SimulatedModel draw(const SimulatorParams& p, uint64_t seed);
  // p_f(z) for every family, for a sample whose head factors are all 1.
  std::vector<double> success(const HeadBits& swa) const;
  std::vector<double> retrieval(const HeadBits& swa) const;  // R_f(z) for every family
  double pair_cost(const HeadBits& swa) const;
};

enum class SimulatedSplit { calibration, test };

class SimulatedObjective : public Objective {
 public:
  SimulatedObjective(std::shared_ptr<const SimulatedModel> m, SimulatedSplit split);
  int n_layers() const override { return m_->params.n_layers; }
  int n_heads() const override { return m_->params.n_heads; }
  MaskScore evaluate(const HeadBits& swa) override;
  std::string describe() const override;
  ObjectiveStats stats() const override { return stats_; }
  const SimulatedModel& model() const { return *m_; }

 private:
  std::shared_ptr<const SimulatedModel> m_;
  SimulatedSplit split_;
  std::vector<int> family_;  // per sample
  std::vector<double> u_;    // per sample
  std::vector<std::vector<float>> factor_;  // per sample, per head: m_{s,h}
  ObjectiveStats stats_;
};

// "synthetic:SHAPE[:SEED]" with SHAPE a Qwen3 shape name (true) — `synthetic:LxH[:SEED]` is the
// small planted objective of synthetic_objective.h (false).
bool is_simulator_spec(const std::string& spec);
struct SimulatorSpec {
  SimulatorParams params;
  uint64_t seed = 1;
};
SimulatorSpec parse_simulator_spec(const std::string& spec);

}  // namespace bosch::search
