#include "model/attention_plan.h"

#include <fmt/format.h>

#include "kernels/visibility.h"
#include "util/error.h"

namespace bosch {

AttentionPlan::AttentionPlan(int n_layers, int n_kv_heads)
    : n_layers_(n_layers), n_kv_heads_(n_kv_heads),
      window_(static_cast<size_t>(n_layers) * n_kv_heads, 0),
      sinks_(static_cast<size_t>(n_layers) * n_kv_heads, 0) {
  check(n_layers >= 0 && n_kv_heads >= 0, "attention plan: bad shape {}x{}", n_layers, n_kv_heads);
}

AttentionPlan AttentionPlan::full(int n_layers, int n_kv_heads) { return {n_layers, n_kv_heads}; }

AttentionPlan AttentionPlan::all_swa(int n_layers, int n_kv_heads, int window, int sinks) {
  AttentionPlan p(n_layers, n_kv_heads);
  for (int l = 0; l < n_layers; ++l)
    for (int h = 0; h < n_kv_heads; ++h) p.set_swa(l, h, window, sinks);
  return p;
}

AttentionPlan AttentionPlan::from_bits(int n_layers, int n_kv_heads, const std::vector<uint8_t>& swa,
                                       int window, int sinks) {
  check(swa.size() == static_cast<size_t>(n_layers) * n_kv_heads,
        "attention plan: {} mask bits given, the model has {} layers x {} KV heads = {}", swa.size(),
        n_layers, n_kv_heads, n_layers * n_kv_heads);
  AttentionPlan p(n_layers, n_kv_heads);
  for (int l = 0; l < n_layers; ++l)
    for (int h = 0; h < n_kv_heads; ++h)
      if (swa[p.idx(l, h)]) p.set_swa(l, h, window, sinks);
  return p;
}

void AttentionPlan::set_full(int layer, int head) {
  window_[idx(layer, head)] = 0;
  sinks_[idx(layer, head)] = 0;
}

void AttentionPlan::set_swa(int layer, int head, int window, int sinks) {
  check(window >= 1, "attention plan: window must be >= 1, got {}", window);
  check(sinks >= 0, "attention plan: sinks must be >= 0, got {}", sinks);
  window_[idx(layer, head)] = window;
  sinks_[idx(layer, head)] = sinks;
}

bool AttentionPlan::visible(int layer, int head, int64_t i, int64_t j) const {
  return kernels::sees_key(i, j, window(layer, head), sinks(layer, head));
}

int AttentionPlan::count_swa() const {
  int c = 0;
  for (int32_t w : window_) c += w > 0;
  return c;
}

double AttentionPlan::swa_ratio() const {
  return window_.empty() ? 0.0 : static_cast<double>(count_swa()) / window_.size();
}

std::vector<uint8_t> AttentionPlan::bits() const {
  std::vector<uint8_t> b(window_.size());
  for (size_t i = 0; i < b.size(); ++i) b[i] = window_[i] > 0;
  return b;
}

std::string AttentionPlan::summary() const {
  int w = 0, s = 0;
  for (size_t i = 0; i < window_.size(); ++i)
    if (window_[i] > 0) {
      w = window_[i];
      s = sinks_[i];
      break;
    }
  if (count_swa() == 0) return fmt::format("0/{} SWA (full attention)", window_.size());
  return fmt::format("{}/{} SWA (W={}, S={})", count_swa(), window_.size(), w, s);
}

}  // namespace bosch
