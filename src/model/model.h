// A loaded transformer (llama / qwen2 / qwen3 / qwen3moe) and its forward pass with a per-KV-head
// attention plan. The forward is exposed per layer so that callers (scoring, the search) can
// cache hidden states of layers that did not change, and the LM head runs only on the rows
// that are scored.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/attention_plan.h"
#include "model/config.h"
#include "model/weights.h"
#include "model/workspace.h"
#include "util/file_bytes.h"

namespace bosch {

class KVStore;
struct ModelFile;

class Model {
 public:
  // MODEL is a .gguf file or a Hugging Face directory (config.json + safetensors).
  // hold: how the weight files are kept (util/file_bytes.h); `bosch info` maps, runs copy.
  static std::unique_ptr<Model> load(const std::string& path, FileHold hold = weights_file_hold());
  // From a file opened once (formats/model_source.h), which the caller also hands to the
  // tokenizer and mask readers.
  static std::unique_ptr<Model> load(const ModelFile& file);
  // From float32 weights (random models, tests): the matrices are F32 views of `w`.
  Model(ModelConfig cfg, ModelWeights w, std::string source);
  // From weights in their stored type: `small` holds the norms and biases (float32), its
  // matrices are empty; `mats` the linear weights (the loaders' path: memory-mapped files).
  Model(ModelConfig cfg, ModelWeights small, ModelMatrices mats, std::string source);

  const ModelConfig& config() const { return cfg_; }
  // Every weight as float32. Models loaded in another type expand a copy on the first call
  // (for writers and tests; the forward pass never needs it).
  const ModelWeights& weights() const;
  // The linear weights the forward pass uses, in their stored types.
  const ModelMatrices& matrices() const { return mats_; }
  // Bytes of the linear weights in their stored types.
  size_t matrix_bytes() const;
  // What the weights take in memory: per stored type the count and bytes of the matrices,
  // bytes mapped from the file, bytes of owned copies, float32 norms/biases.
  struct WeightSummary {
    std::vector<std::pair<std::string, std::pair<int, size_t>>> types;  // type -> (matrices, bytes)
    size_t from_file = 0, owned = 0, small_f32 = 0;  // views into the file's bytes; copies; vectors
    PageReport pages;  // where the file's bytes sit: mapped or copied, and in huge pages
    size_t decode_bytes = 0;  // weight bytes one decode step reads (one embedding row, every matrix)
  };
  WeightSummary weight_summary() const;
  const std::string& source() const { return source_; }   // path it was loaded from
  // Stable identity of the model's shape and weights (FNV-1a over config + weight sample);
  // written into mask files so a mask is not applied to another model.
  const std::string& identity() const { return identity_; }
  AttentionPlan full_plan() const { return AttentionPlan::full(cfg_.n_layers, cfg_.n_kv_heads); }

  // hidden[n, d] = embedding rows of tokens. Throws Error on an id outside the vocabulary.
  void embed(const int32_t* tokens, int n, float* hidden) const;
  // Runs layers [l_begin, l_end) in place on hidden[n, d] for positions pos0 .. pos0+n-1.
  // With cache == nullptr the sequence must start at pos0 == 0 (self-contained prefill, no
  // state kept); with a cache, K/V of the new tokens are stored in it and earlier positions are
  // read from it under the cache's own plan (`plan` then only has to have the model's shape; the
  // caller commits the cache after the last layer).
  // `ws`: scratch buffers for the call (workspace.h); a caller that runs many passes keeps one,
  // without it the call uses its own.
  void forward_layers(int l_begin, int l_end, float* hidden, int n, int64_t pos0,
                      const AttentionPlan& plan, KVStore* cache = nullptr, Workspace* ws = nullptr) const;
  // Search-only row mode (last_rows.cpp). Layer l (no KV cache, positions 0..n-1) with outputs
  // only for rows row0..n-1: keys and values still come from every row, queries, attention and
  // the MLP only from those rows; rows below row0 keep their input. For the last layer when only
  // its last rows are read (teacher-forced scoring). Same values as forward_layers on those rows.
  void forward_last_rows(int l, float* hidden, int n, int row0, const AttentionPlan& plan,
                         Workspace* ws = nullptr) const;
  // The share of a whole layer's multiply-adds that forward_last_rows(.., n, row0, ..) does.
  double layer_share_of_rows(int n, int row0) const;
  // The attention inputs of layer l for hidden[n, d] at positions pos0..: q [n, n_heads*hd],
  // k and v [n, n_kv_heads*hd], after q/k norm and RoPE (what the attention kernel sees).
  // For analyses that need attention weights (static head scores).
  void attention_inputs(int l, const float* hidden, int n, int64_t pos0, float* q, float* k,
                        float* v, Workspace* ws = nullptr) const;
  // logits[r, vocab] for hidden rows `rows` (final RMSNorm + LM head on those rows only).
  void logits(const float* hidden, const int* rows, int n_rows, float* out, Workspace* ws = nullptr) const;

  // Whole forward pass: logits for every position [n, vocab] (tests, small inputs).
  std::vector<float> forward_all(const std::vector<int32_t>& tokens, const AttentionPlan& plan) const;
  // Logits of the last position only, using and extending `cache`, under the cache's plan
  // (generation). Commits the cache.
  std::vector<float> forward_next(const std::vector<int32_t>& new_tokens, KVStore& cache) const;

  // Divides the RoPE frequencies by per-frequency factors (GGUF rope_freqs.weight).
  void set_rope_factors(const std::vector<float>& factors);

  // Multiply-adds of the linear layers (incl. LM head on `lm_rows` rows) for n tokens.
  double linear_flops(int n, int lm_rows) const;

 private:
  // One decoder layer on hidden[n, d]: x += attention(norm(x)); x += mlp(norm(x)). The one layer
  // body: with row0 > 0 (forward_last_rows: no cache, pos0 0) only rows row0.. get an output,
  // their keys and values still coming from every row.
  void layer(int l, float* hidden, int n, int64_t pos0, const AttentionPlan& plan, KVStore* cache,
             Workspace& ws, int row0 = 0) const;
  void check_plan(const AttentionPlan& plan) const;  // Error unless it has this model's shape
  // q [n, n_heads*hd] of normed rows xn at positions pos0..; k, v likewise (bias, q/k norm, RoPE).
  void project_q(int l, const float* xn, int n, int64_t pos0, float* q) const;
  void project_kv(int l, const float* xn, int n, int64_t pos0, float* k, float* v) const;
  // Both at once (one parallel section for the three products in decode: qmatmul.h).
  void project_qkv(int l, const float* xn, int n, int64_t pos0, float* q, float* k, float* v) const;
  // What follows the products: bias, q/k norm, RoPE.
  void finish_q(int l, int n, int64_t pos0, float* q) const;
  void finish_kv(int l, int n, int64_t pos0, float* k, float* v) const;
  // hidden[n, d] += down(silu(gate x) * up x) with x = ffn_norm(hidden); MoE layers: moe_mlp.
  void mlp(int l, float* hidden, int n, Workspace& ws) const;
  // hidden[n, d] += the routed experts' weighted SwiGLU outputs (moe.cpp).
  void moe_mlp(int l, float* hidden, int n, Workspace& ws) const;
  void init();  // validate_weights + identity + RoPE frequencies
  ModelConfig cfg_;
  ModelWeights w_;
  ModelMatrices mats_;
  bool float_weights_ = false;  // w_ holds every matrix (first constructor)
  mutable std::once_flag expand_once_;
  mutable std::unique_ptr<ModelWeights> expanded_;
  std::string source_, identity_;
  std::vector<float> inv_freq_;  // RoPE inverse frequencies [head_dim/2] (with scaling)
};

}  // namespace bosch
