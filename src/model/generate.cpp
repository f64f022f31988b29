#include "model/generate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "model/kv_cache.h"
#include "util/error.h"
#include "util/splitmix.h"

namespace bosch {

namespace {
double uniform01(uint64_t& s) { return unit_double(splitmix64(s)); }
}  // namespace

int32_t sample_token(const float* logits, int vocab, const SamplingParams& p, uint64_t& rng) {
  if (p.temperature <= 0) {
    int best = 0;
    for (int t = 1; t < vocab; ++t)
      if (logits[t] > logits[best]) best = t;
    return best;
  }
  // Softmax at temperature, then nucleus (top-p): smallest set of most likely tokens whose
  // mass reaches top_p; ties broken by id so results are reproducible.
  std::vector<double> prob(vocab);
  float mx = *std::max_element(logits, logits + vocab);
  double sum = 0;
  for (int t = 0; t < vocab; ++t) sum += prob[t] = std::exp((logits[t] - mx) / p.temperature);
  for (auto& x : prob) x /= sum;
  std::vector<int> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return prob[a] > prob[b]; });
  double top_p = std::clamp(p.top_p, 1e-9, 1.0);
  double mass = 0;
  size_t keep = 0;
  while (keep < order.size() && (keep == 0 || mass < top_p)) mass += prob[order[keep++]];
  double r = uniform01(rng) * mass, acc = 0;
  for (size_t i = 0; i < keep; ++i) {
    acc += prob[order[i]];
    if (r < acc) return order[i];
  }
  return order[keep - 1];
}

std::vector<int32_t> generate(const Model& m, KVStore& cache, const std::vector<int32_t>& prompt,
                              const SamplingParams& p, const std::function<bool(int32_t)>& on_token) {
  check(!prompt.empty(), "generate: the prompt is empty (give at least BOS)");
  uint64_t rng = p.seed ^ 0x5eedull;
  std::vector<int32_t> out;
  std::vector<float> logits = m.forward_next(prompt, cache);
  for (int i = 0; i < p.max_tokens; ++i) {
    int32_t t = sample_token(logits.data(), m.config().vocab_size, p, rng);
    if (std::find(p.stop_ids.begin(), p.stop_ids.end(), t) != p.stop_ids.end()) break;
    out.push_back(t);
    if (on_token && !on_token(t)) break;
    if (i + 1 == p.max_tokens) break;
    logits = m.forward_next({t}, cache);
  }
  return out;
}

std::vector<int32_t> generate(const Model& m, const AttentionPlan& plan, const std::vector<int32_t>& prompt,
                              const SamplingParams& p, const std::function<bool(int32_t)>& on_token) {
  KVCache cache(m.config(), plan, static_cast<int64_t>(prompt.size()) + p.max_tokens + 1);
  return generate(m, cache, prompt, p, on_token);
}

}  // namespace bosch
