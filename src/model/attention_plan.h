// Which attention each (layer, KV head) uses: full causal attention, or a sliding window of W
// recent tokens plus S sink tokens. Semantics (coded once, kernels/visibility.h):
//   query at absolute position i sees key j  iff  j <= i  and  (i - j < W  or  j < S).
// So W counts the current token: W = 1 sees only itself (plus sinks). All query heads of a GQA
// group follow their KV head.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bosch {

// The one SWA shape a search gives every converted head (the defaults of --window/--sinks).
struct SwaShape {
  int window = 64;  // W
  int sinks = 4;    // S
};

class AttentionPlan {
 public:
  AttentionPlan() = default;
  AttentionPlan(int n_layers, int n_kv_heads);  // all full

  static AttentionPlan full(int n_layers, int n_kv_heads);
  static AttentionPlan all_swa(int n_layers, int n_kv_heads, int window, int sinks);
  // swa[l * n_kv_heads + h] != 0 -> that head is SWA(window, sinks).
  static AttentionPlan from_bits(int n_layers, int n_kv_heads, const std::vector<uint8_t>& swa,
                                 int window, int sinks);

  int n_layers() const { return n_layers_; }
  int n_kv_heads() const { return n_kv_heads_; }
  bool is_swa(int layer, int head) const { return window_[idx(layer, head)] > 0; }
  int window(int layer, int head) const { return window_[idx(layer, head)]; }  // 0 = full
  int sinks(int layer, int head) const { return sinks_[idx(layer, head)]; }
  void set_full(int layer, int head);
  void set_swa(int layer, int head, int window, int sinks);
  // Per-layer arrays (length n_kv_heads) for kernels.
  const int32_t* windows(int layer) const { return &window_[idx(layer, 0)]; }
  const int32_t* sinks_of(int layer) const { return &sinks_[idx(layer, 0)]; }

  bool visible(int layer, int head, int64_t i, int64_t j) const;
  int count_swa() const;
  double swa_ratio() const;
  std::vector<uint8_t> bits() const;  // 1 = SWA
  std::string summary() const;        // e.g. "12/32 SWA (W=64, S=4)"

  bool operator==(const AttentionPlan& o) const = default;

 private:
  size_t idx(int l, int h) const { return static_cast<size_t>(l) * n_kv_heads_ + h; }
  int n_layers_ = 0, n_kv_heads_ = 0;
  std::vector<int32_t> window_, sinks_;
};

}  // namespace bosch
