// The forward pass: pre-norm decoder layers (attention with a per-KV-head plan, SwiGLU MLP).
#include "model/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "kernels/attention.h"
#include "kernels/ops.h"
#include "kernels/qmatmul.h"
#include "model/identity.h"
#include "model/kv_cache.h"
#include "model/validate_weights.h"
#include "util/error.h"
#include "util/parallel.h"

namespace bosch {

namespace {

// RoPE inverse frequencies, with Llama-3 frequency scaling when configured.
std::vector<float> rope_inv_freq(const ModelConfig& c) {
  const int half = c.head_dim / 2;
  std::vector<float> f(half);
  for (int i = 0; i < half; ++i) {
    double freq = std::pow(c.rope_theta, -2.0 * i / c.head_dim);
    if (c.rope_scaling.enabled) {
      const auto& s = c.rope_scaling;
      double old_ctx = static_cast<double>(s.original_max_position);
      double low_wavelen = old_ctx / s.low_freq_factor;
      double high_wavelen = old_ctx / s.high_freq_factor;
      double wavelen = 2 * M_PI / freq;
      if (wavelen > low_wavelen) {
        freq /= s.factor;
      } else if (wavelen >= high_wavelen) {
        double smooth = (old_ctx / wavelen - s.low_freq_factor) /
                        (s.high_freq_factor - s.low_freq_factor);
        freq = (1 - smooth) * freq / s.factor + smooth * freq;
      }
    }
    f[i] = static_cast<float>(freq);
  }
  return f;
}

void add_bias(float* y, const std::vector<float>& b, int rows) {
  if (b.empty()) return;
  const int n = static_cast<int>(b.size());
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < n; ++j) y[static_cast<size_t>(r) * n + j] += b[j];
}

}  // namespace

Model::Model(ModelConfig cfg, ModelWeights w, std::string source)
    : cfg_(std::move(cfg)), w_(std::move(w)), float_weights_(true), source_(std::move(source)) {
  cfg_.validate(source_);
  mats_ = f32_matrices(cfg_, w_, source_);
  init();
}

Model::Model(ModelConfig cfg, ModelWeights small, ModelMatrices mats, std::string source)
    : cfg_(std::move(cfg)), w_(std::move(small)), mats_(std::move(mats)), source_(std::move(source)) {
  cfg_.validate(source_);
  init();
}

void Model::init() {
  validate_weights(cfg_, w_, mats_, source_);
  inv_freq_ = rope_inv_freq(cfg_);
  identity_ = model_identity(cfg_, mats_);
}

const ModelWeights& Model::weights() const {
  if (float_weights_) return w_;
  std::call_once(expand_once_, [&] {
    auto out = std::make_unique<ModelWeights>(w_);
    auto floats = [](const WeightMatrix& m) {
      std::vector<float> f(static_cast<size_t>(m.v.rows * m.v.cols));
      to_f32(m.v.type, m.v.data, f.data(), f.size());
      return f;
    };
    out->tok_embd = floats(mats_.tok_embd);
    if (!mats_.lm_head.empty()) out->lm_head = floats(mats_.lm_head);
    for (size_t l = 0; l < mats_.layers.size(); ++l) {
      const auto& M = mats_.layers[l];
      auto& L = out->layers[l];
      L.wq = floats(M.wq), L.wk = floats(M.wk), L.wv = floats(M.wv), L.wo = floats(M.wo);
      L.w_gate = floats(M.w_gate), L.w_up = floats(M.w_up), L.w_down = floats(M.w_down);
      if (M.experts.router.empty()) continue;
      L.w_router = floats(M.experts.router);
      auto stacked = [&](const std::vector<WeightMatrix>& ex) {
        std::vector<float> all;
        for (const auto& e : ex) {
          const auto f = floats(e);
          all.insert(all.end(), f.begin(), f.end());
        }
        return all;
      };
      L.w_gate_exps = stacked(M.experts.gate), L.w_up_exps = stacked(M.experts.up);
      L.w_down_exps = stacked(M.experts.down);
    }
    expanded_ = std::move(out);
  });
  return *expanded_;
}

namespace {

// Every linear weight (the experts of MoE layers too; the empty dense MLP of those left out).
std::vector<const WeightMatrix*> all_matrices(const ModelMatrices& mats) {
  std::vector<const WeightMatrix*> all = {&mats.tok_embd};
  if (!mats.lm_head.empty()) all.push_back(&mats.lm_head);
  for (const auto& M : mats.layers) {
    for (const auto* t : {&M.wq, &M.wk, &M.wv, &M.wo, &M.w_gate, &M.w_up, &M.w_down})
      if (!t->empty()) all.push_back(t);
    if (M.experts.router.empty()) continue;
    all.push_back(&M.experts.router);
    for (const auto* ex : {&M.experts.gate, &M.experts.up, &M.experts.down})
      for (const auto& e : *ex) all.push_back(&e);
  }
  return all;
}

}  // namespace

size_t Model::matrix_bytes() const {
  size_t b = 0;
  for (const WeightMatrix* m : all_matrices(mats_)) b += m->v.bytes();
  return b;
}

Model::WeightSummary Model::weight_summary() const {
  WeightSummary ws;
  std::vector<const void*> file_ptrs;
  size_t expert_bytes = 0;  // a decode step reads n_expert_used of n_expert experts per layer
  for (const auto& M : mats_.layers)
    for (const auto* ex : {&M.experts.gate, &M.experts.up, &M.experts.down})
      for (const auto& e : *ex) expert_bytes += e.v.bytes();
  for (const WeightMatrix* m : all_matrices(mats_)) {
    const std::string name = dtype_name(m->v.type);
    auto it = std::find_if(ws.types.begin(), ws.types.end(), [&](const auto& e) { return e.first == name; });
    if (it == ws.types.end()) it = ws.types.insert(ws.types.end(), {name, {0, 0}});
    it->second.first += 1;
    it->second.second += m->v.bytes();
    if (float_weights_) continue;  // the float32 vectors of w_ (counted below)
    (m->owned ? ws.owned : ws.from_file) += m->v.bytes();
    if (!m->owned) file_ptrs.push_back(m->v.data);
  }
  ws.pages = page_report(std::move(file_ptrs));
  auto vec_bytes = [](const std::vector<float>& v) { return v.size() * sizeof(float); };
  ws.small_f32 = vec_bytes(w_.out_norm);
  for (const auto& L : w_.layers)
    for (const auto* t : {&L.attn_norm, &L.bq, &L.bk, &L.bv, &L.q_norm, &L.k_norm, &L.ffn_norm}) ws.small_f32 += vec_bytes(*t);
  if (float_weights_) ws.owned = matrix_bytes();
  ws.decode_bytes = matrix_bytes() - mats_.tok_embd.v.bytes() + mats_.tok_embd.v.row_bytes() +
                    (mats_.lm_head.empty() ? mats_.tok_embd.v.bytes() : 0);
  if (cfg_.is_moe()) ws.decode_bytes -= expert_bytes - expert_bytes / cfg_.n_expert * cfg_.n_expert_used;
  return ws;
}

void Model::embed(const int32_t* tokens, int n, float* hidden) const {
  const int d = cfg_.d_model;
  for (int i = 0; i < n; ++i) {
    check(tokens[i] >= 0 && tokens[i] < cfg_.vocab_size, "token id {} at position {} is outside the vocabulary of {}",
          tokens[i], i, cfg_.vocab_size);
    get_row(mats_.tok_embd.v, tokens[i], hidden + static_cast<size_t>(i) * d);
  }
}

void Model::attention_inputs(int l, const float* hidden, int n, int64_t pos0, float* q, float* k,
                             float* v, Workspace* ws) const {
  Workspace local;
  Workspace& w = ws ? *ws : local;
  float* xn = Workspace::grow(w.xn, static_cast<size_t>(n) * cfg_.d_model);
  rmsnorm(hidden, w_.layers[l].attn_norm.data(), xn, n, cfg_.d_model, static_cast<float>(cfg_.norm_eps));
  project_qkv(l, xn, n, pos0, q, k, v);
}

void Model::project_qkv(int l, const float* xn, int n, int64_t pos0, float* q, float* k, float* v) const {
  const auto& M = mats_.layers[l];
  matmul_nt_shared_x(xn, {{M.wq.v, q}, {M.wk.v, k}, {M.wv.v, v}}, n);
  finish_q(l, n, pos0, q);
  finish_kv(l, n, pos0, k, v);
}

void Model::project_q(int l, const float* xn, int n, int64_t pos0, float* q) const {
  matmul_nt(xn, mats_.layers[l].wq.v, q, n);
  finish_q(l, n, pos0, q);
}

void Model::project_kv(int l, const float* xn, int n, int64_t pos0, float* k, float* v) const {
  matmul_nt_shared_x(xn, {{mats_.layers[l].wk.v, k}, {mats_.layers[l].wv.v, v}}, n);
  finish_kv(l, n, pos0, k, v);
}

void Model::finish_q(int l, int n, int64_t pos0, float* q) const {
  const auto& L = w_.layers[l];
  const int hd = cfg_.head_dim, nh = cfg_.n_heads;
  add_bias(q, L.bq, n);
  if (cfg_.qk_norm) rmsnorm(q, L.q_norm.data(), q, n * nh, hd, static_cast<float>(cfg_.norm_eps));
  rope_rotate_half(q, n, pos0, nh, hd, static_cast<int64_t>(nh) * hd, inv_freq_.data());
}

void Model::finish_kv(int l, int n, int64_t pos0, float* k, float* v) const {
  const auto& L = w_.layers[l];
  const int hd = cfg_.head_dim, nkv = cfg_.n_kv_heads;
  add_bias(k, L.bk, n);
  add_bias(v, L.bv, n);
  if (cfg_.qk_norm) rmsnorm(k, L.k_norm.data(), k, n * nkv, hd, static_cast<float>(cfg_.norm_eps));
  rope_rotate_half(k, n, pos0, nkv, hd, static_cast<int64_t>(nkv) * hd, inv_freq_.data());
}

void Model::mlp(int l, float* hidden, int n, Workspace& ws) const {
  if (cfg_.is_moe()) return moe_mlp(l, hidden, n, ws);
  const auto& M = mats_.layers[l];
  const int d = cfg_.d_model, ff = cfg_.d_ff;
  float* xn = Workspace::grow(ws.xn, static_cast<size_t>(n) * d);
  float* p[2];  // gate, up: in the buffer of the attention's q..att, dead by now (workspace.h)
  ws.layer_rows({static_cast<size_t>(n) * ff, static_cast<size_t>(n) * ff}, p);
  float *gate = p[0], *up = p[1];
  rmsnorm(hidden, w_.layers[l].ffn_norm.data(), xn, n, d, static_cast<float>(cfg_.norm_eps));
  matmul_nt_shared_x(xn, {{M.w_gate.v, gate}, {M.w_up.v, up}}, n);
  swiglu(gate, up, gate, static_cast<int64_t>(n) * ff);
  matmul_nt(gate, M.w_down.v, hidden, n, /*accumulate=*/true);
}

void Model::layer(int l, float* hidden, int n, int64_t pos0, const AttentionPlan& plan, KVStore* cache,
                  Workspace& ws, int row0) const {
  const int d = cfg_.d_model, qdim = cfg_.n_heads * cfg_.head_dim, kvdim = cfg_.n_kv_heads * cfg_.head_dim;
  const int nq = n - row0;  // rows whose output is computed
  float* xn = Workspace::grow(ws.xn, static_cast<size_t>(n) * d);
  float* p[4];  // q, k, v, att; the MLP reuses their buffer (workspace.h)
  const size_t q_n = static_cast<size_t>(nq) * qdim, kv_n = static_cast<size_t>(n) * kvdim;
  ws.layer_rows({q_n, kv_n, kv_n, q_n}, p);
  float *q = p[0], *k = p[1], *v = p[2], *att = p[3];
  float* out = hidden + static_cast<size_t>(row0) * d;

  // attention
  rmsnorm(hidden, w_.layers[l].attn_norm.data(), xn, n, d, static_cast<float>(cfg_.norm_eps));
  if (row0 == 0) {
    project_qkv(l, xn, n, pos0, q, k, v);
  } else {
    project_q(l, xn + static_cast<size_t>(row0) * d, nq, pos0 + row0, q);
    project_kv(l, xn, n, pos0, k, v);
  }
  if (cache) {
    check(row0 == 0, "a forward with a KV cache computes every row");
    cache->attend(l, q, k, v, att, n, pos0);
  } else {
    check(pos0 == 0, "forward without a KV cache must start at position 0, got {}", pos0);
    attention(dense_attention_args(q, k, v, att, nq, row0, cfg_.n_heads, cfg_.n_kv_heads, cfg_.head_dim,
                                   plan.windows(l), plan.sinks_of(l)));
  }
  matmul_nt(att, mats_.layers[l].wo.v, out, nq, /*accumulate=*/true);

  // feed-forward
  mlp(l, out, nq, ws);
}

void Model::check_plan(const AttentionPlan& plan) const {
  check(plan.n_layers() == cfg_.n_layers && plan.n_kv_heads() == cfg_.n_kv_heads,
        "attention plan is {} layers x {} KV heads, the model has {} x {}", plan.n_layers(),
        plan.n_kv_heads(), cfg_.n_layers, cfg_.n_kv_heads);
}

void Model::forward_layers(int l_begin, int l_end, float* hidden, int n, int64_t pos0,
                           const AttentionPlan& plan, KVStore* cache, Workspace* ws) const {
  check_plan(plan);
  check(0 <= l_begin && l_begin <= l_end && l_end <= cfg_.n_layers, "bad layer range [{}, {})",
        l_begin, l_end);
  Workspace local;
  for (int l = l_begin; l < l_end; ++l) layer(l, hidden, n, pos0, plan, cache, ws ? *ws : local);
}

void Model::logits(const float* hidden, const int* rows, int n_rows, float* out, Workspace* ws) const {
  const int d = cfg_.d_model;
  Workspace local;
  float* xn = Workspace::grow((ws ? *ws : local).xn, static_cast<size_t>(n_rows) * d);
  for (int r = 0; r < n_rows; ++r)
    rmsnorm(hidden + static_cast<size_t>(rows[r]) * d, w_.out_norm.data(), xn + static_cast<size_t>(r) * d, 1, d,
            static_cast<float>(cfg_.norm_eps));
  matmul_nt(xn, mats_.output().v, out, n_rows);
}

std::vector<float> Model::forward_all(const std::vector<int32_t>& tokens, const AttentionPlan& plan) const {
  const int n = static_cast<int>(tokens.size());
  std::vector<float> hidden(static_cast<size_t>(n) * cfg_.d_model);
  embed(tokens.data(), n, hidden.data());
  forward_layers(0, cfg_.n_layers, hidden.data(), n, 0, plan);
  std::vector<int> rows(n);
  for (int i = 0; i < n; ++i) rows[i] = i;
  std::vector<float> out(static_cast<size_t>(n) * cfg_.vocab_size);
  logits(hidden.data(), rows.data(), n, out.data());
  return out;
}

std::vector<float> Model::forward_next(const std::vector<int32_t>& new_tokens, KVStore& cache) const {
  const int n = static_cast<int>(new_tokens.size());
  check(n > 0, "forward_next: no tokens given");
  const int64_t pos0 = cache.length();
  std::optional<Int8Decode> decode;  // one token: llama.cpp's decode arithmetic (kernels/qmatmul.h)
  std::optional<SpinningPool> spin;  // and its short back-to-back products (util/parallel.h)
  if (n == 1) decode.emplace(), spin.emplace();
  std::vector<float> hidden(static_cast<size_t>(n) * cfg_.d_model);
  embed(new_tokens.data(), n, hidden.data());
  forward_layers(0, cfg_.n_layers, hidden.data(), n, pos0, cache.plan(), &cache);
  cache.commit(pos0 + n);
  int last = n - 1;
  std::vector<float> out(cfg_.vocab_size);
  logits(hidden.data(), &last, 1, out.data());
  return out;
}

double Model::linear_flops(int n, int lm_rows) const {
  const double d = cfg_.d_model, hd = cfg_.head_dim, nh = cfg_.n_heads, nkv = cfg_.n_kv_heads;
  double per_tok = d * hd * (2 * nh + 2 * nkv) + cfg_.ffn_macs_per_token();
  return 2.0 * (per_tok * cfg_.n_layers * n + static_cast<double>(lm_rows) * d * cfg_.vocab_size);
}

}  // namespace bosch

namespace bosch {
void Model::set_rope_factors(const std::vector<float>& factors) {
  check(factors.size() == inv_freq_.size(), "{}: {} rope factors, expected {}", source_, factors.size(),
        inv_freq_.size());
  for (size_t i = 0; i < factors.size(); ++i) {
    check(factors[i] > 0, "{}: rope factor {} is {}, expected > 0", source_, i, factors[i]);
    inv_freq_[i] /= factors[i];
  }
}
}  // namespace bosch
