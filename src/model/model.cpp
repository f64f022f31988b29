// The forward pass: pre-norm decoder layers (attention with a per-KV-head plan, SwiGLU MLP).
#include "model/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/ops.h"
#include "kernels/qmatmul.h"
#include "model/kv_cache.h"
#include "util/error.h"

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

uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  auto p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Hash of the config and a strided sample of every tensor: cheap, and different for any two
// models that differ in shape or training. Each sampled element is hashed as float32 (dequantised
// from its block), so a model has one identity whatever type its weights are held in.
uint64_t hash_tensor(uint64_t h, const WeightView& w) {
  const uint64_t n = static_cast<uint64_t>(w.rows * w.cols);
  h = fnv1a(h, &n, sizeof n);
  const size_t step = std::max<size_t>(1, n / 4096), block = dtype_block(w.type);
  float buf[256];
  for (size_t i = 0; i < n; i += step) {
    const size_t r = i / w.cols, c = i % w.cols, c0 = c / block * block;
    dequant_blocks(w.type, w.row(static_cast<int64_t>(r)) + dtype_bytes(w.type, c0), buf, 1);
    h = fnv1a(h, &buf[c - c0], sizeof(float));
  }
  return h;
}

WeightMatrix f32_matrix(const std::vector<float>& t, int64_t rows, int64_t cols) {
  return {WeightView{DType::F32, t.data(), rows, cols}, nullptr};
}

void add_bias(float* y, const std::vector<float>& b, int rows) {
  if (b.empty()) return;
  const int n = static_cast<int>(b.size());
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < n; ++j) y[static_cast<size_t>(r) * n + j] += b[j];
}

// Per-thread scratch, grown on demand and reused across calls (no allocation per layer).
struct Scratch {
  std::vector<float> xn, q, k, v, att, gate, up;
};
thread_local Scratch tls;

float* grow(std::vector<float>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace

Model::Model(ModelConfig cfg, ModelWeights w, std::string source)
    : cfg_(std::move(cfg)), w_(std::move(w)), float_weights_(true), source_(std::move(source)) {
  cfg_.validate(source_);
  const size_t d = cfg_.d_model, hd = cfg_.head_dim, nh = cfg_.n_heads, nkv = cfg_.n_kv_heads,
               ff = cfg_.d_ff, V = cfg_.vocab_size;
  auto expect = [&](const std::vector<float>& t, size_t n, const std::string& name) {
    check(t.size() == n, "{}: weight {} has {} values, expected {}", source_, name, t.size(), n);
  };
  expect(w_.tok_embd, V * d, "token embedding");
  if (!w_.lm_head.empty()) expect(w_.lm_head, V * d, "LM head");
  check(w_.layers.size() == static_cast<size_t>(cfg_.n_layers), "{}: {} layers of weights, config says {}",
        source_, w_.layers.size(), cfg_.n_layers);
  mats_.tok_embd = f32_matrix(w_.tok_embd, V, d);
  if (!w_.lm_head.empty()) mats_.lm_head = f32_matrix(w_.lm_head, V, d);
  for (int l = 0; l < cfg_.n_layers; ++l) {
    const auto& L = w_.layers[l];
    std::string p = "layer " + std::to_string(l) + " ";
    expect(L.wq, nh * hd * d, p + "q");
    expect(L.wk, nkv * hd * d, p + "k");
    expect(L.wv, nkv * hd * d, p + "v");
    expect(L.wo, d * nh * hd, p + "o");
    expect(L.w_gate, ff * d, p + "gate");
    expect(L.w_up, ff * d, p + "up");
    expect(L.w_down, d * ff, p + "down");
    mats_.layers.push_back({f32_matrix(L.wq, nh * hd, d), f32_matrix(L.wk, nkv * hd, d), f32_matrix(L.wv, nkv * hd, d),
                            f32_matrix(L.wo, d, nh * hd), f32_matrix(L.w_gate, ff, d), f32_matrix(L.w_up, ff, d),
                            f32_matrix(L.w_down, d, ff)});
  }
  init();
}

Model::Model(ModelConfig cfg, ModelWeights small, ModelMatrices mats, std::string source)
    : cfg_(std::move(cfg)), w_(std::move(small)), mats_(std::move(mats)), source_(std::move(source)) {
  cfg_.validate(source_);
  init();
}

void Model::init() {
  const int64_t d = cfg_.d_model, hd = cfg_.head_dim, nh = cfg_.n_heads, nkv = cfg_.n_kv_heads,
                ff = cfg_.d_ff, V = cfg_.vocab_size;
  auto expect = [&](const std::vector<float>& t, int64_t n, const std::string& name) {
    check(t.size() == static_cast<size_t>(n), "{}: weight {} has {} values, expected {}", source_, name, t.size(), n);
  };
  auto expect_m = [&](const WeightMatrix& m, int64_t rows, int64_t cols, const std::string& name) {
    check(m.v.data != nullptr && m.v.rows == rows && m.v.cols == cols, "{}: weight {} is [{}, {}], expected [{}, {}]",
          source_, name, m.v.rows, m.v.cols, rows, cols);
    check(cols % static_cast<int64_t>(dtype_block(m.v.type)) == 0, "{}: weight {} rows of {} are not whole {} blocks",
          source_, name, cols, dtype_name(m.v.type));
  };
  expect_m(mats_.tok_embd, V, d, "token embedding");
  expect(w_.out_norm, d, "output norm");
  if (!mats_.lm_head.empty()) expect_m(mats_.lm_head, V, d, "LM head");
  check(w_.layers.size() == static_cast<size_t>(cfg_.n_layers) && mats_.layers.size() == w_.layers.size(),
        "{}: {} layers of weights, config says {}", source_, w_.layers.size(), cfg_.n_layers);
  for (int l = 0; l < cfg_.n_layers; ++l) {
    const auto& L = w_.layers[l];
    const auto& M = mats_.layers[l];
    std::string p = "layer " + std::to_string(l) + " ";
    expect(L.attn_norm, d, p + "attention norm");
    expect_m(M.wq, nh * hd, d, p + "q");
    expect_m(M.wk, nkv * hd, d, p + "k");
    expect_m(M.wv, nkv * hd, d, p + "v");
    expect_m(M.wo, d, nh * hd, p + "o");
    if (cfg_.qkv_bias) {
      expect(L.bq, nh * hd, p + "q bias");
      expect(L.bk, nkv * hd, p + "k bias");
      expect(L.bv, nkv * hd, p + "v bias");
    }
    if (cfg_.qk_norm) {
      expect(L.q_norm, hd, p + "q norm");
      expect(L.k_norm, hd, p + "k norm");
    }
    expect(L.ffn_norm, d, p + "ffn norm");
    expect_m(M.w_gate, ff, d, p + "gate");
    expect_m(M.w_up, ff, d, p + "up");
    expect_m(M.w_down, d, ff, p + "down");
  }
  inv_freq_ = rope_inv_freq(cfg_);
  uint64_t h = 1469598103934665603ull;
  int dims[] = {cfg_.n_layers, cfg_.d_model, cfg_.n_heads, cfg_.n_kv_heads, cfg_.head_dim, cfg_.d_ff,
                cfg_.vocab_size};
  h = fnv1a(h, dims, sizeof dims);
  h = fnv1a(h, cfg_.arch.data(), cfg_.arch.size());
  h = hash_tensor(h, mats_.tok_embd.v);
  for (const auto& M : mats_.layers)
    for (const auto* t : {&M.wq, &M.wk, &M.wv, &M.wo, &M.w_gate, &M.w_up, &M.w_down}) h = hash_tensor(h, t->v);
  identity_ = fmt::format("{:016x}", h);
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
    }
    expanded_ = std::move(out);
  });
  return *expanded_;
}

size_t Model::matrix_bytes() const {
  size_t b = mats_.tok_embd.v.bytes() + (mats_.lm_head.empty() ? 0 : mats_.lm_head.v.bytes());
  for (const auto& M : mats_.layers)
    for (const auto* t : {&M.wq, &M.wk, &M.wv, &M.wo, &M.w_gate, &M.w_up, &M.w_down}) b += t->v.bytes();
  return b;
}

Model::WeightSummary Model::weight_summary() const {
  WeightSummary ws;
  std::vector<const WeightMatrix*> all = {&mats_.tok_embd};
  if (!mats_.lm_head.empty()) all.push_back(&mats_.lm_head);
  for (const auto& M : mats_.layers)
    for (const auto* t : {&M.wq, &M.wk, &M.wv, &M.wo, &M.w_gate, &M.w_up, &M.w_down}) all.push_back(t);
  for (const WeightMatrix* m : all) {
    const std::string name = dtype_name(m->v.type);
    auto it = std::find_if(ws.types.begin(), ws.types.end(), [&](const auto& e) { return e.first == name; });
    if (it == ws.types.end()) it = ws.types.insert(ws.types.end(), {name, {0, 0}});
    it->second.first += 1;
    it->second.second += m->v.bytes();
    if (float_weights_) continue;  // the float32 vectors of w_ (counted below)
    (m->owned ? ws.owned : ws.mapped) += m->v.bytes();
  }
  auto vec_bytes = [](const std::vector<float>& v) { return v.size() * sizeof(float); };
  ws.small_f32 = vec_bytes(w_.out_norm);
  for (const auto& L : w_.layers)
    for (const auto* t : {&L.attn_norm, &L.bq, &L.bk, &L.bv, &L.q_norm, &L.k_norm, &L.ffn_norm}) ws.small_f32 += vec_bytes(*t);
  if (float_weights_) ws.owned = matrix_bytes();
  ws.decode_bytes = matrix_bytes() - mats_.tok_embd.v.bytes() + mats_.tok_embd.v.row_bytes() +
                    (mats_.lm_head.empty() ? mats_.tok_embd.v.bytes() : 0);
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
                             float* v) const {
  project_qkv(l, hidden, n, pos0, 0, q, k, v);
}

// q for rows row0..n-1 only (q[0] is row row0), k and v for every row.
void Model::project_qkv(int l, const float* hidden, int n, int64_t pos0, int row0, float* q, float* k,
                        float* v) const {
  const auto& L = w_.layers[l];
  const auto& M = mats_.layers[l];
  const int d = cfg_.d_model, hd = cfg_.head_dim, nh = cfg_.n_heads, nkv = cfg_.n_kv_heads, nq = n - row0;
  float* xn = grow(tls.xn, static_cast<size_t>(n) * d);
  rmsnorm(hidden, L.attn_norm.data(), xn, n, d, static_cast<float>(cfg_.norm_eps));
  matmul_nt(xn + static_cast<size_t>(row0) * d, M.wq.v, q, nq);
  matmul_nt(xn, M.wk.v, k, n);
  matmul_nt(xn, M.wv.v, v, n);
  add_bias(q, L.bq, nq);
  add_bias(k, L.bk, n);
  add_bias(v, L.bv, n);
  if (cfg_.qk_norm) {
    const float eps = static_cast<float>(cfg_.norm_eps);
    rmsnorm(q, L.q_norm.data(), q, nq * nh, hd, eps);
    rmsnorm(k, L.k_norm.data(), k, n * nkv, hd, eps);
  }
  rope_rotate_half(q, nq, pos0 + row0, nh, hd, static_cast<int64_t>(nh) * hd, inv_freq_.data());
  rope_rotate_half(k, n, pos0, nkv, hd, static_cast<int64_t>(nkv) * hd, inv_freq_.data());
}

void Model::layer(int l, float* hidden, int n, int64_t pos0, const AttentionPlan& plan,
                  KVStore* cache, int row0) const {
  const auto& L = w_.layers[l];
  const auto& M = mats_.layers[l];
  const int d = cfg_.d_model, hd = cfg_.head_dim, nh = cfg_.n_heads, nkv = cfg_.n_kv_heads, ff = cfg_.d_ff;
  const int nq = n - row0;  // rows whose output is computed
  float* q = grow(tls.q, static_cast<size_t>(nq) * nh * hd);
  float* k = grow(tls.k, static_cast<size_t>(n) * nkv * hd);
  float* v = grow(tls.v, static_cast<size_t>(n) * nkv * hd);
  float* att = grow(tls.att, static_cast<size_t>(nq) * nh * hd);
  project_qkv(l, hidden, n, pos0, row0, q, k, v);

  if (cache) {
    check(row0 == 0, "a cached forward computes every row");
    cache->attend(l, q, k, v, att, n, pos0);
  } else {
    check(pos0 == 0, "forward without a KV cache must start at position 0, got {}", pos0);
    attention(dense_attention_args(q, k, v, att, nq, row0, nh, nkv, hd, plan.windows(l), plan.sinks_of(l)));
  }
  float* out = hidden + static_cast<size_t>(row0) * d;
  matmul_nt(att, M.wo.v, out, nq, /*accumulate=*/true);

  float* xn = grow(tls.xn, static_cast<size_t>(nq) * d);
  float* gate = grow(tls.gate, static_cast<size_t>(nq) * ff);
  float* up = grow(tls.up, static_cast<size_t>(nq) * ff);
  rmsnorm(out, L.ffn_norm.data(), xn, nq, d, static_cast<float>(cfg_.norm_eps));
  matmul_nt(xn, M.w_gate.v, gate, nq);
  matmul_nt(xn, M.w_up.v, up, nq);
  swiglu(gate, up, gate, static_cast<int64_t>(nq) * ff);
  matmul_nt(gate, M.w_down.v, out, nq, /*accumulate=*/true);
}

void Model::check_plan(const AttentionPlan& plan) const {
  check(plan.n_layers() == cfg_.n_layers && plan.n_kv_heads() == cfg_.n_kv_heads,
        "attention plan is {} layers x {} KV heads, the model has {} x {}", plan.n_layers(),
        plan.n_kv_heads(), cfg_.n_layers, cfg_.n_kv_heads);
}

void Model::forward_last_rows(int l, float* hidden, int n, int row0, const AttentionPlan& plan) const {
  check_plan(plan);
  check(0 <= l && l < cfg_.n_layers, "bad layer {}", l);
  check(0 <= row0 && row0 < n, "forward_last_rows: first row {} outside [0, {})", row0, n);
  layer(l, hidden, n, 0, plan, nullptr, row0);
}

double Model::layer_share_of_rows(int n, int row0) const {
  // Multiply-adds of a layer with all n rows vs with outputs only for rows row0.. (K/V projections
  // still take every row); attention counted over a causal triangle of full heads.
  const double d = cfg_.d_model, hd = cfg_.head_dim, nh = cfg_.n_heads, nkv = cfg_.n_kv_heads, ff = cfg_.d_ff;
  const double kv = 2 * d * nkv * hd, per_row = 2 * d * nh * hd + 3 * d * ff;
  auto attn = [&](double first, double last) {  // sum of visible keys for query rows [first, last)
    return (last * (last + 1) - first * (first + 1)) / 2 * 2 * hd * nh;
  };
  const double all = n * (kv + per_row) + attn(0, n);
  const double part = n * kv + (n - row0) * per_row + attn(row0, n);
  return part / all;
}

void Model::forward_layers(int l_begin, int l_end, float* hidden, int n, int64_t pos0,
                           const AttentionPlan& plan, KVStore* cache) const {
  check_plan(plan);
  check(0 <= l_begin && l_begin <= l_end && l_end <= cfg_.n_layers, "bad layer range [{}, {})",
        l_begin, l_end);
  for (int l = l_begin; l < l_end; ++l) layer(l, hidden, n, pos0, plan, cache);
}

void Model::logits(const float* hidden, const int* rows, int n_rows, float* out) const {
  const int d = cfg_.d_model;
  float* xn = grow(tls.xn, static_cast<size_t>(n_rows) * d);
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
  const double d = cfg_.d_model, hd = cfg_.head_dim, nh = cfg_.n_heads, nkv = cfg_.n_kv_heads, ff = cfg_.d_ff;
  double per_tok = d * hd * (2 * nh + 2 * nkv) + 3 * d * ff;
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
