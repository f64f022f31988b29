// The search's row mode: the last layer computed only for the rows that are scored (teacher-
// forced answers sit at the end of a long prompt). Keys and values still come from every row.
#include "kernels/attention.h"
#include "kernels/ops.h"
#include "model/model.h"
#include "util/error.h"

namespace bosch {

void Model::forward_last_rows(int l, float* hidden, int n, int row0, const AttentionPlan& plan,
                              Workspace* ws) const {
  check_plan(plan);
  check(0 <= l && l < cfg_.n_layers, "bad layer {}", l);
  check(0 <= row0 && row0 < n, "forward_last_rows: first row {} outside [0, {})", row0, n);
  Workspace local;
  Workspace& w = ws ? *ws : local;
  const int d = cfg_.d_model, qdim = cfg_.n_heads * cfg_.head_dim, kvdim = cfg_.n_kv_heads * cfg_.head_dim;
  const int nq = n - row0;  // rows whose output is computed
  float* xn = Workspace::grow(w.xn, static_cast<size_t>(n) * d);
  float* p[4];  // q, k, v, att; the MLP reuses their buffer (workspace.h)
  const size_t q_n = static_cast<size_t>(nq) * qdim, kv_n = static_cast<size_t>(n) * kvdim;
  w.layer_rows({q_n, kv_n, kv_n, q_n}, p);
  float *q = p[0], *k = p[1], *v = p[2], *att = p[3];
  float* out = hidden + static_cast<size_t>(row0) * d;

  rmsnorm(hidden, w_.layers[l].attn_norm.data(), xn, n, d, static_cast<float>(cfg_.norm_eps));
  project_q(l, xn + static_cast<size_t>(row0) * d, nq, row0, q);
  project_kv(l, xn, n, 0, k, v);
  attention(dense_attention_args(q, k, v, att, nq, row0, cfg_.n_heads, cfg_.n_kv_heads, cfg_.head_dim,
                                 plan.windows(l), plan.sinks_of(l)));
  matmul_nt(att, mats_.layers[l].wo.v, out, nq, /*accumulate=*/true);
  mlp(l, out, nq, w);
}

double Model::layer_share_of_rows(int n, int row0) const {
  // Multiply-adds of a layer with all n rows vs with outputs only for rows row0.. (K/V projections
  // still take every row); attention counted over a causal triangle of full heads.
  const double d = cfg_.d_model, hd = cfg_.head_dim, nh = cfg_.n_heads, nkv = cfg_.n_kv_heads;
  const double kv = 2 * d * nkv * hd, per_row = 2 * d * nh * hd + cfg_.ffn_macs_per_token();
  auto attn = [&](double first, double last) {  // sum of visible keys for query rows [first, last)
    return (last * (last + 1) - first * (first + 1)) / 2 * 2 * hd * nh;
  };
  const double all = n * (kv + per_row) + attn(0, n);
  const double part = n * kv + (n - row0) * per_row + attn(row0, n);
  return part / all;
}

}  // namespace bosch
