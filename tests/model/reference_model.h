// An independent, naive forward pass written from the model definitions (Hugging Face
// Llama/Qwen2/Qwen3/Qwen3-MoE modelling code), double precision, no shared kernels: the reference the
// engine's fast path is compared with.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "model/attention_plan.h"
#include "model/config.h"
#include "model/weights.h"

namespace bosch::reference {

inline std::vector<double> ref_rmsnorm(const std::vector<double>& x, const std::vector<float>& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  double inv = 1.0 / std::sqrt(ss / x.size() + eps);
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] * inv * w[i];
  return out;
}

// y = W x for W [out, in]
inline std::vector<double> ref_linear(const std::vector<float>& W, const std::vector<double>& x, size_t out) {
  std::vector<double> y(out, 0.0);
  const size_t in = x.size();
  for (size_t o = 0; o < out; ++o)
    for (size_t i = 0; i < in; ++i) y[o] += W[o * in + i] * x[i];
  return y;
}

// Qwen3-MoE feed-forward as Hugging Face's Qwen3MoeSparseMoeBlock defines it: softmax over every
// expert's router logit, the k most probable (stable order: the lower index first on ties),
// their probabilities rescaled to sum 1 when norm_topk_prob, the weighted sum of their SwiGLU
// outputs. Stacked expert weights: gate/up [n_expert, ff, d], down [n_expert, d, ff].
inline std::vector<double> ref_moe(const ModelConfig& c, const LayerWeights& L, const std::vector<double>& x) {
  const size_t E = c.n_expert, k = c.n_expert_used, ff = c.d_ff_expert, d = c.d_model;
  std::vector<double> p = ref_linear(L.w_router, x, E);
  const double mx = *std::max_element(p.begin(), p.end());
  double z = 0;
  for (double& v : p) z += (v = std::exp(v - mx));
  for (double& v : p) v /= z;
  std::vector<size_t> order(E);
  for (size_t e = 0; e < E; ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  double top = 0;
  for (size_t j = 0; j < k; ++j) top += p[order[j]];
  std::vector<double> out(d, 0.0);
  for (size_t j = 0; j < k; ++j) {
    const size_t e = order[j];
    const double w = c.norm_topk_prob ? p[e] / top : p[e];
    auto slice = [&](const std::vector<float>& all, size_t per) {
      return std::vector<float>(all.begin() + e * per, all.begin() + (e + 1) * per);
    };
    auto g = ref_linear(slice(L.w_gate_exps, ff * d), x, ff), u = ref_linear(slice(L.w_up_exps, ff * d), x, ff);
    for (size_t i = 0; i < ff; ++i) g[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
    auto y = ref_linear(slice(L.w_down_exps, d * ff), g, d);
    for (size_t i = 0; i < d; ++i) out[i] += w * y[i];
  }
  return out;
}

// Logits [n, vocab] for every position.
inline std::vector<double> reference_forward(const ModelConfig& c, const ModelWeights& w,
                                             const std::vector<int32_t>& tokens, const AttentionPlan& plan) {
  const size_t n = tokens.size(), d = c.d_model, hd = c.head_dim, nh = c.n_heads, nkv = c.n_kv_heads;
  std::vector<std::vector<double>> h(n);
  for (size_t t = 0; t < n; ++t) h[t].assign(&w.tok_embd[tokens[t] * d], &w.tok_embd[tokens[t] * d] + d);
  for (int l = 0; l < c.n_layers; ++l) {
    const auto& L = w.layers[l];
    std::vector<std::vector<double>> q(n), k(n), v(n);
    for (size_t t = 0; t < n; ++t) {
      auto x = ref_rmsnorm(h[t], L.attn_norm, c.norm_eps);
      q[t] = ref_linear(L.wq, x, nh * hd);
      k[t] = ref_linear(L.wk, x, nkv * hd);
      v[t] = ref_linear(L.wv, x, nkv * hd);
      if (!L.bq.empty()) {
        for (size_t i = 0; i < q[t].size(); ++i) q[t][i] += L.bq[i];
        for (size_t i = 0; i < k[t].size(); ++i) k[t][i] += L.bk[i], v[t][i] += L.bv[i];
      }
      auto rope_heads = [&](std::vector<double>& vec, size_t heads, const std::vector<float>& norm) {
        for (size_t hh = 0; hh < heads; ++hh) {
          std::vector<double> x(vec.begin() + hh * hd, vec.begin() + (hh + 1) * hd);
          if (!norm.empty()) x = ref_rmsnorm(x, norm, c.norm_eps);
          for (size_t i = 0; i < hd / 2; ++i) {  // rotate-half
            double freq = std::pow(c.rope_theta, -2.0 * i / hd);
            if (c.rope_scaling.enabled) {  // Llama-3: transformers' _compute_llama3_parameters
              const auto& r = c.rope_scaling;
              double wavelen = 2 * M_PI / freq;
              double lo = r.original_max_position / r.low_freq_factor, hi = r.original_max_position / r.high_freq_factor;
              if (wavelen > lo) freq = freq / r.factor;
              else if (wavelen >= hi) {
                double sm = (r.original_max_position / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
                freq = (1 - sm) * freq / r.factor + sm * freq;
              }
            }
            double a = t * freq, x1 = x[i], x2 = x[i + hd / 2];
            vec[hh * hd + i] = x1 * std::cos(a) - x2 * std::sin(a);
            vec[hh * hd + i + hd / 2] = x2 * std::cos(a) + x1 * std::sin(a);
          }
        }
      };
      rope_heads(q[t], nh, L.q_norm);
      rope_heads(k[t], nkv, L.k_norm);
    }
    for (size_t t = 0; t < n; ++t) {
      std::vector<double> att(nh * hd, 0.0);
      for (size_t hh = 0; hh < nh; ++hh) {
        size_t g = hh / (nh / nkv);
        std::vector<double> s(t + 1, -INFINITY);
        double mx = -INFINITY;
        for (size_t j = 0; j <= t; ++j) {
          if (!plan.visible(l, static_cast<int>(g), t, j)) continue;
          double dot = 0;
          for (size_t i = 0; i < hd; ++i) dot += q[t][hh * hd + i] * k[j][g * hd + i];
          s[j] = dot / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, s[j]);
        }
        double z = 0;
        for (size_t j = 0; j <= t; ++j) z += std::isinf(s[j]) ? 0 : std::exp(s[j] - mx);
        for (size_t j = 0; j <= t; ++j) {
          if (std::isinf(s[j])) continue;
          double p = std::exp(s[j] - mx) / z;
          for (size_t i = 0; i < hd; ++i) att[hh * hd + i] += p * v[j][g * hd + i];
        }
      }
      auto o = ref_linear(L.wo, att, d);
      for (size_t i = 0; i < d; ++i) h[t][i] += o[i];
      auto x = ref_rmsnorm(h[t], L.ffn_norm, c.norm_eps);
      if (c.is_moe()) {
        auto y = ref_moe(c, L, x);
        for (size_t i = 0; i < d; ++i) h[t][i] += y[i];
        continue;
      }
      auto gate = ref_linear(L.w_gate, x, c.d_ff), up = ref_linear(L.w_up, x, c.d_ff);
      for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1 + std::exp(-gate[i])) * up[i];
      auto dn = ref_linear(L.w_down, gate, d);
      for (size_t i = 0; i < d; ++i) h[t][i] += dn[i];
    }
  }
  std::vector<double> logits(n * c.vocab_size);
  const auto& out = w.output();
  for (size_t t = 0; t < n; ++t) {
    auto x = ref_rmsnorm(h[t], w.out_norm, c.norm_eps);
    auto y = ref_linear(out, x, c.vocab_size);
    std::copy(y.begin(), y.end(), logits.begin() + t * c.vocab_size);
  }
  return logits;
}

// Test inputs the forward-pass tests share: n random ids below `vocab`, and a plan with every
// other KV head SWA (layer + head even), so full and SWA heads meet in every layer.
inline std::vector<int32_t> random_tokens(int n, int vocab, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(g() % vocab);
  return t;
}

inline AttentionPlan mixed_plan(const ModelConfig& c, int window, int sinks) {
  AttentionPlan p(c.n_layers, c.n_kv_heads);
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_kv_heads; ++h)
      if ((l + h) % 2 == 0) p.set_swa(l, h, window, sinks);
  return p;
}

}  // namespace bosch::reference
