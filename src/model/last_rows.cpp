// The search's row mode: the last layer computed only for the rows that are scored (teacher-
// forced answers sit at the end of a long prompt). Keys and values still come from every row.
#include "model/model.h"
#include "util/error.h"

namespace bosch {

void Model::forward_last_rows(int l, float* hidden, int n, int row0, const AttentionPlan& plan,
                              Workspace* ws) const {
  check_plan(plan);
  check(0 <= l && l < cfg_.n_layers, "bad layer {}", l);
  check(0 <= row0 && row0 < n, "forward_last_rows: first row {} outside [0, {})", row0, n);
  Workspace local;
  layer(l, hidden, n, 0, plan, nullptr, ws ? *ws : local, row0);  // the one layer body, rows row0.. only
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
