// Text generation with a KV cache: greedy (temperature 0) or sampled (temperature, top-p, seed).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "model/attention_plan.h"
#include "model/model.h"

namespace bosch {

struct SamplingParams {
  double temperature = 0.0;  // 0 = greedy (argmax, lowest id on ties)
  double top_p = 1.0;
  uint64_t seed = 0;
  int max_tokens = 128;
  std::vector<int32_t> stop_ids;  // generation ends after emitting one of these (not included)
};

// Prefills `prompt` into `cache` (under the cache's plan), then generates up to max_tokens.
// on_token (optional) is called for each new token as it is produced; returning false stops
// early.
std::vector<int32_t> generate(const Model& m, KVStore& cache, const std::vector<int32_t>& prompt,
                              const SamplingParams& p, const std::function<bool(int32_t)>& on_token = {});
// The same with a plain KVCache for `plan`, sized for prompt + max_tokens.
std::vector<int32_t> generate(const Model& m, const AttentionPlan& plan,
                              const std::vector<int32_t>& prompt, const SamplingParams& p,
                              const std::function<bool(int32_t)>& on_token = {});

// Picks the next token from logits[vocab] (greedy or sampled); rng state advanced in place.
int32_t sample_token(const float* logits, int vocab, const SamplingParams& p, uint64_t& rng_state);

}  // namespace bosch
