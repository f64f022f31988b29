// The mixture-of-experts feed-forward of qwen3moe (Hugging Face Qwen3MoeSparseMoeBlock):
// routing probabilities p = softmax(W_router x) over every expert; the k largest (ties: the
// lower index) are kept and, with norm_topk_prob, rescaled to sum 1; the output is
// sum_j p_j * down_j(silu(gate_j x) * up_j x). Tokens are grouped by expert, so a prefill runs
// one matmul per expert over the rows routed to it; a decode step multiplies one row by each
// chosen expert (the packed-block dot kernels). Experts are slices of the stored tensors.
#include <algorithm>

#include "kernels/ops.h"
#include "kernels/qmatmul.h"
#include "model/model.h"

namespace bosch {

namespace {

// Per token t: expert[t*k + j] and weight[t*k + j], j = 0..k-1, most probable first.
void route_tokens(const float* logits, int n, int n_expert, int k, bool renormalise, float* probs, int* expert,
                  float* weight) {
  for (int t = 0; t < n; ++t) {
    float* p = probs + static_cast<size_t>(t) * n_expert;
    std::copy(logits + static_cast<size_t>(t) * n_expert, logits + static_cast<size_t>(t + 1) * n_expert, p);
    softmax_inplace(p, n_expert);
    int* e = expert + static_cast<size_t>(t) * k;
    float* w = weight + static_cast<size_t>(t) * k;
    float sum = 0;
    for (int j = 0; j < k; ++j) {  // k passes of argmax: k and n_expert are small
      int best = -1;
      for (int i = 0; i < n_expert; ++i) {
        if (std::find(e, e + j, i) != e + j) continue;
        if (best < 0 || p[i] > p[best]) best = i;
      }
      e[j] = best;
      w[j] = p[best];
      sum += p[best];
    }
    if (renormalise)
      for (int j = 0; j < k; ++j) w[j] /= sum;
  }
}

}  // namespace

void Model::moe_mlp(int l, float* hidden, int n, Workspace& ws) const {
  const ExpertMatrices& X = mats_.layers[l].experts;
  const int d = cfg_.d_model, ne = cfg_.n_expert, k = cfg_.n_expert_used, ff = cfg_.d_ff_expert;
  float* xn = Workspace::grow(ws.xn, static_cast<size_t>(n) * d);
  float* logits = Workspace::grow(ws.router, static_cast<size_t>(n) * ne * 2);
  float* probs = logits + static_cast<size_t>(n) * ne;
  ws.route_expert.resize(static_cast<size_t>(n) * k);
  float* weight = Workspace::grow(ws.route_weight, static_cast<size_t>(n) * k);
  rmsnorm(hidden, w_.layers[l].ffn_norm.data(), xn, n, d, static_cast<float>(cfg_.norm_eps));
  matmul_nt(xn, X.router.v, logits, n);
  route_tokens(logits, n, ne, k, cfg_.norm_topk_prob, probs, ws.route_expert.data(), weight);

  // Rows of each expert, tokens ascending (counting sort of the n*k choices).
  ws.expert_begin.assign(ne + 1, 0);
  for (int e : ws.route_expert) ++ws.expert_begin[e + 1];
  for (int e = 0; e < ne; ++e) ws.expert_begin[e + 1] += ws.expert_begin[e];
  ws.expert_slot.resize(static_cast<size_t>(n) * k);
  std::vector<int> fill(ws.expert_begin.begin(), ws.expert_begin.end() - 1);
  for (int c = 0; c < n * k; ++c) ws.expert_slot[fill[ws.route_expert[c]]++] = c;  // c = token * k + j

  // Sum of the experts' outputs per token, in expert order (the same order for any n), then
  // added to the residual.
  float* acc = Workspace::grow(ws.moe_sum, static_cast<size_t>(n) * d);
  std::fill(acc, acc + static_cast<size_t>(n) * d, 0.0f);
  for (int e = 0; e < ne; ++e) {
    const int b = ws.expert_begin[e], m = ws.expert_begin[e + 1] - b;
    if (m == 0) continue;
    float* xe = Workspace::grow(ws.moe_in, static_cast<size_t>(m) * d);
    float* ye = Workspace::grow(ws.moe_out, static_cast<size_t>(m) * d);
    float* p[2];  // gate, up (workspace.h: the attention's buffer, dead by now)
    ws.layer_rows({static_cast<size_t>(m) * ff, static_cast<size_t>(m) * ff}, p);
    float *gate = p[0], *up = p[1];
    for (int r = 0; r < m; ++r) {
      const int t = ws.expert_slot[b + r] / k;
      std::copy(xn + static_cast<size_t>(t) * d, xn + static_cast<size_t>(t + 1) * d, xe + static_cast<size_t>(r) * d);
    }
    matmul_nt_shared_x(xe, {{X.gate[e].v, gate}, {X.up[e].v, up}}, m);
    swiglu(gate, up, gate, static_cast<int64_t>(m) * ff);
    matmul_nt(gate, X.down[e].v, ye, m);
    for (int r = 0; r < m; ++r) {
      const int c = ws.expert_slot[b + r], t = c / k;
      const float w = weight[c];
      float* a = acc + static_cast<size_t>(t) * d;
      const float* y = ye + static_cast<size_t>(r) * d;
      for (int i = 0; i < d; ++i) a[i] += w * y[i];
    }
  }
  for (size_t i = 0; i < static_cast<size_t>(n) * d; ++i) hidden[i] += acc[i];
}

}  // namespace bosch
