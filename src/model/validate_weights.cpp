#include "model/validate_weights.h"

#include "util/error.h"

namespace bosch {

namespace {

struct Checker {
  const std::string& source;
  void vec(const std::vector<float>& t, int64_t n, const std::string& name) const {
    check(t.size() == static_cast<size_t>(n), "{}: weight {} has {} values, expected {}", source, name, t.size(), n);
  }
  void mat(const WeightMatrix& m, int64_t rows, int64_t cols, const std::string& name) const {
    check(m.v.data != nullptr && m.v.rows == rows && m.v.cols == cols, "{}: weight {} is [{}, {}], expected [{}, {}]",
          source, name, m.v.rows, m.v.cols, rows, cols);
    check(cols % static_cast<int64_t>(dtype_block(m.v.type)) == 0, "{}: weight {} rows of {} are not whole {} blocks",
          source, name, cols, dtype_name(m.v.type));
  }
};

WeightMatrix f32_matrix(const std::vector<float>& t, int64_t rows, int64_t cols) {
  return {WeightView{DType::F32, t.data(), rows, cols}, nullptr};
}

}  // namespace

void validate_weights(const ModelConfig& c, const ModelWeights& w, const ModelMatrices& mats,
                      const std::string& source) {
  const int64_t d = c.d_model, hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads, ff = c.d_ff, V = c.vocab_size;
  const Checker ck{source};
  ck.mat(mats.tok_embd, V, d, "token embedding");
  ck.vec(w.out_norm, d, "output norm");
  if (!mats.lm_head.empty()) ck.mat(mats.lm_head, V, d, "LM head");
  check(w.layers.size() == static_cast<size_t>(c.n_layers) && mats.layers.size() == w.layers.size(),
        "{}: {} layers of weights, config says {}", source, w.layers.size(), c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    const auto& L = w.layers[l];
    const auto& M = mats.layers[l];
    const std::string p = "layer " + std::to_string(l) + " ";
    ck.vec(L.attn_norm, d, p + "attention norm");
    ck.mat(M.wq, nh * hd, d, p + "q");
    ck.mat(M.wk, nkv * hd, d, p + "k");
    ck.mat(M.wv, nkv * hd, d, p + "v");
    ck.mat(M.wo, d, nh * hd, p + "o");
    if (c.qkv_bias) {
      ck.vec(L.bq, nh * hd, p + "q bias");
      ck.vec(L.bk, nkv * hd, p + "k bias");
      ck.vec(L.bv, nkv * hd, p + "v bias");
    }
    if (c.qk_norm) {
      ck.vec(L.q_norm, hd, p + "q norm");
      ck.vec(L.k_norm, hd, p + "k norm");
    }
    ck.vec(L.ffn_norm, d, p + "ffn norm");
    if (c.is_moe()) {
      const auto& X = M.experts;
      const int64_t fe = c.d_ff_expert;
      ck.mat(X.router, c.n_expert, d, p + "router");
      for (const auto* ex : {&X.gate, &X.up, &X.down})
        check(ex->size() == static_cast<size_t>(c.n_expert), "{}: {}has {} experts, config says {}", source, p,
              ex->size(), c.n_expert);
      for (int e = 0; e < c.n_expert; ++e) {
        const std::string pe = p + "expert " + std::to_string(e) + " ";
        ck.mat(X.gate[e], fe, d, pe + "gate");
        ck.mat(X.up[e], fe, d, pe + "up");
        ck.mat(X.down[e], d, fe, pe + "down");
      }
      continue;
    }
    ck.mat(M.w_gate, ff, d, p + "gate");
    ck.mat(M.w_up, ff, d, p + "up");
    ck.mat(M.w_down, d, ff, p + "down");
  }
}

ModelMatrices f32_matrices(const ModelConfig& c, const ModelWeights& w, const std::string& source) {
  const int64_t d = c.d_model, hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads, ff = c.d_ff, V = c.vocab_size;
  const Checker ck{source};
  ck.vec(w.tok_embd, V * d, "token embedding");
  if (!w.lm_head.empty()) ck.vec(w.lm_head, V * d, "LM head");
  check(w.layers.size() == static_cast<size_t>(c.n_layers), "{}: {} layers of weights, config says {}", source,
        w.layers.size(), c.n_layers);
  ModelMatrices m;
  m.tok_embd = f32_matrix(w.tok_embd, V, d);
  if (!w.lm_head.empty()) m.lm_head = f32_matrix(w.lm_head, V, d);
  for (int l = 0; l < c.n_layers; ++l) {
    const auto& L = w.layers[l];
    const std::string p = "layer " + std::to_string(l) + " ";
    ck.vec(L.wq, nh * hd * d, p + "q");
    ck.vec(L.wk, nkv * hd * d, p + "k");
    ck.vec(L.wv, nkv * hd * d, p + "v");
    ck.vec(L.wo, d * nh * hd, p + "o");
    m.layers.push_back({f32_matrix(L.wq, nh * hd, d), f32_matrix(L.wk, nkv * hd, d), f32_matrix(L.wv, nkv * hd, d),
                        f32_matrix(L.wo, d, nh * hd), {}, {}, {}, {}});
    auto& M = m.layers.back();
    if (c.is_moe()) {
      const int64_t E = c.n_expert, fe = c.d_ff_expert;
      ck.vec(L.w_router, E * d, p + "router");
      ck.vec(L.w_gate_exps, E * fe * d, p + "experts' gate");
      ck.vec(L.w_up_exps, E * fe * d, p + "experts' up");
      ck.vec(L.w_down_exps, E * d * fe, p + "experts' down");
      M.experts.router = f32_matrix(L.w_router, E, d);
      M.experts.gate = expert_slices(f32_matrix(L.w_gate_exps, E * fe, d), c.n_expert, fe);
      M.experts.up = expert_slices(f32_matrix(L.w_up_exps, E * fe, d), c.n_expert, fe);
      M.experts.down = expert_slices(f32_matrix(L.w_down_exps, E * d, fe), c.n_expert, d);
      continue;
    }
    ck.vec(L.w_gate, ff * d, p + "gate");
    ck.vec(L.w_up, ff * d, p + "up");
    ck.vec(L.w_down, d * ff, p + "down");
    M.w_gate = f32_matrix(L.w_gate, ff, d);
    M.w_up = f32_matrix(L.w_up, ff, d);
    M.w_down = f32_matrix(L.w_down, d, ff);
  }
  return m;
}

}  // namespace bosch
