#include "search/objectives/simulator.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/model_writer.h"
#include "search/core/rng.h"
#include "util/error.h"

namespace bosch::search {
namespace {

// Uniform [0, 1) and standard normal deviates from the integer stream (Box-Muller), so an
// instance is the same on every platform.
struct Draw {
  Rng rng;
  explicit Draw(uint64_t seed) : rng(seed) {}
  double u01() { return static_cast<double>(rng.next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * u01(); }
  double normal() {
    const double u = 1.0 - u01(), v = u01();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  int below(int n) { return static_cast<int>(rng.below(static_cast<uint64_t>(n))); }
};

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t s = a * 0x9E3779B97F4A7C15ull ^ b;
  return splitmix64(s);
}

constexpr const char* kPrefix = "synthetic:";

}  // namespace

nlohmann::json SimulatorParams::to_json() const {
  return {{"shape", shape},           {"n_layers", n_layers},
          {"n_heads", n_heads},       {"families", families},
          {"calib_samples", calib_samples}, {"test_samples", test_samples},
          {"retrieval_share", retrieval_share}, {"paths", {min_paths, max_paths}},
          {"max_chain", max_chain},   {"primary_strength", {primary_lo, primary_hi}},
          {"backup_strength", {backup_lo, backup_hi}}, {"floor", floor},
          {"local_scale", local_scale}, {"local_sigma", local_sigma},
          {"layer_sigma", layer_sigma}, {"family_sigma", family_sigma}, {"sample_sigma", sample_sigma},
          {"pair_share", pair_share}, {"pair_cost", {pair_lo, pair_hi}},
          {"logprob_weight", logprob_weight}};
}

const std::vector<std::string>& simulator_shapes() {
  static const std::vector<std::string> names = {"qwen3-1.7b", "qwen3-8b", "qwen3-14b", "qwen3-30b-a3b"};
  return names;
}

SimulatorParams simulator_shape(const std::string& name) {
  SimulatorParams p;
  p.shape = name;
  const auto& known = simulator_shapes();
  check(std::find(known.begin(), known.end(), name) != known.end(), "simulator shape '{}': expected one of {}",
        name, fmt::join(known, ", "));
  // The head grid of the real model, from the one table of Qwen3 shapes (make-random's --like).
  const std::string like = name.substr(6);  // after "qwen3-"
  const ModelConfig c = config_like(like == "30b-a3b" ? "qwen3moe" : "qwen3", like);
  p.n_layers = c.n_layers;
  p.n_heads = c.n_kv_heads;
  return p;
}

SimulatedModel SimulatedModel::draw(const SimulatorParams& p, uint64_t seed) {
  const int L = p.n_layers, H = p.n_heads, N = L * H, F = p.families;
  check(L > 0 && H > 0 && F > 0 && p.min_paths >= 1 && p.max_paths >= p.min_paths && p.max_chain >= 1,
        "simulator: bad parameters {}", p.to_json().dump());
  SimulatedModel m;
  m.params = p;
  m.seed = seed;
  Draw d(mix(seed, 0x51D0));

  // Retrieval pool: long-range heads in the middle and upper layers (the lowest 30% have none).
  const int pool = std::clamp(static_cast<int>(std::lround(p.retrieval_share * N)), std::min(N, 2), N);
  std::vector<uint8_t> taken(N, 0);
  while (static_cast<int>(m.retrieval_pool.size()) < pool) {
    const int l = std::min(L - 1, static_cast<int>(L * (0.3 + 0.7 * d.u01())));
    const int h = l * H + d.below(H);
    if (!taken[h]) taken[h] = 1, m.retrieval_pool.push_back(h);
  }
  m.paths.resize(F);
  for (int f = 0; f < F; ++f) {
    const int n_paths = p.min_paths + d.below(p.max_paths - p.min_paths + 1);
    for (int k = 0; k < n_paths; ++k) {
      Path path;
      const int chain = 1 + d.below(p.max_chain);
      for (int tries = 0; tries < 50 && static_cast<int>(path.heads.size()) < chain; ++tries) {
        const int h = m.retrieval_pool[d.below(pool)];
        const bool same_layer = std::any_of(path.heads.begin(), path.heads.end(), [&](int x) { return x / H == h / H; });
        if (!same_layer) path.heads.push_back(h);
      }
      std::sort(path.heads.begin(), path.heads.end());
      path.strength = k == 0 ? d.uniform(p.primary_lo, p.primary_hi) : d.uniform(p.backup_lo, p.backup_hi);
      m.paths[f].push_back(std::move(path));
    }
  }

  // Local costs: head x layer x family log-normal factors (the family factor has mean 1).
  std::vector<double> layer_factor(L), base(N);
  for (auto& x : layer_factor) x = std::exp(p.layer_sigma * d.normal());
  for (int h = 0; h < N; ++h) base[h] = p.local_scale * layer_factor[h / H] * std::exp(p.local_sigma * d.normal());
  m.local.assign(F, std::vector<double>(N));
  for (int f = 0; f < F; ++f)
    for (int h = 0; h < N; ++h)
      m.local[f][h] = base[h] * std::exp(p.family_sigma * d.normal() - 0.5 * p.family_sigma * p.family_sigma);

  // Interacting pairs: a partner in the same or a neighbouring layer.
  for (int h = 0; h < N; ++h) {
    if (d.u01() >= p.pair_share) continue;
    const int l = std::clamp(h / H + d.below(3) - 1, 0, L - 1);
    const int partner = l * H + d.below(H);
    if (partner == h) continue;
    m.pairs.push_back({h, partner, d.uniform(p.pair_lo, p.pair_hi) * (base[h] + base[partner])});
  }
  return m;
}

double SimulatedModel::pair_cost(const HeadBits& swa) const {
  double c = 0;
  for (const auto& pr : pairs)
    if (swa[pr.a] && swa[pr.b]) c += pr.cost;
  return c;
}

std::vector<double> SimulatedModel::retrieval(const HeadBits& swa) const {
  const int N = params.n_layers * params.n_heads;
  check(static_cast<int>(swa.size()) == N, "simulator: mask of {} bits for {} heads", swa.size(), N);
  std::vector<double> r(params.families);
  for (int f = 0; f < params.families; ++f) {
    double fail_all = 1;
    for (const auto& path : paths[f]) {
      bool works = true;
      for (int h : path.heads) works = works && !swa[h];
      if (works) fail_all *= 1 - path.strength;
    }
    r[f] = params.floor + (1 - params.floor) * (1 - fail_all);
  }
  return r;
}

std::vector<double> SimulatedModel::success(const HeadBits& swa) const {
  std::vector<double> p = retrieval(swa);
  const double pairs_swa = pair_cost(swa);
  for (int f = 0; f < params.families; ++f) {
    double cost = pairs_swa;
    for (size_t h = 0; h < swa.size(); ++h)
      if (swa[h]) cost += local[f][h];
    p[f] *= std::exp(-std::max(0.0, cost));
  }
  return p;
}

SimulatedObjective::SimulatedObjective(std::shared_ptr<const SimulatedModel> m, SimulatedSplit split)
    : m_(std::move(m)), split_(split) {
  const auto& p = m_->params;
  const int n = split == SimulatedSplit::calibration ? p.calib_samples : p.test_samples;
  check(n > 0, "simulator: {} samples", n);
  Draw d(mix(m_->seed, split == SimulatedSplit::calibration ? 0xCA1B : 0x7E57));
  const int N = p.n_layers * p.n_heads;
  const double sig = p.sample_sigma;
  for (int s = 0; s < n; ++s) {
    family_.push_back(s % p.families);
    u_.push_back(d.u01());
    std::vector<float> f(N);
    for (auto& x : f) x = static_cast<float>(std::exp(sig * d.normal() - 0.5 * sig * sig));
    factor_.push_back(std::move(f));
  }
}

MaskScore SimulatedObjective::evaluate(const HeadBits& swa) {
  const std::vector<double> ret = m_->retrieval(swa);
  const double pairs_swa = m_->pair_cost(swa);
  std::vector<int> on;  // the SWA heads
  for (size_t h = 0; h < swa.size(); ++h)
    if (swa[h]) on.push_back(static_cast<int>(h));
  MaskScore r;
  const double w = m_->params.logprob_weight;
  for (size_t s = 0; s < u_.size(); ++s) {
    const std::vector<double>& local = m_->local[family_[s]];
    const std::vector<float>& fac = factor_[s];
    double cost = pairs_swa;
    for (int h : on) cost += local[h] * fac[h];
    const double pf = ret[family_[s]] * std::exp(-std::max(0.0, cost));
    const double exact = u_[s] < pf ? 1.0 : 0.0;
    const double lp = std::log(std::max(pf, 1e-6));
    r.exact_rate += exact;
    r.mean_logprob += lp;
    r.per_sample.push_back(exact + w * lp);
  }
  const double n = static_cast<double>(u_.size());
  r.exact_rate /= n;
  r.mean_logprob /= n;
  r.value = r.exact_rate + w * r.mean_logprob;
  ++stats_.evaluations;
  return r;
}

std::string SimulatedObjective::describe() const {
  return fmt::format("simulator {} ({}x{}) seed {} {} ({} samples)", m_->params.shape, m_->params.n_layers,
                     m_->params.n_heads, m_->seed, split_ == SimulatedSplit::calibration ? "calibration" : "test",
                     u_.size());
}

bool is_simulator_spec(const std::string& spec) {
  if (!spec.starts_with(kPrefix)) return false;
  const std::string body = spec.substr(std::string(kPrefix).size());
  const std::string shape = body.substr(0, body.find(':'));
  return std::find(simulator_shapes().begin(), simulator_shapes().end(), shape) != simulator_shapes().end();
}

SimulatorSpec parse_simulator_spec(const std::string& spec) {
  check(is_simulator_spec(spec), "--objective {}: expected synthetic:SHAPE[:SEED] with SHAPE one of {}", spec,
        fmt::join(simulator_shapes(), ", "));
  const std::string body = spec.substr(std::string(kPrefix).size());
  const size_t colon = body.find(':');
  SimulatorSpec s;
  s.params = simulator_shape(body.substr(0, colon));
  if (colon != std::string::npos) {
    const std::string seed = body.substr(colon + 1);
    check(!seed.empty() && seed.size() <= 19 && seed.find_first_not_of("0123456789") == std::string::npos,
          "--objective {}: the seed '{}' is not a non-negative integer below 10^19", spec, seed);
    s.seed = std::stoull(seed);
  }
  return s;
}

}  // namespace bosch::search
